"""Python workers: in-process agents driving their child runs through the same paths."""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict

import pytest
from worker_helpers import until

from jupyter_agent_tools.runtime import Resource
from jupyter_agent_tools.workers import WorkerRun
from jupyter_agent_tools.workers.python_backend import WorkerStopped


class Gated:
    """An async agent that says it started, then blocks until the test opens its gate."""

    def __init__(self) -> None:
        self.started: dict[str, asyncio.Event] = defaultdict(asyncio.Event)
        self.gates: dict[str, asyncio.Event] = defaultdict(asyncio.Event)
        self.briefs: list[str] = []
        self.cancelled: list[str] = []

    @property
    def agent(self):
        """The agent function (config deep-copies values: a function is kept as is)."""

        async def agent(brief: str, run: WorkerRun) -> str:
            return await self.run(brief, run)

        return agent

    async def run(self, brief: str, run: WorkerRun) -> str:
        self.briefs.append(brief)
        name = brief.splitlines()[0]
        self.started[name].set()
        try:
            await self.gates[name].wait()
        except asyncio.CancelledError:
            self.cancelled.append(name)
            raise
        return f"{name} done after {len(brief.splitlines())} lines"


async def test_agent_calls_go_through_the_child_run(make_runtime, root):
    (root / "hello.txt").write_text("hi\n")

    async def agent(brief: str, run: WorkerRun) -> str:
        read = await run.call("read", {"path": "hello.txt"})
        write = await run.call("write", {"path": "out.txt", "content": "x"})
        return f"{brief}: read {read.ok}, write {write.code}, {run.tier}"

    runtime = make_runtime(agent)
    parent = await runtime.create_run(vibe=True)
    spawned = await parent.call("vibe_spawn", {"brief": "look", "label": "look"})
    assert spawned.ok and spawned.data["status"] == "queued"
    waited = await parent.call("vibe_wait", {"worker_id": "w1"})
    assert waited.data["status"] == "done"
    assert waited.data["result"] == "look: read True, write unknown_tool, fast"
    child = runtime.get_run(waited.data["child_run_id"])
    assert child.options.parent_id == parent.id and child.surface.value == "readonly"
    assert [(e.tool, e.origin) for e in child.transcript.entries()] == [
        ("read", "worker"), ("write", "worker")]
    assert not (root / "out.txt").exists()


async def test_sync_agent_runs_in_a_thread(make_runtime, root):
    def agent(brief: str, run: WorkerRun) -> str:
        result = run.call_sync("write", {"path": "out.txt", "content": brief})
        return result.text

    runtime = make_runtime(agent)
    parent = await runtime.create_run(vibe=True)
    await parent.call("vibe_spawn", {"brief": "from a thread", "label": "t", "tier": "good"})
    waited = await parent.call("vibe_wait", {"worker_id": "w1"})
    assert waited.data["status"] == "done", waited.text
    assert (root / "out.txt").read_text() == "from a thread"


async def test_send_wait_timeout_and_kill(make_runtime):
    agent = Gated()
    runtime = make_runtime(agent.agent)
    parent = await runtime.create_run(vibe=True)
    await parent.call("vibe_spawn", {"brief": "a", "label": "gated"})
    await agent.started["a"].wait()
    waited = await parent.call("vibe_wait", {"worker_id": "w1", "timeout_seconds": 0})
    assert waited.ok and not waited.data["finished"] and "still running" in waited.text

    sent = await parent.call("vibe_send", {"worker_id": "w1", "message": "and more"})
    assert sent.ok and sent.data["restarts"] == 1
    assert agent.cancelled == ["a"]  # the first execution was stopped
    await until(lambda: len(agent.briefs) == 2)
    assert agent.briefs[1] == "a\n\nand more"
    agent.gates["a"].set()
    waited = await parent.call("vibe_wait", {"worker_id": "w1"})
    assert waited.data["status"] == "done" and waited.data["result"] == "a done after 3 lines"

    await parent.call("vibe_spawn", {"brief": "b", "label": "gated"})
    await agent.started["b"].wait()
    killed = await parent.call("vibe_kill", {"worker_id": "w2"})
    assert killed.data["killed"] and killed.data["status"] == "killed"
    assert agent.cancelled == ["a", "b"]


