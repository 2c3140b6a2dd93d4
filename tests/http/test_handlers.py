"""The core routes over a real Jupyter server: runs, calls, transcripts, status, run events."""

from __future__ import annotations

import json

import pytest
from tornado.httpclient import HTTPClientError


async def test_run_lifecycle_over_http(api, jp_root_dir):
    (jp_root_dir / "notes.txt").write_text("alpha\nbeta\n")
    code, run = await api("POST", "runs", {"cwd": ".", "surface": "full"})
    assert code == 201 and {"read", "write", "bash"} <= set(run["tools"])
    run_id = run["id"]
    code, listed = await api("GET", "runs")
    assert code == 200 and [r["id"] for r in listed] == [run_id]
    code, described = await api("GET", f"runs/{run_id}")
    assert described["cwd"] == "." and described["surface"] == "full"

    code, result = await api("POST", f"runs/{run_id}/calls", {"tool": "read", "args": {"path": "notes.txt"}})
    assert code == 200 and result["ok"] and "beta" in result["text"]
    assert result["blocks"] == [{"type": "text", "text": result["text"]}]
    code, failed = await api("POST", f"runs/{run_id}/calls", {"tool": "read", "args": {"path": "../x"}})
    assert code == 200 and failed["ok"] is False and failed["error"]["code"] == "path_outside_root"

    code, transcript = await api("GET", f"runs/{run_id}/transcript")
    assert [(e["tool"], e["ok"], e["origin"]) for e in transcript] == [("read", True, "http"), ("read", False, "http")]

    code, schemas = await api("GET", f"runs/{run_id}/tools", format="openai")
    assert code == 200 and all(s["type"] == "function" for s in schemas)
    code, error = await api("GET", f"runs/{run_id}/tools", format="yaml")
    assert code == 400 and error["error"]["code"] == "invalid_arguments"

    code, _ = await api("DELETE", f"runs/{run_id}")
    assert code == 204
    # Closed, it is kept in the run store as ended; deleted again, it is forgotten.
    code, ended = await api("GET", f"runs/{run_id}")
    assert code == 200 and (ended["state"], ended["ended_by"]) == ("ended", "close")
    code, _ = await api("DELETE", f"runs/{run_id}")
    assert code == 204
    code, gone = await api("GET", f"runs/{run_id}")
    assert code == 404 and gone["error"]["code"] == "not_found" and "traceback" not in gone


async def test_bad_requests_get_json_errors(api):
    code, error = await api("POST", "runs", {"surface": "everything"})
    assert code == 400 and error["error"]["code"] == "invalid_arguments"
    code, error = await api("POST", "runs", {"cwd": "../.."})
    assert code == 400 and error["error"]["code"] == "path_outside_root"
    code, error = await api("POST", "runs", {"colour": "red"})
    assert code == 400 and "colour" in error["error"]["message"]
    code, run = await api("POST", "runs", {"surface": "plan"})
    code, result = await api("POST", f"runs/{run['id']}/calls", {"tool": "write", "args": {"path": "a", "content": ""}})
    assert code == 200 and result["error"]["code"] == "unknown_tool"
    code, error = await api("POST", f"runs/{run['id']}/calls", {"args": {}})
    assert code == 400


async def test_status_reports_tools_and_resources(api):
    code, status = await api("GET", "status")
    assert code == 200 and "read" in status["tools"] and "resources" in status
    assert status["tool_load_errors"] == {}


async def test_run_events_stream_calls(api, jp_ws_fetch, jp_root_dir):
    (jp_root_dir / "a.txt").write_text("a\n")
    _, run = await api("POST", "runs", {})
    ws = await jp_ws_fetch("agent-tools", "api", "runs", run["id"], "events")
    # the stream is live once the handler subscribed; a call made now must be seen
    for _ in range(50):
        await api("POST", f"runs/{run['id']}/calls", {"tool": "read", "args": {"path": "a.txt"}})
        message = json.loads(await ws.read_message())
        if message["type"] == "call_started":
            break
    finished = json.loads(await ws.read_message())
    assert finished["type"] == "call_finished" and finished["ok"] is True
    assert finished["tool"] == "read" and finished["label"] == "read a.txt"
    ws.close()


async def test_one_runs_events_are_not_anothers(api, jp_ws_fetch):
    with pytest.raises(HTTPClientError) as missing:
        await jp_ws_fetch("agent-tools", "api", "runs", "f" * 32, "events")
    assert missing.value.code == 404


async def test_a_run_on_the_users_kernel_is_asked_for_by_kernel_id_or_notebook(api, jp_serverapp):
    kernel_id = await jp_serverapp.kernel_manager.start_kernel(kernel_name="python3")
    try:
        code, run = await api("POST", "runs", {"kernel_id": kernel_id})
        assert code == 201 and run["kernel_id"] == kernel_id
        code, refused = await api("POST", "runs", {"kernel_id": "0" * 36})
        assert code == 404 and refused["error"]["code"] == "not_found"
        code, refused = await api("POST", "runs", {"notebook": "analysis.ipynb"})
        assert code == 404 and "analysis.ipynb" in refused["error"]["message"]
        await api("DELETE", f"runs/{run['id']}")
        assert kernel_id in jp_serverapp.kernel_manager  # closing the run left the kernel running
    finally:
        await jp_serverapp.kernel_manager.shutdown_kernel(kernel_id)
