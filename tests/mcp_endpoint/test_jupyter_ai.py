"""The jupyter-ai path: an ACP client hands our MCP endpoint to an ACP agent at session/new.

The ACP Python SDK (`agent-client-protocol`) is the client here, as jupyter-ai's ACP client
is in JupyterLab; the agent is a scripted process (acp_agent.py, no model). It connects to
the MCP server it was given (its own run), calls grep, ast_grep and ask_user, and the test
answers the card the way the JupyterLab panel does: as a human front end of the `lab` space.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from acp import PROTOCOL_VERSION, text_block
from acp.schema import AgentMessageChunk, HttpHeader, HttpMcpServer
from acp.stdio import spawn_agent_process
from tornado.httpclient import AsyncHTTPClient

AGENT = Path(__file__).with_name("acp_agent.py")
GETTING_STARTED = Path(__file__).parents[2] / "docs" / "getting-started.md"
WAIT = 120  # seconds: a bound on waits that should end, never an assertion


def documented_mcp_settings() -> dict[str, Any]:
    """The `.jupyter/mcp_settings.json` that the jupyter-ai section of Getting started has users write."""
    section = GETTING_STARTED.read_text().split("### jupyter-ai\n", 1)[1]
    return json.loads(section.split("```json\n", 1)[1].split("```", 1)[0])


class PanelClient:
    """The ACP client side: what the chat panel shows of the agent's messages."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentMessageChunk):
            self.messages.append(update.content.text)


async def test_an_acp_agent_gets_a_run_of_its_own(mcp_url, auth_headers, runtime_of, jp_root_dir):
    (jp_root_dir / "proj").mkdir()
    (jp_root_dir / "proj" / "shapes.py").write_text(
        "def area(side: float) -> float:\n    return side * side\n")
    client = PanelClient()
    panel = await runtime_of.connect_human("lab")
    # As jupyter-ai hands it over: the documented entry (this server's URL and token, the run in
    # proj) plus the identity headers the persona stamps on it.
    [entry] = documented_mcp_settings()["mcp_servers"]
    documented = HttpMcpServer.model_validate(entry)  # jupyter-ai's McpServerHttp is ACP's schema
    documented_url = urlsplit(documented.url)
    assert documented_url.path == "/agent-tools/mcp"
    url = mcp_url(**{**dict(parse_qsl(documented_url.query)), "cwd": "proj"})
    # An agent token, as Getting started has the user mint one (the user's own token mints it).
    minted = await AsyncHTTPClient().fetch(
        mcp_url("agent-tools/api/tokens"), method="POST", headers=auth_headers,
        body=json.dumps({"label": "jupyter-ai", "surface": "full", "approvals": "ask"}))
    token = json.loads(minted.body)["token"]
    headers = [HttpHeader(name=h.name, value=h.value.replace("<your agent token>", token))
               for h in documented.headers]
    assert headers == [HttpHeader(name="Authorization", value=f"token {token}")]
    headers += [HttpHeader(name="X-Jupyter-Chat-Id", value="chat.chat"),
                HttpHeader(name="X-JupyterAI-Persona-Id", value="claude")]
    server = HttpMcpServer(type="http", name=documented.name, url=url, headers=headers)
    script = [
        {"tool": "grep", "args": {"pattern": "return side"}},
        {"tool": "ast_grep", "args": {"pattern": "def $F($$$ARGS) -> float: $$$BODY",
                                      "language": "python"}},
        {"tool": "ask_user", "args": {"question": "Rename area?",
                                      "options": [{"label": "yes"}, {"label": "no"}]}},
    ]
    try:
        async with spawn_agent_process(lambda agent: client, sys.executable, str(AGENT)) as (conn, _):
            await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), WAIT)
            session = await asyncio.wait_for(
                conn.new_session(cwd=str(jp_root_dir / "proj"), mcp_servers=[server]), WAIT)
            turn = asyncio.ensure_future(conn.prompt(
                session_id=session.session_id, prompt=[text_block(json.dumps(script))]))
            card = await panel.next_card(timeout=WAIT)  # the card shows in the lab panel
            # The session's run, made at its first call.
            [run] = [r for r in runtime_of.runs.values() if r.options.origin.value == "mcp"]
            assert run.describe()["cwd"] == "proj" and run.space == "lab"
            assert card["question"] == "Rename area?" and card["run_id"] == run.id
            await panel.answer(card["id"], answer="yes")
            response = await asyncio.wait_for(turn, WAIT)
        assert response.stop_reason == "end_turn"
        tools, grep, ast_grep, asked = client.messages
        assert "grep" in tools and "ask_user" in tools
        assert grep.startswith("grep: ") and "shapes.py" in grep
        assert ast_grep.startswith("ast_grep: 1 match") and "shapes.py" in ast_grep
        assert asked == "ask_user: The user chose: yes"
    finally:
        await panel.close()
    for _ in range(WAIT * 10):  # the agent process ended, and with it its MCP session and run
        if run.closed:
            break
        await asyncio.sleep(0.1)
    assert run.closed
