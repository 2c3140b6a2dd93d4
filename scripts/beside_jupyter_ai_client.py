"""Run by scripts/check_beside_jupyter_ai.py with the Python of a virtualenv that has jupyter-ai
and jupyter-agent-tools (and whichever `mcp` SDK jupyter-ai's stack allows): what jupyter-ai
makes of the documented `.jupyter/mcp_settings.json` entry, and an MCP round trip over it.

    python beside_jupyter_ai_client.py ROOT_DIR JUPYTER_SERVER_MCP_URL

1. jupyter-ai's own `PersonaManager`, made as jupyter-ai makes one for a chat (a `YChat` whose
   file is in ROOT_DIR), reads ROOT_DIR/.jupyter/mcp_settings.json; a persona's
   `get_mcp_settings()` (the entry plus its identity headers), cast to ACP's `McpServerHttp` as
   jupyter-ai's ACP client casts it for the agent, must hold our server. (The ACP personas need
   their agents' CLIs installed, so the persona is a local one: `.jupyter/personas/`, the way
   jupyter-ai loads a user's own personas; `get_mcp_settings` is BasePersona's, theirs too.)
2. with that URL (plus a `conversation_id`) and those headers, the installed `mcp` SDK's
   client: initialize, tools/list, a `read`, and `eval` twice in the session (a variable set
   by one call is read by the next), then a second session of the conversation reads it too;
3. jupyter-ai's own MCP server (jupyter_server_mcp, on a port of its own): initialize and
   tools/list, with the same SDK.

Prints one JSON line of what it found; exits non-zero (with the reason) on any failure.
"""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httpx
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

WAIT = 60
PERSONA = """
from jupyter_ai_persona_manager import BasePersona, PersonaDefaults


class AgentToolsCheckPersona(BasePersona):
    @property
    def defaults(self):
        return PersonaDefaults(name="Check", description="check_beside_jupyter_ai",
                               avatar_path="", system_prompt="")

    async def process_message(self, message):
        pass
"""


def documented_entry(root: Path) -> Any:
    """Our server as jupyter-ai's personas see it (`jupyter-agent-tools` in the settings)."""
    from acp.schema import HttpMcpServer as AcpMcpServerHttp
    from jupyter_ai_persona_manager.mcp_server_models import McpServerHttp
    from jupyter_ai_persona_manager.persona_manager import PersonaManager
    from jupyterlab_chat.ychat import YChat

    personas_dir = root / ".jupyter" / "personas"
    personas_dir.mkdir(exist_ok=True)
    (personas_dir / "agent_tools_check_persona.py").write_text(PERSONA)
    chat = YChat()
    chat.initial_path = "check.chat"  # at the root, as jupyter-ai's one-shot chats are
    manager = PersonaManager(chat=chat, root_dir=str(root), event_loop=asyncio.get_event_loop())
    settings = manager.get_mcp_settings()
    if settings is None:
        raise SystemExit(f"jupyter-ai read no MCP servers from {root}/.jupyter/mcp_settings.json")
    ours = [s for s in settings.mcp_servers
            if isinstance(s, McpServerHttp) and s.name == "jupyter-agent-tools"]
    if not ours:
        raise SystemExit(f"jupyter-ai's settings lack jupyter-agent-tools: {settings}")
    personas = list(manager.personas.values())
    if not personas:
        raise SystemExit("jupyter-ai made no personas")
    # What a persona hands its agent: the entry with its identity headers added, in ACP's model
    # (jupyter_ai_acp_client's DefaultAcpClient._get_mcp_servers).
    persona_settings = personas[0].get_mcp_settings()
    [entry] = [AcpMcpServerHttp(**s.model_dump()) for s in persona_settings.mcp_servers
               if isinstance(s, McpServerHttp) and s.name == "jupyter-agent-tools"]
    return entry


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def round_trip(url: str, headers: dict[str, str]) -> dict[str, Any]:
    """initialize, tools/list, read, eval twice; eval in a second session: what happened."""
    url = f"{url}{'&' if '?' in url else '?'}conversation_id=check"
    async with httpx.AsyncClient(headers=headers, timeout=WAIT) as http, \
            streamable_http_client(url, http_client=http) as streams, \
            ClientSession(streams[0], streams[1]) as session:
        init = await asyncio.wait_for(session.initialize(), WAIT)
        tools = sorted(tool.name for tool in (await session.list_tools()).tools)
        for needed in ("read", "eval", "grep"):
            if needed not in tools:
                raise SystemExit(f"tools/list lacks {needed}: {tools}")
        read = await asyncio.wait_for(session.call_tool("read", {"path": "hello.py"}), WAIT)
        if read.isError or "print('hello')" not in text_of(read):
            raise SystemExit(f"read hello.py: {read}")
        first = await asyncio.wait_for(session.call_tool("eval", {
            "code": "x = 5", "description": "set x for the next call"}), WAIT)
        second = await asyncio.wait_for(session.call_tool("eval", {
            "code": "x * 2", "description": "read x set by the last call"}), WAIT)
        if first.isError or second.isError or "10" not in text_of(second):
            raise SystemExit(f"eval state across calls: {first} / {second}")
    async with httpx.AsyncClient(headers=headers, timeout=WAIT) as http, \
            streamable_http_client(url, http_client=http) as streams, \
            ClientSession(streams[0], streams[1]) as session:
        await asyncio.wait_for(session.initialize(), WAIT)
        third = await asyncio.wait_for(session.call_tool("eval", {
            "code": "x + 1", "description": "read x in another session"}), WAIT)
        if third.isError or "6" not in text_of(third):
            raise SystemExit(f"eval state across the conversation's sessions: {third}")
    return {"server": init.serverInfo.name, "tools": len(tools)}


async def jupyter_server_mcp(url: str) -> int:
    """jupyter-ai's own MCP server answers with the same SDK: its tool count."""
    async with streamable_http_client(url) as streams, \
            ClientSession(streams[0], streams[1]) as session:
        await asyncio.wait_for(session.initialize(), WAIT)
        return len((await asyncio.wait_for(session.list_tools(), WAIT)).tools)


async def main(root: Path, server_mcp_url: str) -> None:
    entry = documented_entry(root)
    headers = {header.name: header.value for header in entry.headers}
    if not headers.get("Authorization", "").startswith("token jat_"):
        raise SystemExit(f"the entry's Authorization is not an agent token: {headers}")
    ours = await round_trip(entry.url, headers)
    theirs = await jupyter_server_mcp(server_mcp_url)
    print(json.dumps({"mcp": version("mcp"), "jupyter_ai": version("jupyter_ai"),
                      "agent_tools": ours, "identity_headers": sorted(headers),
                      "jupyter_server_mcp_tools": theirs}))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2]))
