"""What MCP sessions cost and share (issue 44): a session that calls no tool holds no run and
makes room for a newcomer at the cap; every session naming a conversation_id shares one run,
which outlives them; JSON-RPC errors carry the request's id.

Real server, raw HTTP (to see each answer) and real clients: the MCP SDK's and fastmcp's.
"""

from __future__ import annotations

import asyncio
import json

import httpx2
import pytest
from fastmcp import Client as FastMcpClient
from fastmcp.client.transports import StreamableHttpTransport
from mcp import types
from mcp.client.client import Client as SdkClient
from mcp.client.streamable_http import streamable_http_client

MAX_SESSIONS = 5
#: An eval call's description (5 to 10 words).
STEP = "one step of this conversation, run here"
WAIT = 30  # seconds: a bound on waits that should end soon, never an assertion
_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
_INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "health-check", "version": "1"}}}


@pytest.fixture
def jp_server_config(jp_server_config):
    return {**jp_server_config, "McpEndpoint": {"max_sessions": MAX_SESSIONS}}


@pytest.fixture
def endpoint(jp_serverapp):
    """The server's McpEndpoint (made by the first MCP request)."""
    return lambda: jp_serverapp.web_app.settings["agent_tools_mcp"]


def mcp_runs(runtime):
    return [run for run in runtime.runs.values() if run.options.origin.value == "mcp"]


async def until(condition, what: str) -> None:
    for _ in range(WAIT * 20):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def _open(http: httpx2.AsyncClient, url: str) -> dict[str, str]:
    opened = await http.post(url, headers=_HEADERS, json=_INITIALIZE)
    assert opened.status_code == 200, opened.text
    return {**_HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"],
            "Mcp-Protocol-Version": "2025-11-25"}


async def _call(http: httpx2.AsyncClient, url: str, headers: dict, tool: str, args: dict,
                request_id: int = 2) -> httpx2.Response:
    return await http.post(url, headers=headers, json={
        "jsonrpc": "2.0", "id": request_id, "method": "tools/call",
        "params": {"name": tool, "arguments": args}})


# -- 2. sessions cost nothing until used ------------------------------------------------------


