"""Requests answered in one JSON body, dispatched in their HTTP request's own task (direct.py):
the same answers as the SDK's transport gives, its errors, cancellation, and the session's end.

A raw HTTP client, so each test sees exactly what goes over the wire.
"""

from __future__ import annotations

import asyncio
import json

import httpx2
import psutil
import pytest

WAIT = 30  # seconds: a bound on waits that should end soon, never an assertion
_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def project(jp_root_dir):
    directory = jp_root_dir / "proj"
    directory.mkdir()
    (directory / "main.py").write_text("print('hello')\n")
    return directory


async def _open(http: httpx2.AsyncClient, url: str, capabilities: dict) -> dict[str, str]:
    """A session opened by hand; the headers of its later requests."""
    opened = await http.post(url, headers=_HEADERS, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": capabilities,
                   "clientInfo": {"name": "test", "version": "1"}}})
    assert opened.status_code == 200, opened.text
    headers = {**_HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"],
               "Mcp-Protocol-Version": "2025-11-25"}
    await http.post(url, headers=headers,
                    json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return headers


def _events(text: str) -> list[dict]:
    return [json.loads(line.removeprefix("data: ")) for line in text.splitlines()
            if line.startswith("data: ") and line != "data: "]


async def test_an_answer_in_json_is_the_transports_answer(mcp_url, auth_headers, project):
    """A client that elicits has its calls answered by the SDK's transport (an event stream, so a
    card may be asked on it); one that does not, in JSON here. The answers are the same."""
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "read", "arguments": {"path": "main.py"}}}
    async with httpx2.AsyncClient(headers=auth_headers, timeout=WAIT) as http:
        url = mcp_url(cwd="proj")
        direct = await _open(http, url, {})
        streamed = await _open(http, url, {"elicitation": {}})
        in_json = await http.post(url, headers=direct, json=call)
        in_events = await http.post(url, headers=streamed, json=call)
        listed = [await http.post(url, headers=headers,
                                  json={"jsonrpc": "2.0", "id": 8, "method": "tools/list"})
                  for headers in (direct, streamed)]
        for headers in (direct, streamed):
            await http.delete(url, headers=headers)
    assert in_json.headers["content-type"].startswith("application/json")
    assert in_json.headers["mcp-session-id"] == direct["Mcp-Session-Id"]
    assert in_events.headers["content-type"].startswith("text/event-stream")
    assert in_json.json() == _events(in_events.text)[-1]
    assert "hello" in in_json.json()["result"]["content"][0]["text"]
    assert listed[0].json() == listed[1].json() and listed[0].json()["result"]["tools"]


async def test_errors_in_json_are_the_sdks(mcp_url, auth_headers):
    async with httpx2.AsyncClient(headers=auth_headers, timeout=WAIT) as http:
        headers = await _open(http, mcp_url(), {})
        unknown = await http.post(mcp_url(), headers=headers, json={
            "jsonrpc": "2.0", "id": 2, "method": "tools/unknown"})
        nameless = await http.post(mcp_url(), headers=headers, json={
            "jsonrpc": "2.0", "id": "three", "method": "tools/call", "params": {}})
        no_such_tool = await http.post(mcp_url(), headers=headers, json={
            "jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": {"name": "nope", "arguments": {}}})
        await http.delete(mcp_url(), headers=headers)
    assert unknown.status_code == 200
    assert unknown.json()["id"] == 2 and unknown.json()["error"]["code"] == -32601
    assert nameless.json()["id"] == "three" and nameless.json()["error"]["code"] == -32602
    # An unknown tool is the tool layer's answer, which the model reads: an error result.
    result = no_such_tool.json()["result"]
    assert result["isError"] and result["structuredContent"]["error"]["code"] == "unknown_tool"


def _sleepers(marker: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if marker in " ".join(process.info["cmdline"] or []):
            found.append(process)
    return found


async def test_a_cancelled_call_is_answered_cancelled_and_its_command_stops(mcp_url,
                                                                           auth_headers):
    marker = "sleep 47.5"
    async with httpx2.AsyncClient(headers=auth_headers, timeout=WAIT) as http:
        headers = await _open(http, mcp_url(), {})
        pending = asyncio.ensure_future(http.post(mcp_url(), headers=headers, json={
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "bash", "arguments": {"command": f"{marker}; echo done"}}}))
        for _ in range(WAIT * 10):
            if _sleepers(marker):
                break
            await asyncio.sleep(0.1)
        assert _sleepers(marker), "the command never started"
        cancel = await http.post(mcp_url(), headers=headers, json={
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 2, "reason": "the user pressed stop"}})
        answer = await asyncio.wait_for(pending, WAIT)
        # The session goes on.
        listed = await http.post(mcp_url(), headers=headers, json={
            "jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        await http.delete(mcp_url(), headers=headers)
    assert cancel.status_code == 202
    assert answer.status_code == 200
    assert answer.json() == {"jsonrpc": "2.0", "id": 2,
                             "error": {"code": -32800, "message": "Request cancelled"}}
    assert listed.json()["result"]["tools"]
    for _ in range(WAIT * 10):
        if not _sleepers(marker):
            break
        await asyncio.sleep(0.1)
    assert not _sleepers(marker), "the cancelled call's command still runs"
