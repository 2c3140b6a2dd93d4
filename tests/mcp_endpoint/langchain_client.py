"""langchain-mcp-adapters' `MultiServerMCPClient` against agent-tools/mcp, run by test_clients.py
with the Python of .tools/langchain-mcp (scripts/setup.sh): langchain-mcp-adapters pins mcp<2,
which the project's venv cannot have.

    python langchain_client.py URL TOKEN

Its `get_tools()` tools open an MCP session per call (as an agent built on them does), so the
URL names a `conversation_id`: the calls share one run, and its kernel. Prints one JSON object.
"""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version
from typing import Any

from langchain_mcp_adapters.client import MultiServerMCPClient


def text_of(answer: Any) -> str:
    """A tool's answer as the model reads it: a string, or content blocks."""
    if isinstance(answer, str):
        return answer
    return "".join(block.get("text", "") if isinstance(block, dict) else str(block)
                   for block in answer)


async def main(url: str, token: str) -> None:
    # The settings of docs/getting-started.md (the defaults, written out).
    client = MultiServerMCPClient({"agent-tools": {
        "transport": "streamable_http", "url": url,
        "headers": {"Authorization": f"token {token}"},
        "timeout": 30, "sse_read_timeout": 300}})
    tools = {tool.name: tool for tool in await client.get_tools()}
    read = await tools["read"].ainvoke({"path": "hello.py"})
    first = await tools["eval"].ainvoke({"code": "x = 5",
                                         "description": "set x for the next call"})
    second = await tools["eval"].ainvoke({"code": "x * 2",
                                          "description": "read x set by the last call"})
    print(json.dumps({"mcp": version("mcp"), "adapters": version("langchain-mcp-adapters"),
                      "tools": sorted(tools), "read": text_of(read), "first": text_of(first),
                      "second": text_of(second)}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
