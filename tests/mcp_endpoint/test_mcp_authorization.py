"""agent-tools/mcp is authorized by jupyter_server's authorizer, against `agent_tools:mcp`.

The server here has an authorizer that refuses the `agent_tools:mcp` resource to user `blocked`
(and nothing else): `blocked` may still use the HTTP API, but opens no MCP session.
"""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from jupyter_server.auth import Authorizer, IdentityProvider, User

from jupyter_agent_tools.mcp_endpoint.handlers import MCP_RESOURCE

BLOCKED_TOKEN = "token-of-a-user-without-mcp"


class TwoUsers(IdentityProvider):
    """BLOCKED_TOKEN is user `blocked`; the server's own token is its usual (anonymous) user."""

    async def get_user(self, handler: Any) -> User | None:
        if handler.request.headers.get("Authorization") == f"token {BLOCKED_TOKEN}":
            handler._token_authenticated = True  # as for the server's token: no XSRF check
            return User(username="blocked")
        return await super().get_user(handler)


class NoMcpForBlocked(Authorizer):
    """Refuses `agent_tools:mcp` to `blocked`, and records every resource it was asked about."""

    asked: list[tuple[str, str, str]] = []  # noqa: RUF012 - one server per test, read by the test

    def is_authorized(self, handler: Any, user: User, action: str, resource: str) -> bool:
        self.asked.append((user.username, action, resource))
        return not (user.username == "blocked" and resource == MCP_RESOURCE)


@pytest.fixture
def jp_server_config(jp_server_config):
    NoMcpForBlocked.asked.clear()
    return {**jp_server_config, "ServerApp": {
        **jp_server_config["ServerApp"], "identity_provider_class": TwoUsers,
        "authorizer_class": NoMcpForBlocked}}


_MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
_INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "test", "version": "1"}}}


async def test_a_user_the_authorizer_refuses_mcp_gets_403_and_no_run(mcp_url, runtime_of):
    blocked = {"Authorization": f"token {BLOCKED_TOKEN}"}
    async with httpx2.AsyncClient(headers=blocked, timeout=60) as http:
        refused = await http.post(mcp_url(), json=_INITIALIZE, headers=_MCP_HEADERS)
        assert refused.status_code == 403
        assert runtime_of.runs == {}
        assert ("blocked", "write", MCP_RESOURCE) in NoMcpForBlocked.asked
        # The same user may still use the HTTP API: only the MCP resource is refused.
        created = await http.post(mcp_url("agent-tools/api/runs"), json={})
        assert created.status_code == 201, created.text
        run_id = created.json()["id"]
        on_the_run = await http.post(mcp_url(f"agent-tools/api/runs/{run_id}/mcp"),
                                     json=_INITIALIZE, headers=_MCP_HEADERS)
        assert on_the_run.status_code == 403
    assert list(runtime_of.runs) == [run_id]


async def test_a_user_the_authorizer_allows_opens_a_session(mcp_session, runtime_of):
    async with mcp_session() as session:
        assert (await session.list_tools()).tools
        assert not (await session.call_tool("glob", {"pattern": "*"})).is_error
        [run] = runtime_of.runs.values()
        assert run.describe()["origin"] == "mcp"
    assert ("write", MCP_RESOURCE) in {(action, resource) for user, action, resource
                                       in NoMcpForBlocked.asked if user != "blocked"}
