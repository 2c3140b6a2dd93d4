"""Agent work as the server's activity (activity.py): what counts, and what the server reports.

Embedded runtimes with real calls, cards and workers; then a real Jupyter server, whose
`web_app.last_activity()` (what jupyterhub-singleuser sends the hub) moves on during a silent
eval. tests/hub runs the same under a hub with its idle culler.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from datetime import datetime, timezone

import pytest

from jupyter_agent_tools.activity import ACTIVITY_SETTING, AgentActivity
from jupyter_agent_tools.workers import WorkerRun

WAIT = 30  # seconds: a bound on waits that should end at once, never an assertion


@pytest.fixture
def make_worker_runtime(runtime_factory):
    """`make_worker_runtime(agent)`: an embedded Runtime whose workers run `agent` in-process."""
    return lambda agent: runtime_factory({"WorkerPool": {"backend": "python"},
                                          "PythonBackend": {"agent": agent}})


def activity_of(runtime, waiting_cards_count: bool = True) -> tuple[AgentActivity, dict]:
    settings: dict = {}
    return AgentActivity(runtime, settings, interval_seconds=1,
                         waiting_cards_count=waiting_cards_count), settings


async def test_a_call_in_flight_is_activity_and_its_end_is_the_last(runtime):
    activity, settings = activity_of(runtime)
    run = await runtime.create_run()
    activity.refresh()
    assert activity.busy_runs() == [] and ACTIVITY_SETTING not in settings  # nothing done yet
    call = asyncio.ensure_future(run.call("bash", {"command": "sleep 1"}))
    await asyncio.sleep(0.3)
    assert activity.busy_runs() == [run.id]
    before = datetime.now(timezone.utc)
    activity.refresh()
    assert settings[ACTIVITY_SETTING] >= before
    assert (await asyncio.wait_for(call, WAIT)).ok
    assert activity.busy_runs() == []
    activity.refresh()
    # Idle now: the activity is when the call ended, and it stays there.
    ended = settings[ACTIVITY_SETTING]
    assert abs(ended.timestamp() - run.last_call_at) < 1e-3
    time.sleep(0.05)
    activity.refresh()
    assert settings[ACTIVITY_SETTING] == ended


async def test_a_card_waiting_for_a_human_counts_unless_configured_not_to(runtime):
    counting, _ = activity_of(runtime)
    not_counting, _ = activity_of(runtime, waiting_cards_count=False)
    run = await runtime.create_run(space="lab")
    async with await runtime.connect_human("lab") as human:
        call = asyncio.ensure_future(run.call("ask_user", {"question": "Go on?"}))
        card = await human.next_card(timeout=WAIT)
        assert counting.busy_runs() == [run.id]
        assert not_counting.busy_runs() == []
        await human.answer(card["id"], text="yes")
        assert (await asyncio.wait_for(call, WAIT)).ok
    assert counting.busy_runs() == []


async def test_a_running_worker_is_activity(make_worker_runtime):
    gates: dict[str, asyncio.Event] = defaultdict(asyncio.Event)

    async def agent(brief: str, run: WorkerRun) -> str:
        await gates[brief].wait()
        return "done"

    runtime = make_worker_runtime(agent)
    activity, _ = activity_of(runtime)
    parent = await runtime.create_run(vibe=True)
    assert (await parent.call("vibe_spawn", {"brief": "b", "label": "b"})).ok
    # No call of the parent is in flight: the worker alone keeps it busy.
    assert parent.calls_in_flight == 0 and parent.id in activity.busy_runs()
    gates["b"].set()
    assert (await parent.call("vibe_wait", {"worker_id": "w1"})).data["status"] == "done"
    assert activity.busy_runs() == []


async def test_a_running_background_job_is_activity(runtime):
    activity, _ = activity_of(runtime)
    run = await runtime.create_run()
    assert (await run.call("bash", {"command": "sleep 600", "background": True})).ok
    # Its call has ended: the job alone keeps the run busy, until it is cancelled.
    assert run.calls_in_flight == 0 and activity.busy_runs() == [run.id]
    assert (await run.call("job", {"action": "cancel", "job_id": "job-1"})).ok
    assert activity.busy_runs() == []


async def test_the_server_reports_a_silent_eval_as_activity(jp_serverapp, api):
    """While an eval sleeps (no request, no kernel message), the server's last activity keeps
    moving, by the extension's periodic check (its interval shortened here)."""
    web_app = jp_serverapp.web_app
    extension = jp_serverapp.extension_manager.extension_apps["jupyter_agent_tools"]
    app = next(iter(extension))
    app.activity.stop()
    app.activity.interval_seconds = 0.2
    app.activity.start()
    code, run = await api("POST", "runs", {})
    assert code == 201
    warm = await api("POST", f"runs/{run['id']}/calls", {"tool": "eval", "args": {
        "code": "1", "description": "start the kernel before the silent cell"}})
    assert warm[1]["ok"], warm
    call = asyncio.ensure_future(api("POST", f"runs/{run['id']}/calls", {"tool": "eval", "args": {
        "code": "import time; time.sleep(2)", "description": "a silent cell of two seconds"}}))
    await asyncio.sleep(0.5)
    first = web_app.last_activity()
    await asyncio.sleep(1.0)
    assert web_app.settings[ACTIVITY_SETTING] > first
    assert web_app.last_activity() > first
    code, result = await asyncio.wait_for(call, WAIT)
    assert code == 200 and result["ok"], result
