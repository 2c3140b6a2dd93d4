"""A spare debugpy adapter, started after a launch, serves the next launch in the project.

What it saves (about a quarter of a second a launch) is measured by benchmarks/bench_dap.py.
"""

from __future__ import annotations

import asyncio

from debug_helpers import LINE_IN_ADD, ok, session_of, wait_ended

from jupyter_agent_tools.dap.supervisor import DebugSupervisor


async def spare_pid(supervisor: DebugSupervisor, bound: float = 20.0) -> int | None:
    """The spare adapter's pid once it has started (None if none came within `bound`)."""
    for _ in range(int(bound / 0.1)):
        spare = supervisor._spare
        if spare is not None and spare.session.processes is not None:
            return spare.session.processes.pid
        await asyncio.sleep(0.1)
    return None


async def launch_and_stop(run) -> dict:
    await ok(run, "breakpoints", file="app.py", lines=[LINE_IN_ADD])
    launched = await ok(run, "launch", program="app.py")
    assert launched.data["state"] == "stopped", launched.text
    return launched.data


async def test_the_next_launch_takes_the_spare_and_a_new_one_is_started(runtime, python_project):
    supervisor = runtime.provider("debug")
    first = await runtime.create_run(conversation_id="first")
    await launch_and_stop(first)
    spare = await spare_pid(supervisor)
    assert spare is not None and spare != session_of(runtime, "first").processes.pid

    second = await runtime.create_run(conversation_id="second")
    launched = await launch_and_stop(second)
    # The spare adapter runs the second debuggee, and works as any other: stack, evaluate.
    assert session_of(runtime, "second").processes.pid == spare
    assert (await ok(second, "evaluate", expression="a + b")).data["result"] == "0"
    next_spare = await spare_pid(supervisor)
    assert next_spare not in (None, spare)

    await runtime.shutdown()
    assert await wait_ended(spare, next_spare, launched["pid"]) == []


async def test_a_spare_ends_after_its_time_and_none_is_kept_when_turned_off(
        runtime_factory, python_project):
    runtime = runtime_factory({"DebugSupervisor": {"spare_adapter_seconds": 0.5}})
    run = await runtime.create_run(conversation_id="c")
    await launch_and_stop(run)
    spare = await spare_pid(runtime.provider("debug"))
    assert spare is not None
    assert await wait_ended(spare) == []
    assert runtime.provider("debug")._spare is None

    off = runtime_factory({"DebugSupervisor": {"spare_adapter_seconds": 0}})
    run = await off.create_run(conversation_id="c")
    await launch_and_stop(run)
    assert await spare_pid(off.provider("debug"), bound=2.0) is None


async def test_a_spare_that_died_is_not_used(runtime, python_project):
    supervisor = runtime.provider("debug")
    first = await runtime.create_run(conversation_id="first")
    await launch_and_stop(first)
    spare = await spare_pid(supervisor)
    assert spare is not None
    supervisor._spare.session.processes.process.kill()
    assert await wait_ended(spare) == []

    second = await runtime.create_run(conversation_id="second")
    await launch_and_stop(second)
    assert session_of(runtime, "second").processes.pid != spare