async def test_health_checks_leave_a_handful_of_sessions_and_are_never_refused(
        mcp_url, auth_headers, runtime_of, endpoint):
    """200 health checks in a row (initialize, tools/list, no DELETE) at a cap of 5: the least
    recently used idle session makes room each time; a client that called a tool stays."""
    async with httpx2.AsyncClient(headers=auth_headers, timeout=WAIT) as http:
        url = mcp_url()
        worker = await _open(http, url)
        called = await _call(http, url, worker, "glob", {"pattern": "*"})
        assert called.status_code == 200 and not called.json()["result"]["isError"]
        [worker_run] = mcp_runs(runtime_of)
        first_check = None
        for number in range(200):
            opened = await http.post(url, headers=_HEADERS, json=_INITIALIZE)
            assert opened.status_code == 200, (number, opened.text)
            session = {**_HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"],
                       "Mcp-Protocol-Version": "2025-11-25"}
            first_check = first_check or session
            listed = await http.post(url, headers=session,
                                     json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            assert listed.status_code == 200 and listed.json()["result"]["tools"], number
            assert len(endpoint().sessions) <= MAX_SESSIONS
        # Health checks made no run; the first of them was ended to make room; the client that
        # called a tool was not (sessions that never called one go first).
        assert mcp_runs(runtime_of) == [worker_run]
        gone = await http.post(url, headers=first_check,
                               json={"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
        assert gone.status_code == 404 and gone.json()["id"] == 9
        again = await _call(http, url, worker, "glob", {"pattern": "*"}, request_id=3)
        assert again.status_code == 200 and not again.json()["result"]["isError"]
        assert mcp_runs(runtime_of) == [worker_run]


async def test_at_the_cap_with_every_session_busy_a_newcomer_is_refused(
        mcp_url, auth_headers, endpoint):
    async with httpx2.AsyncClient(headers=auth_headers, timeout=WAIT) as http:
        url = mcp_url()
        sessions = [await _open(http, url) for _ in range(MAX_SESSIONS)]
        # Each client keeps its GET stream open (as connected clients do): every session busy.
        streams = [asyncio.ensure_future(http.get(url, headers={
            **headers, "Accept": "text/event-stream"})) for headers in sessions]
        try:
            await until(lambda: all(s.busy for s in endpoint().sessions.values()),
                        "every session's GET stream to be open")
            refused = await http.post(url, headers=_HEADERS, json=_INITIALIZE)
            assert refused.status_code == 409, refused.text
            assert refused.json()["id"] == 1
            assert refused.json()["error"]["data"]["code"] == "unavailable"
            # One client goes away: its session is the one to end for the next newcomer.
            quiet = sessions[0]["Mcp-Session-Id"]
            streams[0].cancel()
            await until(lambda: not endpoint().sessions[quiet].busy, "the stream to close")
            welcome = await http.post(url, headers=_HEADERS, json=_INITIALIZE)
            assert welcome.status_code == 200, welcome.text
            assert quiet not in endpoint().sessions and len(endpoint().sessions) == MAX_SESSIONS
        finally:
            for stream in streams:
                stream.cancel()
            await asyncio.gather(*streams, return_exceptions=True)


async def test_an_unused_session_ends_after_unused_session_seconds(
        mcp_url, auth_headers, runtime_of, endpoint):
    async with httpx2.AsyncClient(headers=auth_headers, timeout=WAIT) as http:
        url = mcp_url()
        await _open(http, url)  # the endpoint exists from here
        endpoint().unused_session_seconds = 0.5  # read by each session as it opens
        used = await _open(http, url)
        unused = await _open(http, url)
        called = await _call(http, url, used, "glob", {"pattern": "*"})
        assert called.status_code == 200
        await until(lambda: unused["Mcp-Session-Id"] not in endpoint().sessions,
                    "the unused session to end")
        # The session that called a tool keeps to the idle timeout (1800 s here).
        assert used["Mcp-Session-Id"] in endpoint().sessions
        assert len(mcp_runs(runtime_of)) == 1
        listed = await http.post(url, headers=unused,
                                 json={"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
        assert listed.status_code == 404 and listed.json()["id"] == 5


async def test_the_listing_before_a_call_is_the_runs_and_debug_is_always_there(
        mcp_session, runtime_of, jp_root_dir):
    (jp_root_dir / "proj").mkdir()
    for query in [{}, {"surface": "plan", "cwd": "proj"}, {"conversation_id": "c-1"},
                  {"vibe": "true", "space": "review"}]:
        async with mcp_session(**query) as session:
            before = set(runtime_of.runs)
            listed = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert set(runtime_of.runs) == before, query  # listing made no run
            if query.get("surface") != "plan":  # debug is exec tier
                assert "debug" in listed, query  # its own conversation when it names none
            assert not (await session.call_tool("glob", {"pattern": "*"})).is_error
            [run] = [run for run_id, run in runtime_of.runs.items() if run_id not in before]
            assert set(listed) == set(run.tool_names()), query
            schemas = {schema["name"]: schema for schema in run.schemas(format="json")}
            assert all(listed[name].input_schema == schemas[name]["parameters"]
                       for name in listed), query


# -- 3. a conversation outlives a session -----------------------------------------------------


async def test_sdk_client_a_session_per_call_keeps_the_conversations_kernel(
        mcp_session, runtime_of, endpoint):
    async with mcp_session(conversation_id="chat-1") as first:
        set_x = await first.call_tool("eval", {"code": "x = 5", "description": STEP})
        assert not set_x.is_error, set_x.content
        [run] = mcp_runs(runtime_of)
    # The session ended (DELETE); its conversation's run did not.
    assert not run.closed and mcp_runs(runtime_of) == [run]
    async with mcp_session(conversation_id="chat-1") as second:
        seen = await second.call_tool("eval", {"code": "x", "description": STEP})
        assert not seen.is_error and seen.content[0].text == "5", seen.content
        assert mcp_runs(runtime_of) == [run]
        # Another conversation, or none, is another run: x is not there.
        async with mcp_session() as other:
            missing = await other.call_tool("eval", {"code": "x", "description": STEP})
            assert "NameError" in str(missing.content), missing.content
            assert len(mcp_runs(runtime_of)) == 2
    assert [entry.tool for entry in run.transcript.entries()] == ["eval", "eval"]
    # With no session left, the run closes once conversation_idle_seconds have passed.
    endpoint().conversations[next(iter(endpoint().conversations))].linger_seconds = 0.2
    async with mcp_session(conversation_id="chat-1") as third:
        assert (await third.list_tools()).tools  # it joins the run, and holds it meanwhile
        assert not run.closed
    await until(lambda: run.closed, "the conversation's run to close after its last session")
    assert mcp_runs(runtime_of) == []


async def test_fastmcp_a_session_per_call_keeps_the_conversations_kernel(
        mcp_url, auth_headers, runtime_of):
    url = mcp_url(conversation_id="chat-fast")
    for code, expected in [("y = 6", None), ("y * 7", "42")]:
        async with FastMcpClient(StreamableHttpTransport(url, headers=auth_headers)) as client:
            result = await client.call_tool("eval", {"code": code,
                                                     "description": "a step of this chat in this eval call"})
            if expected is not None:
                assert result.content[0].text == expected, result.content
    [run] = mcp_runs(runtime_of)
    assert run.conversation_id == "chat-fast" and not run.closed


async def test_two_open_sessions_share_the_run_and_one_ending_leaves_it(
        mcp_session, runtime_of, endpoint):
    async with mcp_session(conversation_id="pair") as first:
        async with mcp_session(conversation_id="pair") as second:
            await first.call_tool("eval", {"code": "z = 1", "description": STEP})
            seen = await second.call_tool("eval", {"code": "z + 1", "description": STEP})
            assert seen.content[0].text == "2"
            [run] = mcp_runs(runtime_of)
        assert not run.closed  # the second session ended; the first still holds the run
        assert (await first.call_tool("eval", {"code": "z", "description": STEP})
                ).content[0].text == "1"
        [conversation] = endpoint().conversations.values()
        conversation.linger_seconds = 0.2
    await until(lambda: run.closed, "the run to close after the last session")


async def test_other_options_for_an_open_conversation_are_refused(mcp_url, auth_headers,
                                                                  runtime_of, jp_root_dir):
    (jp_root_dir / "proj").mkdir()
    async with httpx2.AsyncClient(headers=auth_headers, timeout=WAIT) as http:
        await _open(http, mcp_url(conversation_id="strict", surface="plan"))
        for query in [{"surface": "full"}, {"cwd": "proj", "surface": "plan"},
                      {"approvals": "deny", "surface": "plan"}]:
            refused = await http.post(mcp_url(conversation_id="strict", **query),
                                      headers=_HEADERS, json=_INITIALIZE)
            assert refused.status_code == 400, (query, refused.text)
            body = refused.json()
            assert body["id"] == 1 and body["error"]["data"]["code"] == "invalid_arguments"
            assert "strict" in body["error"]["message"] and "mcp-session-id" not in refused.headers
        # The same options join.
        joined = await http.post(mcp_url(conversation_id="strict", surface="plan"),
                                 headers=_HEADERS, json=_INITIALIZE)
        assert joined.status_code == 200
    assert runtime_of.runs == {}


# -- 6. JSON-RPC errors carry the request's id ------------------------------------------------


async def test_refusals_carry_the_request_id(mcp_url, auth_headers):
    async with httpx2.AsyncClient(headers=auth_headers, timeout=WAIT) as http:
        url = mcp_url()
        no_session = await http.post(url, headers=_HEADERS,
                                     json={"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
        unparsable = await http.post(url, headers=_HEADERS, content=b"{not json")
        modern = await http.post(url, json={"jsonrpc": "2.0", "id": "d-1",
                                            "method": "server/discover"},
                                 headers={**_HEADERS, "Mcp-Protocol-Version": "2026-07-28"})
        unknown = await http.post(url, json={"jsonrpc": "2.0", "id": 8, "method": "tools/list"},
                                  headers={**_HEADERS, "Mcp-Session-Id": "0" * 32})
        session = await _open(http, url)
        bad_accept = await http.post(url, json={"jsonrpc": "2.0", "id": 11,
                                                "method": "tools/list"},
                                     headers={**session, "Accept": "text/html"})
        bad_query = await http.post(mcp_url(surface="everything"), headers=_HEADERS,
                                    json=_INITIALIZE)
    assert no_session.status_code == 400 and no_session.json()["id"] == 7
    assert unparsable.status_code == 400
    assert "id" in unparsable.json() and unparsable.json()["id"] is None
    assert modern.status_code == 400 and modern.json()["id"] == "d-1"
    assert modern.json()["error"]["code"] == -32022
    assert unknown.status_code == 404 and unknown.json()["id"] == 8
    assert bad_accept.status_code == 406 and bad_accept.json()["id"] == 11
    assert bad_query.status_code == 400 and bad_query.json()["id"] == 1


async def test_server_discover_is_answered_and_an_mcp2_client_falls_back(mcp_url, auth_headers,
                                                                        runtime_of):
    async with httpx2.AsyncClient(headers=auth_headers, timeout=WAIT) as http:
        discovered = await http.post(mcp_url(), headers=_HEADERS, json={
            "jsonrpc": "2.0", "id": 3, "method": "server/discover"})
        assert discovered.status_code == 200, discovered.text
        answer = discovered.json()
        assert answer["id"] == 3 and "2025-11-25" in answer["result"]["supportedVersions"]
        assert answer["result"]["capabilities"]["tools"]["listChanged"] is True
        # The SDK's own client, negotiating (its first request is server/discover).
        async with SdkClient(streamable_http_client(mcp_url(), http_client=http),
                             mode="auto") as client:
            assert client.session.initialize_result is not None  # fell back to the handshake
            result = await client.call_tool("glob", {"pattern": "*"})
            assert not result.is_error
            assert len(mcp_runs(runtime_of)) == 1


async def test_each_run_names_the_client_that_made_it_and_what_waits_for_the_human(
        mcp_url, auth_headers, mcp_session, jp_fetch):
    """Two agents at once (issue 47): each MCP client's name and version from initialize is in
    its run's descriptor, open and ended, and so is how many of its edits are still staged."""
    async def descriptors() -> dict[str, dict]:
        listed = await jp_fetch("agent-tools", "api", "runs", method="GET")
        return {run["client"]["name"]: run for run in json.loads(listed.body) if run["client"]}

    ada = {"client_info": types.Implementation(name="ada-agent", version="1.2.3")}
    bob = {"client_info": types.Implementation(name="bob-agent", version="0.9")}
    async with mcp_session(client=ada) as first, mcp_session(client=bob) as second:
        await first.call_tool("write", {"path": "shapes.py", "content": "print(1)\n"})
        staged = await second.call_tool("ast_edit", {
            "pattern": "print($A)", "rewrite": "log($A)", "language": "python"})
        assert not staged.is_error, staged
        runs = await descriptors()
        assert runs["ada-agent"]["client"] == {"name": "ada-agent", "version": "1.2.3"}
        assert runs["bob-agent"]["client"] == {"name": "bob-agent", "version": "0.9"}
        assert (runs["ada-agent"]["staged_edits"], runs["bob-agent"]["staged_edits"]) == (0, 1)
    ended = await descriptors()  # both sessions ended: their runs are listed as ended
    assert ended["bob-agent"]["state"] == "ended" and ended["bob-agent"]["staged_edits"] == 1
    assert ended["ada-agent"]["client"]["version"] == "1.2.3"
