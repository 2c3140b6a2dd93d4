"""Command workers: real subprocesses (tests/workers/scripted_agent.py) calling tools over HTTP
with the run token their environment gives them."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from worker_helpers import AGENT, alive, wait_for_file

from jupyter_agent_tools.runtime import Resource
from jupyter_agent_tools.testing.server import JupyterServerProcess


def brief(*lines: str) -> str:
    return "\n".join(lines)


def call_line(tool: str, **args) -> str:
    return f"call {tool} {json.dumps(args)}"


async def vibe_run(api, **options) -> str:
    code, run = await api("POST", "runs", {"vibe": True, **options})
    assert code == 201 and "vibe_spawn" in run["tools"]
    return run["id"]


async def test_worker_calls_its_tools_and_a_readonly_surface_refuses_writes(api, tool, jp_root_dir):
    (jp_root_dir / "hello.txt").write_text("hi\n")
    parent = await vibe_run(api)
    spawned = await tool(parent, "vibe_spawn", {"label": "look", "brief": brief(
        call_line("read", path="hello.txt"),
        call_line("write", path="out.txt", content="x"),
        "get runs",
        f"get runs/{parent}",
        "echo bye",
    )})
    assert spawned["ok"] and spawned["data"]["worker_id"] == "w1" and spawned["data"]["tier"] == "fast"
    waited = await tool(parent, "vibe_wait", {"worker_id": "w1", "timeout_seconds": 120})
    assert waited["data"]["finished"] and waited["data"]["status"] == "done"
    result = waited["data"]["result"]
    assert "brief lines: 5" in result and "read: ok" in result
    assert "write: unknown_tool" in result  # fast workers are read-only: no write tool at all
    assert "get runs: 403" in result and f"get runs/{parent}: 403" in result
    assert result.rstrip().endswith("finished")
    assert not (jp_root_dir / "out.txt").exists()

    child = waited["data"]["child_run_id"]
    _, descriptor = await api("GET", f"runs/{child}")
    assert descriptor["parent_id"] == parent and descriptor["surface"] == "readonly"
    _, transcript = await api("GET", f"runs/{child}/transcript")
    assert [(e["tool"], e["origin"]) for e in transcript] == [("read", "worker"), ("write", "worker")]

    listed = await tool(parent, "vibe_list")
    assert [(w["worker_id"], w["status"], w["tier"]) for w in listed["data"]["workers"]] == [
        ("w1", "done", "fast")]
    assert "w1 [fast] look: done" in listed["text"]


async def test_good_worker_writes_through_its_own_gate(api, tool, jp_root_dir):
    write = call_line("write", path="out.txt", content="written by a worker\n")
    allowed = await vibe_run(api)
    await tool(allowed, "vibe_spawn", {"label": "edit", "brief": write, "tier": "good"})
    waited = await tool(allowed, "vibe_wait", {"worker_id": "w1", "timeout_seconds": 120})
    assert "write: ok" in waited["data"]["result"]
    assert (jp_root_dir / "out.txt").read_text() == "written by a worker\n"

    denied = await vibe_run(api, approvals="deny")  # the child's approvals are never looser
    await tool(denied, "vibe_spawn", {"label": "edit", "brief": write, "tier": "good"})
    waited = await tool(denied, "vibe_wait", {"worker_id": "w1", "timeout_seconds": 120})
    assert "write: permission_denied" in waited["data"]["result"]


async def test_wait_times_out_then_kill_stops_the_process_group(api, tool, jp_root_dir):
    parent = await vibe_run(api)
    await tool(parent, "vibe_spawn", {"label": "sleeper", "brief": brief("pidfile pids", "sleep")})
    pids = [int(p) for p in (await wait_for_file(jp_root_dir / "pids")).split()]
    assert all(alive(pid) for pid in pids)

    waited = await tool(parent, "vibe_wait", {"worker_id": "w1", "timeout_seconds": 0})
    assert waited["ok"] and not waited["data"]["finished"]
    assert waited["data"]["status"] == "running" and "still running" in waited["text"]

    killed = await tool(parent, "vibe_kill", {"worker_id": "w1"})
    assert killed["ok"] and killed["data"]["killed"] and killed["data"]["status"] == "killed"
    assert not any(alive(pid) for pid in pids)  # the agent and the child it started
    again = await tool(parent, "vibe_kill", {"worker_id": "w1"})
    assert again["ok"] and not again["data"]["killed"] and "already finished" in again["text"]
    waited = await tool(parent, "vibe_wait", {"worker_id": "w1"})
    assert waited["data"]["finished"] and waited["data"]["status"] == "killed"


async def test_send_restarts_with_the_appended_brief(api, tool, jp_root_dir):
    parent = await vibe_run(api)
    await tool(parent, "vibe_spawn", {"label": "two-step",
                                      "brief": brief("pidfile first", "wait-for go", "echo one")})
    first = [int(p) for p in (await wait_for_file(jp_root_dir / "first")).split()]
    sent = await tool(parent, "vibe_send", {"worker_id": "w1", "message": "echo two"})
    assert sent["ok"] and sent["data"]["restarts"] == 1
    assert not any(alive(pid) for pid in first)  # the first execution was stopped
    (jp_root_dir / "go").write_text("")
    waited = await tool(parent, "vibe_wait", {"worker_id": "w1", "timeout_seconds": 120})
    result = waited["data"]["result"]
    assert waited["data"]["status"] == "done"
    assert "brief lines: 4" in result and "one\ntwo\nfinished" in result


@pytest.mark.parametrize("pool_config", [{"max_running": 1}])
async def test_spawns_beyond_the_limit_queue(api, tool, jp_root_dir, pool_config):
    parent = await vibe_run(api)
    for name in ("a", "b"):
        await tool(parent, "vibe_spawn", {"label": name, "brief": brief(f"pidfile {name}", "sleep")})
    await wait_for_file(jp_root_dir / "a")
    listed = await tool(parent, "vibe_list")
    assert [w["status"] for w in listed["data"]["workers"]] == ["running", "queued"]
    assert listed["data"]["workers"][1]["elapsed_seconds"] == 0

    await tool(parent, "vibe_kill", {"worker_id": "w1"})
    await wait_for_file(jp_root_dir / "b")  # the queued one starts once a slot is free
    listed = await tool(parent, "vibe_list")
    assert [w["status"] for w in listed["data"]["workers"]] == ["killed", "running"]


async def test_failed_worker_reports_its_exit(api, tool):
    parent = await vibe_run(api)
    await tool(parent, "vibe_spawn", {"label": "fails", "brief": brief("echo trying", "exit 3")})
    waited = await tool(parent, "vibe_wait", {"worker_id": "w1", "timeout_seconds": 120})
    assert waited["ok"] and waited["data"]["status"] == "failed"
    assert "trying" in waited["data"]["result"] and "status 3" in waited["data"]["result"]


async def test_closing_the_parent_kills_workers_and_closes_child_runs(
        api, tool, jp_root_dir, server_runtime, as_worker):
    parent = await vibe_run(api)
    spawned = await tool(parent, "vibe_spawn", {"label": "sleeper", "brief": brief("pidfile pids", "sleep")})
    child = spawned["data"]["child_run_id"]
    pids = [int(p) for p in (await wait_for_file(jp_root_dir / "pids")).split()]
    token = server_runtime.runs[parent].resources[Resource.WORKERS].get("w1").token
    assert (await as_worker(token, "GET", f"runs/{child}"))[0] == 200

    code, _ = await api("DELETE", f"runs/{parent}")
    assert code == 204
    assert not any(alive(pid) for pid in pids)
    code, ended = await api("GET", f"runs/{child}")
    assert code == 200 and ended["state"] == "ended", ended  # kept in the run store
    assert (await as_worker(token, "GET", f"runs/{child}"))[0] == 401  # the token died too


async def test_unknown_and_foreign_worker_ids(api, tool):
    mine, other = await vibe_run(api), await vibe_run(api)
    await tool(mine, "vibe_spawn", {"label": "x", "brief": "echo hi"})
    for run_id, worker_id in ((other, "w1"), (mine, "w9")):
        result = await tool(run_id, "vibe_wait", {"worker_id": worker_id})
        assert result["error"]["code"] == "not_found" and "vibe_list" in result["error"]["message"]
    await tool(mine, "vibe_wait", {"worker_id": "w1", "timeout_seconds": 120})


async def test_vibe_tools_only_in_vibe_mode(api):
    _, plain = await api("POST", "runs", {})
    assert not any(name.startswith("vibe_") for name in plain["tools"])
    _, readonly = await api("POST", "runs", {"vibe": True, "surface": "readonly"})
    assert {"vibe_spawn", "vibe_send", "vibe_wait", "vibe_kill", "vibe_list"} <= set(readonly["tools"])


async def test_worker_states_go_out_on_the_parents_event_stream(api, tool, jp_ws_fetch):
    parent = await vibe_run(api)
    socket = await jp_ws_fetch("agent-tools", "api", "runs", parent, "events")
    for _ in range(20):  # the stream is live once a call's events arrive
        await tool(parent, "vibe_list")
        try:
            await asyncio.wait_for(socket.read_message(), 1)
            break
        except asyncio.TimeoutError:
            continue
    await tool(parent, "vibe_spawn", {"label": "quick", "brief": "echo hi"})
    states = []
    while not states or states[-1] != "done":
        event = json.loads(await socket.read_message())
        if event["type"] == "worker_state":
            assert event["run_id"] == parent and event["worker_id"] == "w1"
            states.append(event["status"])
    assert states == ["queued", "running", "done"]
    socket.close()


def test_workers_reach_a_server_that_chose_its_port_when_it_started(tmp_path):
    """`--port=0`: the URL workers get is the bound one, not the configured port 0."""
    (tmp_path / "hello.txt").write_text("hi\n")
    config = tmp_path / "config.json"
    argv = [sys.executable, str(AGENT)]
    config.write_text(json.dumps({"WorkerPool": {"backend": "command"},
                                  "CommandBackend": {"argv": {"fast": argv, "good": argv}}}))
    with JupyterServerProcess(tmp_path, extra_args=[f"--config={config}"]) as server:
        run = server.client().create_run(vibe=True)
        assert run.call("vibe_spawn", {"label": "look", "brief": call_line("read", path="hello.txt")}).ok
        waited = run.call("vibe_wait", {"worker_id": "w1", "timeout_seconds": 120})
    assert waited.data["status"] == "done" and "read: ok" in waited.data["result"], waited.text