async def test_concurrency_limit_queues_spawns(make_runtime):
    agent = Gated()
    runtime = make_runtime(agent.agent, max_running=1)
    parent = await runtime.create_run(vibe=True)
    for name in ("a", "b"):
        await parent.call("vibe_spawn", {"brief": name, "label": name})
    await agent.started["a"].wait()
    listed = await parent.call("vibe_list", {})
    assert [w["status"] for w in listed.data["workers"]] == ["running", "queued"]
    assert runtime.providers[Resource.WORKERS].slots.locked()

    agent.gates["a"].set()
    await agent.started["b"].wait()
    listed = await parent.call("vibe_list", {})
    assert [w["status"] for w in listed.data["workers"]] == ["done", "running"]
    status = await runtime.status()
    assert status["resources"]["workers"]["running"] == 1


async def test_state_changes_go_out_on_the_parent_stream(make_runtime):
    async def agent(brief: str, run: WorkerRun) -> str:
        return "ok"

    runtime = make_runtime(agent)
    parent = await runtime.create_run(vibe=True)
    async with parent.events.subscribe() as queue:
        await parent.call("vibe_spawn", {"brief": "x", "label": "quick"})
        await parent.call("vibe_wait", {"worker_id": "w1"})
        events = [queue.get_nowait() for _ in range(queue.qsize())]
    states = [(e["worker_id"], e["status"]) for e in events if e["type"] == "worker_state"]
    assert states == [("w1", "queued"), ("w1", "running"), ("w1", "done")]
    assert all(e["run_id"] == parent.id for e in events)


async def test_workers_of_another_run_are_invisible(make_runtime):
    runtime = make_runtime(Gated().agent)
    mine, other = await runtime.create_run(vibe=True), await runtime.create_run(vibe=True)
    await mine.call("vibe_spawn", {"brief": "a", "label": "a"})
    for tool, args in (("vibe_wait", {"worker_id": "w1"}), ("vibe_kill", {"worker_id": "w1"}),
                       ("vibe_send", {"worker_id": "w1", "message": "m"})):
        result = await other.call(tool, args)
        assert result.code == "not_found" and "none" in result.error["message"]
    assert (await other.call("vibe_list", {})).data["workers"] == []


@pytest.mark.parametrize("parent, tier, child", [
    ({"surface": "full", "approvals": "auto"}, "good", ("full", "auto")),
    ({"surface": "full", "approvals": "ask"}, "good", ("full", "ask")),
    ({"surface": "full", "approvals": "deny"}, "good", ("full", "deny")),
    ({"surface": "full", "approvals": "auto"}, "fast", ("readonly", "auto")),
    ({"surface": "plan", "approvals": "auto"}, "good", ("plan", "auto")),
    ({"surface": "readonly", "approvals": "auto"}, "good", ("readonly", "auto")),
])
async def test_a_child_never_gets_more_than_its_parent(make_runtime, parent, tier, child):
    runtime = make_runtime(Gated().agent)
    run = await runtime.create_run(vibe=True, space="lab", **parent)
    spawned = await run.call("vibe_spawn", {"brief": "a", "label": "a", "tier": tier})
    worker_run = runtime.get_run(spawned.data["child_run_id"])
    assert (worker_run.surface.value, worker_run.gate.policy.value) == child
    assert worker_run.space == "lab" and not worker_run.options.vibe
    assert "vibe_spawn" not in worker_run.tool_names()  # workers do not spawn workers


async def test_closing_the_parent_kills_workers_and_closes_child_runs(make_runtime):
    agent = Gated()
    runtime = make_runtime(agent.agent)
    parent = await runtime.create_run(vibe=True)
    spawned = await parent.call("vibe_spawn", {"brief": "a", "label": "a"})
    await agent.started["a"].wait()
    await runtime.close_run(parent.id)
    assert agent.cancelled == ["a"]
    assert spawned.data["child_run_id"] not in runtime.runs and not runtime.runs


async def test_failures_say_what_to_do(make_runtime):
    async def broken(brief: str, run: WorkerRun) -> str:
        raise ValueError("no luck")

    parent = await make_runtime(broken).create_run(vibe=True)
    await parent.call("vibe_spawn", {"brief": "x", "label": "x"})
    waited = await parent.call("vibe_wait", {"worker_id": "w1"})
    assert waited.data["status"] == "failed" and "ValueError: no luck" in waited.data["result"]

    unconfigured = await make_runtime(None).create_run(vibe=True)
    result = await unconfigured.call("vibe_spawn", {"brief": "x", "label": "x"})
    assert result.code == "unavailable" and "c.PythonBackend.agent" in result.error["message"]

    bad_backend = await make_runtime(None, backend="nope").create_run(vibe=True)
    result = await bad_backend.call("vibe_spawn", {"brief": "x", "label": "x"})
    assert result.code == "unavailable" and "c.WorkerPool.backend" in result.error["message"]


