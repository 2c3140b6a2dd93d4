"""GET runs/{id}/transcript over a real server whose transcripts hold 20,000 bytes."""

from __future__ import annotations

import json

import pytest

MAX_TRANSCRIPT_BYTES = 20_000


@pytest.fixture
def jp_server_config(jp_server_config):
    return {**jp_server_config, "Runtime": {"max_transcript_bytes": MAX_TRANSCRIPT_BYTES}}


async def call(send, run_id: str, tool: str, args: dict) -> dict:
    body = json.dumps({"tool": tool, "args": args}).encode()
    code, result, _ = await send("POST", f"agent-tools/api/runs/{run_id}/calls", body)
    assert code == 200 and result["ok"], result
    return result


async def test_the_transcript_says_how_many_old_calls_it_dropped(send, jp_root_dir):
    code, run, _ = await send("POST", "agent-tools/api/runs", b"{}")
    assert code == 201
    code, _, headers = await send("GET", f"agent-tools/api/runs/{run['id']}/transcript")
    assert code == 200 and headers["X-Transcript-Dropped"] == "0"

    for number in range(10):  # about 5,000 bytes each: the newest three fit
        await call(send, run["id"], "write", {"path": f"f{number}.txt", "content": "x" * 5_000})
    code, entries, headers = await send("GET", f"agent-tools/api/runs/{run['id']}/transcript")
    assert [e["args"]["path"] for e in entries] == ["f7.txt", "f8.txt", "f9.txt"]
    assert headers["X-Transcript-Dropped"] == "7"
    _, described, _ = await send("GET", f"agent-tools/api/runs/{run['id']}")
    _, listed, _ = await send("GET", "agent-tools/api/runs")
    assert described["transcript_dropped"] == 7 and listed[0]["transcript_dropped"] == 7


async def test_an_oversized_call_is_listed_without_its_arguments(send, jp_root_dir):
    _, run, _ = await send("POST", "agent-tools/api/runs", b"{}")
    await call(send, run["id"], "write", {"path": "huge.txt", "content": "y" * 50_000})
    await call(send, run["id"], "read", {"path": "huge.txt", "limit": 1})
    code, entries, headers = await send("GET", f"agent-tools/api/runs/{run['id']}/transcript")
    assert code == 200 and headers["X-Transcript-Dropped"] == "0"
    huge, read = entries
    assert huge["args"] == {} and huge["args_omitted_bytes"] > 50_000 and huge["ok"] is True
    assert read["args"] == {"path": "huge.txt", "limit": 1} and read["args_omitted_bytes"] is None
    assert (jp_root_dir / "huge.txt").read_text() == "y" * 50_000
