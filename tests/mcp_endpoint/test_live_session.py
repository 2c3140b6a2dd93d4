"""What an MCP session does over time: idle timeout, tools/list_changed, progress, elicitation.

The server here has short timeouts (an idle session ends after 3 s, a card waits 4 s, progress
every 0.3 s) so each behaviour shows within a test.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import httpx2
import mcp_types as types
import pytest
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport

from jupyter_agent_tools.runtime import Resource

WAIT = 30  # seconds: a bound on waits that should end soon, never an assertion
CARD_TIMEOUT = 4.0
IDLE_TIMEOUT = 3.0


@pytest.fixture
def jp_server_config(jp_server_config):
    return {
        **jp_server_config,
        "McpEndpoint": {"idle_timeout_seconds": IDLE_TIMEOUT, "progress_interval_seconds": 0.3},
        "QuestionPort": {"timeout_seconds": CARD_TIMEOUT},
    }


def mcp_runs(runtime):
    return [run for run in runtime.runs.values() if run.options.origin.value == "mcp"]


async def until(condition, what: str) -> None:
    for _ in range(WAIT * 10):
        if condition():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


async def test_a_client_gone_without_delete_is_closed_after_the_idle_timeout(mcp_session, runtime_of):
    async with mcp_session(terminate_on_close=False) as session:
        await session.list_tools()
        await session.call_tool("glob", {"pattern": "*"})
        [run] = mcp_runs(runtime_of)
    # The client left without DELETE; its GET stream closed with it, so the session idles out.
    await until(lambda: run.closed, "the idle session's run to close")
    assert mcp_runs(runtime_of) == []


async def test_a_connected_client_with_its_get_stream_open_does_not_idle_out(mcp_session,
                                                                              runtime_of):
    async with mcp_session() as session:
        await session.call_tool("glob", {"pattern": "*"})
        [run] = mcp_runs(runtime_of)
        await asyncio.sleep(IDLE_TIMEOUT * 1.5)  # nothing asked; the SDK client's GET stream open
        assert not run.closed
        assert (await session.list_tools()).tools


async def test_a_call_in_flight_longer_than_the_idle_timeout_keeps_the_session(
        mcp_url, auth_headers, runtime_of):
    """Idle means no request in flight: a call that outlasts the timeout is answered, and the
    session lives on (this client opens no GET stream, so the call is its only request)."""
    headers = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
    async with httpx2.AsyncClient(headers=auth_headers, timeout=WAIT) as http:
        opened = await http.post(mcp_url(), headers=headers, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "test", "version": "1"}}})
        headers |= {"Mcp-Session-Id": opened.headers["mcp-session-id"],
                    "Mcp-Protocol-Version": "2025-11-25"}
        await http.post(mcp_url(), headers=headers,
                        json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        answer = await http.post(mcp_url(), headers=headers, json={
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "bash", "arguments": {"command": "sleep 5; echo still-here"}}})
        [run] = mcp_runs(runtime_of)
        assert answer.status_code == 200
        assert "still-here" in answer.json()["result"]["content"][0]["text"]
        assert not run.closed
        listed = await http.post(mcp_url(), headers=headers, json={
            "jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        assert listed.status_code == 200 and listed.json()["result"]["tools"]
    # Then nothing more comes: the session idles out and closes its run.
    await until(lambda: run.closed, "the idle session's run to close")


async def test_tools_list_changed_when_a_resource_attaches(mcp_session, runtime_of):
    notifications: list[object] = []

    async def on_message(message) -> None:
        notifications.append(message)

    async with mcp_session(client={"message_handler": on_message}) as session:
        before = {tool.name for tool in (await session.list_tools()).tools}
        assert "vibe_spawn" not in before  # no worker pool without vibe
        await session.call_tool("glob", {"pattern": "*"})
        [run] = mcp_runs(runtime_of)
        # Vibe mode turned on later: the run gets a worker pool, and with it the vibe tools.
        pool = runtime_of.provider(Resource.WORKERS)
        run.attach(Resource.WORKERS, pool.attach(run, replace(run.options, vibe=True)))
        await until(lambda: any(isinstance(m, types.ToolListChangedNotification)
                                for m in notifications), "notifications/tools/list_changed")
        after = {tool.name for tool in (await session.list_tools()).tools}
        assert after - before == {"vibe_spawn", "vibe_send", "vibe_wait", "vibe_kill", "vibe_list"}


async def test_a_long_call_reports_progress(mcp_session):
    reports: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, message))

    async with mcp_session() as session:
        result = await session.call_tool("bash", {"command": "sleep 1.5; echo done"},
                                         progress_callback=on_progress)
        assert not result.is_error and "done" in result.content[0].text
    assert len(reports) >= 2
    assert [p for p, _ in reports] == sorted(p for p, _ in reports)
    assert "bash still running" in (reports[0][1] or "")


def _ask(options: bool = True) -> dict:
    args: dict = {"question": "Which database?", "context": "I will assume sqlite if skipped."}
    if options:
        args["options"] = [{"label": "sqlite"}, {"label": "postgres", "description": "a server"}]
        args["allow_free_text"] = True
    return args


async def test_ask_user_is_answered_through_elicitation(mcp_session):
    asked: list[types.ElicitRequestParams] = []

    async def answer(context, params):
        asked.append(params)
        return types.ElicitResult(action="accept", content={"answer": "postgres",
                                                            "text": "version 16"})

    async with mcp_session(client={"elicitation_callback": answer}) as session:
        result = await session.call_tool("ask_user", _ask())
    assert not result.is_error, result.content
    assert result.structured_content["selected"] == ["postgres"]
    assert result.structured_content["text"] == "version 16"
    [params] = asked
    assert "Which database?" in params.message and "sqlite if skipped" in params.message
    schema = params.requested_schema
    assert schema["properties"]["answer"]["enum"] == ["sqlite", "postgres"]
    assert schema["properties"]["text"]["type"] == "string"


async def test_a_multi_select_card_takes_several_options(mcp_session):
    async def pick_two(context, params):
        assert params.requested_schema["properties"]["answer"]["type"] == "array"
        return types.ElicitResult(action="accept", content={"answer": ["sqlite", "postgres"]})

    async with mcp_session(client={"elicitation_callback": pick_two}) as session:
        result = await session.call_tool("ask_user", {**_ask(), "multi_select": True})
    assert result.structured_content["selected"] == ["sqlite", "postgres"]


async def test_free_text_question_and_a_decline_is_a_skip(mcp_session):
    async def decline(context, params):
        assert params.requested_schema["required"] == ["text"]
        return types.ElicitResult(action="decline")

    async with mcp_session(client={"elicitation_callback": decline}) as session:
        result = await session.call_tool("ask_user", _ask(options=False))
    assert not result.is_error
    assert result.structured_content["status"] == "skipped"
    assert "skipped" in result.content[0].text


async def test_no_answer_within_the_card_timeout_is_timeout(mcp_session):
    async def never(context, params):
        await asyncio.sleep(CARD_TIMEOUT * 3)
        return types.ElicitResult(action="cancel")

    async with mcp_session(client={"elicitation_callback": never}) as session:
        result = await session.call_tool("ask_user", _ask())
    assert result.is_error and result.structured_content["error"]["code"] == "timeout"


async def test_permission_cards_use_elicitation_too(mcp_session, project_file):
    async def allow(context, params):
        assert "Allow write" in params.message
        return types.ElicitResult(action="accept", content={"answer": "Allow once"})

    async with mcp_session(approvals="ask", client={"elicitation_callback": allow}) as session:
        result = await session.call_tool("write", {"path": "new.txt", "content": "hello\n"})
    assert not result.is_error, result.content
    assert project_file("new.txt").read_text() == "hello\n"


async def test_without_elicitation_cards_go_to_the_space(mcp_session, runtime_of):
    human = await runtime_of.connect_human("lab")
    try:
        async with mcp_session() as session:
            pending = asyncio.ensure_future(session.call_tool("ask_user", _ask()))
            card = await human.next_card(timeout=WAIT)
            assert card["question"] == "Which database?"
            await human.answer(card["id"], answer="sqlite")
            result = await asyncio.wait_for(pending, WAIT)
        assert result.structured_content["selected"] == ["sqlite"]
    finally:
        await human.close()


async def test_fastmcp_client_lists_and_calls_tools(mcp_url, auth_headers, runtime_of, project_file):
    project_file("notes.txt").write_text("alpha\nbeta\n")
    transport = StreamableHttpTransport(mcp_url(surface="readonly"), headers=auth_headers)
    async with Client(transport) as client:
        names = {tool.name for tool in await client.list_tools()}
        assert {"read", "grep"} <= names and "write" not in names
        result = await client.call_tool("grep", {"pattern": "beta"})
        assert "notes.txt" in result.content[0].text
        assert result.structured_content["matches"] == [
            {"file": "notes.txt", "line": 2, "text": "beta"}]
        [run] = mcp_runs(runtime_of)
        assert run.surface.value == "readonly"
    await until(lambda: mcp_runs(runtime_of) == [], "the fastmcp session's run to close")


@pytest.fixture
def project_file(jp_root_dir):
    return lambda name: jp_root_dir / name