async def test_command_backend_needs_a_server_and_a_program(make_runtime):
    runtime = make_runtime(None, backend="command")
    parent = await runtime.create_run(vibe=True)
    result = await parent.call("vibe_spawn", {"brief": "x", "label": "x"})
    assert result.code == "unavailable" and "c.CommandBackend.argv" in result.error["message"]
    status = (await runtime.status())["resources"]["workers"]
    assert status["tiers"]["fast"]["available"] is False


async def test_results_and_worker_counts_are_bounded(make_runtime):
    async def chatty(brief: str, run: WorkerRun) -> str:
        return "x" * 50_000 + "END"

    runtime = make_runtime(chatty, max_result_chars=1000, max_workers_per_run=2)
    parent = await runtime.create_run(vibe=True)
    for _ in range(3):  # the third forgets the oldest finished worker
        spawned = await parent.call("vibe_spawn", {"brief": "x", "label": "x"})
        waited = await parent.call("vibe_wait", {"worker_id": spawned.data["worker_id"]})
        assert len(waited.data["result"]) < 1100 and waited.data["result"].endswith("END")
    listed = await parent.call("vibe_list", {})
    assert [w["worker_id"] for w in listed.data["workers"]] == ["w2", "w3"]
    assert all(len(w["result"]) < 600 for w in listed.data["workers"])

    gated = Gated()
    busy = await make_runtime(gated.agent, max_workers_per_run=1).create_run(vibe=True)
    await busy.call("vibe_spawn", {"brief": "a", "label": "a"})
    refused = await busy.call("vibe_spawn", {"brief": "b", "label": "b"})
    assert refused.code == "unavailable" and "vibe_kill" in refused.error["message"]


async def test_a_killed_sync_agent_is_refused_further_calls(make_runtime):
    started, release = threading.Event(), threading.Event()
    outcome: list[str] = []

    def agent(brief: str, run: WorkerRun) -> str:
        started.set()
        release.wait(60)
        try:
            run.call_sync("read", {"path": "."})
        except WorkerStopped as stopped:
            outcome.append(str(stopped))
        return "late"

    runtime = make_runtime(agent)
    parent = await runtime.create_run(vibe=True)
    await parent.call("vibe_spawn", {"brief": "x", "label": "x"})
    # Killed once its thread runs (a kill before that leaves no thread to refuse).
    await until(started.is_set)
    killed = await parent.call("vibe_kill", {"worker_id": "w1"})
    assert killed.data["status"] == "killed"
    release.set()
    await until(lambda: outcome)
    assert "was stopped" in outcome[0]
    assert (await parent.call("vibe_list", {})).data["workers"][0]["status"] == "killed"


async def test_plug_in_backend_by_module_and_class(make_runtime):
    runtime = make_runtime(None, backend="worker_helpers:EchoBackend")
    parent = await runtime.create_run(vibe=True)
    await parent.call("vibe_spawn", {"brief": "hello", "label": "x", "tier": "good"})
    waited = await parent.call("vibe_wait", {"worker_id": "w1"})
    assert waited.data["result"] == "good: hello"


async def test_plug_in_backend_from_the_entry_point_group(make_runtime, tmp_path, monkeypatch):
    dist = tmp_path / "site" / "echo_backend-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: echo-backend\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[jupyter_agent_tools.worker_backends]\necho = worker_helpers:EchoBackend\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    parent = await make_runtime(None, backend="echo").create_run(vibe=True)
    await parent.call("vibe_spawn", {"brief": "hi", "label": "x"})
    assert (await parent.call("vibe_wait", {"worker_id": "w1"})).data["result"] == "fast: hi"


async def test_the_shipped_scripted_agent(make_runtime, root):
    (root / "a.py").write_text("x = 1\n")
    runtime = make_runtime("jupyter_agent_tools.testing.agents:scripted_agent")
    parent = await runtime.create_run(vibe=True)
    brief = 'Look around.\ncall glob {"pattern": "*.py"}\ncall write {"path": "a.py", "content": ""}'
    await parent.call("vibe_spawn", {"brief": brief, "label": "script"})
    waited = await parent.call("vibe_wait", {"worker_id": "w1"})
    assert waited.data["result"].splitlines() == ["glob: ok (1 lines of output)",
                                                  "write: error unknown_tool"]
