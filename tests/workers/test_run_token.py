"""A run token authenticates its own run's routes and nothing else, against a real server."""

from __future__ import annotations

import asyncio
import json

import pytest
from tornado.httpclient import HTTPClientError


@pytest.fixture
def as_token(jp_fetch):
    """`await as_token(token, method, path, body)` → (status, JSON or None), sending only the
    given token (jp_fetch would otherwise add the server's)."""

    async def call(token: str, method: str, path: str, body=None, params=None):
        response = await jp_fetch(
            *path.split("/"),
            method=method,
            body=None if body is None else json.dumps(body),
            headers={"Authorization": f"token {token}" if token else ""},
            params=params,
            raise_error=False,
            allow_nonstandard_methods=True,
        )
        return response.code, json.loads(response.body) if response.body else None

    return call


@pytest.fixture
def two_runs(api, server_runtime, jp_asyncio_loop, jp_root_dir):
    (jp_root_dir / "hello.txt").write_text("hi\n")

    async def make():
        _, mine = await api("POST", "runs", {})
        _, other = await api("POST", "runs", {})
        return mine["id"], other["id"]

    mine, other = jp_asyncio_loop.run_until_complete(make())
    return mine, other, server_runtime.run_tokens.issue(mine)


async def test_run_token_reaches_its_own_run(as_token, api, two_runs):
    mine, _, token = two_runs
    base = f"agent-tools/api/runs/{mine}"
    code, descriptor = await as_token(token, "GET", base)
    assert code == 200 and descriptor["id"] == mine
    code, schemas = await as_token(token, "GET", f"{base}/tools")
    assert code == 200 and "read" in {s["name"] for s in schemas}
    code, result = await as_token(token, "POST", f"{base}/calls",
                                  {"tool": "read", "args": {"path": "hello.txt"}})
    assert code == 200 and result["ok"] and "hi" in result["text"]
    code, transcript = await as_token(token, "GET", f"{base}/transcript")
    assert code == 200 and [e["origin"] for e in transcript] == ["worker"]
    # The server's own token still works, and its calls are recorded as HTTP calls.
    code, _ = await api("POST", f"runs/{mine}/calls", {"tool": "read", "args": {"path": "hello.txt"}})
    _, transcript = await api("GET", f"runs/{mine}/transcript")
    assert code == 200 and [e["origin"] for e in transcript] == ["worker", "http"]


@pytest.mark.parametrize("method, path", [
    ("GET", "agent-tools/api/runs/{other}"),
    ("GET", "agent-tools/api/runs/{other}/tools"),
    ("POST", "agent-tools/api/runs/{other}/calls"),
    ("GET", "agent-tools/api/runs/{other}/transcript"),
    ("DELETE", "agent-tools/api/runs/{other}"),
    ("DELETE", "agent-tools/api/runs/{mine}"),  # a worker may not close its own run
    ("GET", "agent-tools/api/runs"),
    ("POST", "agent-tools/api/runs"),
    ("GET", "agent-tools/api/status"),
    ("GET", "agent-tools/api/openapi.json"),
    ("GET", "api/contents"),  # jupyter_server's own routes
    ("GET", "api/kernels"),
])
async def test_run_token_is_refused_everywhere_else(as_token, two_runs, method, path):
    mine, other, token = two_runs
    body = {"tool": "read", "args": {"path": "hello.txt"}} if method == "POST" else None
    code, _ = await as_token(token, method, path.format(mine=mine, other=other), body)
    assert code == 403


async def test_run_token_only_in_the_header(as_token, two_runs):
    mine, _, token = two_runs
    code, _ = await as_token("", "GET", f"agent-tools/api/runs/{mine}/tools",
                             params={"token": token})
    assert code == 401  # not a token the server knows there: no one is authenticated


async def test_run_token_dies_with_its_run(as_token, api, two_runs):
    mine, _, token = two_runs
    code, _ = await api("DELETE", f"runs/{mine}")
    assert code == 204
    code, _ = await as_token(token, "GET", f"agent-tools/api/runs/{mine}/tools")
    assert code == 401  # a revoked token: no one is authenticated


async def test_run_token_event_stream(jp_ws_fetch, two_runs, tool):
    mine, other, token = two_runs
    headers = {"Authorization": f"token {token}"}
    socket = await jp_ws_fetch("agent-tools", "api", "runs", mine, "events", headers=headers)
    event = None
    for _ in range(20):  # the stream is live once the handler subscribed
        await tool(mine, "read", {"path": "hello.txt"})
        try:
            event = json.loads(await asyncio.wait_for(socket.read_message(), 1))
            break
        except asyncio.TimeoutError:
            continue
    assert event is not None and event["run_id"] == mine
    socket.close()
    with pytest.raises(HTTPClientError) as refused:
        await jp_ws_fetch("agent-tools", "api", "runs", other, "events", headers=headers)
    assert refused.value.code == 403
