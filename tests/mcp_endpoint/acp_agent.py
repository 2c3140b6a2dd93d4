"""A scripted ACP agent (no model), as jupyter-ai's personas launch one: `python acp_agent.py`.

At `session/new` it connects to every HTTP MCP server it was given and lists their tools; a
prompt is a JSON list of `{"tool", "args"}` calls, which it makes in order and reports as agent
messages (`tools: …`, then `<tool>: <text>` per call). Ending the process ends its MCP sessions.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import httpx2
from acp import PROTOCOL_VERSION, run_agent, update_agent_message_text
from acp.schema import InitializeResponse, NewSessionResponse, PromptResponse
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


class McpConnection:
    """One MCP client session, owned by a task of its own (anyio scopes stay in one task)."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        self.url, self.headers = url, headers
        self.tools: list[str] = []
        self._calls: asyncio.Queue[tuple[str, dict, asyncio.Future] | None] = asyncio.Queue()
        self._ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.ensure_future(self._own())

    async def ready(self) -> None:
        await self._ready

    async def call(self, tool: str, args: dict[str, Any]) -> Any:
        answer: asyncio.Future = asyncio.get_running_loop().create_future()
        await self._calls.put((tool, args, answer))
        return await answer

    async def close(self) -> None:
        await self._calls.put(None)
        await self._task

    async def _own(self) -> None:
        try:
            async with httpx2.AsyncClient(headers=self.headers, timeout=300) as http, \
                    streamable_http_client(self.url, http_client=http) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                self.tools = sorted(tool.name for tool in (await session.list_tools()).tools)
                self._ready.set_result(None)
                while (request := await self._calls.get()) is not None:
                    tool, args, answer = request
                    answer.set_result(await session.call_tool(tool, args))
        except Exception as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            raise


class ScriptedAgent:
    def __init__(self) -> None:
        self.sessions: dict[str, list[McpConnection]] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=PROTOCOL_VERSION)

    async def new_session(self, cwd: str, mcp_servers: list | None = None,
                          **kwargs: Any) -> NewSessionResponse:
        connections = [McpConnection(server.url, {h.name: h.value for h in server.headers})
                       for server in mcp_servers or [] if getattr(server, "type", None) == "http"]
        for connection in connections:
            await connection.ready()
        session_id = uuid.uuid4().hex
        self.sessions[session_id] = connections
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, session_id: str, prompt: list, **kwargs: Any) -> PromptResponse:
        [connection] = self.sessions[session_id]
        await self._say(session_id, "tools: " + ", ".join(connection.tools))
        for step in json.loads(prompt[0].text):
            result = await connection.call(step["tool"], step["args"])
            text = "\n".join(block.text for block in result.content if block.type == "text")
            await self._say(session_id, f"{step['tool']}: {text}")
        return PromptResponse(stop_reason="end_turn")

    async def _say(self, session_id: str, text: str) -> None:
        await self.conn.session_update(session_id=session_id, update=update_agent_message_text(text))

    async def close_all(self) -> None:
        for connections in self.sessions.values():
            for connection in connections:
                await connection.close()


async def main() -> None:
    agent = ScriptedAgent()
    try:
        await run_agent(agent)
    finally:
        await agent.close_all()


if __name__ == "__main__":
    asyncio.run(main())
