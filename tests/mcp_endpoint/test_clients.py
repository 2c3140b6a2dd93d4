"""agent-tools/mcp with the MCP clients agents are built on, each end to end against the real
server: list the tools, call a read tool, and eval twice with state kept across the calls.

- the official TypeScript SDK's client (ts_client.mjs, under .tools/node; test_ts_client.py
  checks every tool's results against its outputSchema with it);
- the MCP Inspector's CLI (npm, under .tools/node): a process per request, so a session per
  call, tied together by `conversation_id`;
- OpenAI's Agents SDK (`MCPServerStreamableHttp`, in this venv): one session;
- langchain-mcp-adapters (`MultiServerMCPClient`), in .tools/langchain-mcp, a venv of its own
  (it pins mcp<2): a session per tool call, tied by `conversation_id`.

fastmcp's client is in test_sessions.py and test_live_session.py; the Python SDK's, everywhere. Getting started documents each one's
settings; the ones used here are those.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NODE_MODULES = REPO / ".tools" / "node" / "node_modules"
TS_SDK = NODE_MODULES / "@modelcontextprotocol" / "sdk"
TS_CLIENT = Path(__file__).with_name("ts_client.mjs")
INSPECTOR = NODE_MODULES / ".bin" / "mcp-inspector"
LANGCHAIN_PYTHON = REPO / ".tools" / "langchain-mcp" / "bin" / "python"
LANGCHAIN_CLIENT = Path(__file__).with_name("langchain_client.py")
SET = {"code": "x = 5", "description": "set x for the next call"}
GET = {"code": "x * 2", "description": "read x set by the last call"}
WAIT = 120


@pytest.fixture
def hello(jp_root_dir):
    (jp_root_dir / "hello.py").write_text("print('hello')\n")


@pytest.fixture
def token(jp_serverapp):
    return jp_serverapp.identity_provider.token


async def run_process(*argv: str | Path) -> str:
    # Not the PYTHONPATH pytest-jupyter sets to this venv's path: the client's venv is its own.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    process = await asyncio.create_subprocess_exec(
        *map(str, argv), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env=env)
    out, err = await asyncio.wait_for(process.communicate(), WAIT)
    assert process.returncode == 0, (argv, out.decode()[-2000:], err.decode()[-2000:])
    return out.decode()


@pytest.mark.skipif(shutil.which("node") is None or not (TS_SDK / "package.json").exists(),
                    reason="node and the TypeScript MCP SDK (scripts/setup.sh installs it under "
                           ".tools/node)")
async def test_the_typescript_sdk(mcp_url, token, hello):
    calls = [["read", {"path": "hello.py"}], ["eval", SET], ["eval", GET]]
    seen = json.loads(await run_process("node", TS_CLIENT, TS_SDK, mcp_url(), token,
                                        json.dumps(calls)))
    assert {"read", "eval", "grep", "write"} <= {tool["name"] for tool in seen["tools"]}
    read, first, second = seen["calls"]
    assert read["isError"] is False and read["structuredContent"]["path"] == "hello.py", read
    assert first["isError"] is False, first
    assert second["structuredContent"]["result"] == "10", second  # one session, its kernel


@pytest.mark.skipif(shutil.which("node") is None or not INSPECTOR.exists(),
                    reason="node and the MCP Inspector (scripts/setup.sh installs it under "
                           ".tools/node)")
async def test_the_mcp_inspector_cli(mcp_url, token, hello, runtime_of):
    url = mcp_url(conversation_id="inspector")

    async def inspector(method: str, *more: str) -> dict:
        out = await run_process(INSPECTOR, "--cli", url, "--transport", "http",
                                "--header", f"Authorization: token {token}",
                                "--method", method, *more)
        return json.loads(out)

    listed = await inspector("tools/list")
    names = {tool["name"] for tool in listed["tools"]}
    assert {"read", "eval", "grep", "write"} <= names
    read = await inspector("tools/call", "--tool-name", "read", "--tool-arg", "path=hello.py")
    assert not read["isError"] and "print('hello')" in read["content"][0]["text"]
    assert read["structuredContent"]["path"] == "hello.py"

    def tool_args(args: dict) -> list[str]:
        return ["--tool-name", "eval", "--tool-arg", *(f"{k}={v}" for k, v in args.items())]

    first = await inspector("tools/call", *tool_args(SET))
    second = await inspector("tools/call", *tool_args(GET))
    assert not first["isError"], first
    assert second["content"][0]["text"] == "10", second  # another process, the same kernel
    [run] = [r for r in runtime_of.runs.values() if r.conversation_id == "inspector"]
    assert not run.closed


async def test_openai_agents_mcp_server_streamable_http(mcp_url, token, hello):
    from agents.mcp import MCPServerStreamableHttp

    # docs/getting-started.md's setting: its default (5 s a request) would end a call that
    # starts a kernel, or one that runs up to c.Runtime.max_call_seconds.
    server = MCPServerStreamableHttp(
        {"url": mcp_url(), "headers": {"Authorization": f"token {token}"}},
        client_session_timeout_seconds=60, name="agent-tools")
    async with server:
        names = {tool.name for tool in await server.list_tools()}
        assert {"read", "eval", "grep", "write"} <= names
        read = await server.call_tool("read", {"path": "hello.py"})
        assert not read.is_error and "print('hello')" in read.content[0].text
        assert (await server.call_tool("eval", SET)).is_error is False
        second = await server.call_tool("eval", GET)
        assert second.content[0].text == "10", second


@pytest.mark.skipif(not LANGCHAIN_PYTHON.exists(),
                    reason="langchain-mcp-adapters' venv (scripts/setup.sh makes .tools/langchain-mcp)")
async def test_langchain_mcp_adapters(mcp_url, token, hello, runtime_of):
    out = await run_process(LANGCHAIN_PYTHON, LANGCHAIN_CLIENT,
                            mcp_url(conversation_id="langchain"), token)
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen["mcp"].startswith("1."), seen  # the other end of the mcp range than this venv's
    assert {"read", "eval", "grep", "write"} <= set(seen["tools"])
    assert "print('hello')" in seen["read"]
    assert seen["first"] == "(no output)" and seen["second"] == "10", seen
    # Three tool calls, three MCP sessions, one run.
    [run] = [r for r in runtime_of.runs.values() if r.conversation_id == "langchain"]
    assert not run.closed
