"""bash owns what it starts (issue 42): double forks, nohup and setsid end with the call, the
run, a cancel; `bash {background: true}` is a job of the run, followed with the `job` tool.

Real bash children; a process counts as a survivor while its command line holds the test's
own token (a `sleep` duration no other process uses)."""

from __future__ import annotations

import asyncio
import time

from process_helpers import sleep_mark, survivors, survivors_after


async def until_started(mark: str, count: int, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while len(survivors(mark)) < count:
        assert time.monotonic() < deadline, f"only {survivors(mark)} started"
        await asyncio.sleep(0.05)


def escapes(mark: str) -> str:
    """A command line that starts `sleep mark` four ways a process group does not hold:
    a double fork, nohup, setsid, and a plain `&` without a redirect (which holds the pipe)."""
    return (f"(sleep {mark} &); nohup sleep {mark} >/dev/null 2>&1 & "
            f"setsid sleep {mark} & sleep {mark} & "
            f"sleep 0.2; echo started $(pgrep -f -c '^sleep {mark}')")


async def test_nothing_a_call_started_outlives_it(runtime):
    run = await runtime.create_run()
    mark = sleep_mark()
    # Without a keeper, `sleep &` holding stdout blocked the call until its timeout.
    result = await run.call("bash", {"command": escapes(mark), "timeout_seconds": 60})
    assert result.ok, result.text
    assert result.text.strip() == "started 4"
    assert survivors_after(mark) == []


async def test_a_timeout_ends_what_left_the_group(runtime):
    run = await runtime.create_run()
    mark = sleep_mark()
    result = await run.call("bash", {"command": f"setsid sleep {mark} & (sleep {mark} &); "
                                                f"echo up; sleep {mark}",
                                     "timeout_seconds": 1})
    assert result.code == "timeout" and "up" in result.text
    assert survivors_after(mark) == []


async def test_closing_the_run_ends_a_call_in_flight(runtime):
    run = await runtime.create_run()
    mark = sleep_mark()
    call = asyncio.ensure_future(run.call("bash", {"command": f"{escapes(mark)}; sleep {mark}",
                                                  "timeout_seconds": 600}))
    await until_started(mark, 5)
    await runtime.close_run(run.id)
    assert survivors_after(mark) == []
    result = await asyncio.wait_for(call, 10)
    assert result.code == "not_found" and "closed" in result.error["message"]


async def test_a_cancelled_call_ends_its_tree(runtime):
    run = await runtime.create_run()
    mark = sleep_mark()
    call = asyncio.ensure_future(run.call("bash", {"command": f"setsid sleep {mark} & "
                                                              f"sleep {mark}"}))
    await until_started(mark, 2)
    call.cancel()
    await asyncio.gather(call, return_exceptions=True)
    assert survivors_after(mark) == []


async def test_a_background_job_runs_on_and_is_followed_with_job(runtime):
    run = await runtime.create_run()
    mark = sleep_mark()
    started = await run.call("bash", {"command": f"echo one; setsid sleep {mark} & "
                                                 f"sleep {mark}", "background": True})
    assert started.ok and started.data == {"job_id": "job-1", "status": "running"}
    await until_started(mark, 2)

    output = await run.call("job", {"action": "output", "job_id": "job-1"})
    assert output.ok and output.data["status"] == "running" and "one" in output.text
    waited = await run.call("job", {"action": "wait", "job_id": "job-1", "timeout_seconds": 0.2})
    assert waited.ok and waited.data["status"] == "running" and "still running" in waited.text
    listed = await run.call("job", {"action": "list"})
    assert [(j["job_id"], j["status"]) for j in listed.data["jobs"]] == [("job-1", "running")]

    cancelled = await run.call("job", {"action": "cancel", "job_id": "job-1"})
    assert cancelled.ok and cancelled.data["status"] == "cancelled"
    assert survivors_after(mark) == []
    listed = await run.call("job", {"action": "list"})
    assert [(j["job_id"], j["status"]) for j in listed.data["jobs"]] == [("job-1", "cancelled")]


async def test_waiting_for_a_job_answers_as_the_call_would(runtime):
    run = await runtime.create_run()
    await run.call("bash", {"command": "echo fine", "background": True})
    await run.call("bash", {"command": "echo bad; exit 3", "background": True})
    done = await run.call("job", {"action": "wait", "job_id": "job-1", "timeout_seconds": 60})
    assert done.ok and done.data["status"] == "done" and done.data["exit_code"] == 0
    assert "fine" in done.text
    failed = await run.call("job", {"action": "wait", "job_id": "job-2", "timeout_seconds": 60})
    assert failed.code == "failed" and failed.data["status"] == "failed"
    assert failed.data["exit_code"] == 3 and "bad" in failed.text


async def test_a_background_job_ends_with_its_run(runtime):
    run = await runtime.create_run()
    mark = sleep_mark()
    assert (await run.call("bash", {"command": f"nohup sleep {mark} & sleep {mark}",
                                    "background": True})).ok
    await until_started(mark, 2)
    await runtime.close_run(run.id)
    assert survivors_after(mark) == []


async def test_the_jobs_of_a_run_are_bounded(runtime_factory):
    runtime = runtime_factory(max_jobs_per_run=1)
    run = await runtime.create_run()
    mark = sleep_mark()
    assert (await run.call("bash", {"command": f"sleep {mark}", "background": True})).ok
    refused = await run.call("bash", {"command": "true", "background": True})
    assert refused.code == "busy" and "max_jobs_per_run" in refused.error["message"]
    await runtime.close_run(run.id)
    assert survivors_after(mark) == []


async def test_job_answers_what_to_do_when_it_cannot(runtime):
    run = await runtime.create_run()
    unknown = await run.call("job", {"action": "wait", "job_id": "job-9"})
    assert unknown.code == "not_found" and "list" in unknown.error["message"]
    missing = await run.call("job", {"action": "cancel"})
    assert missing.code == "invalid_arguments" and "job_id" in missing.error["message"]


async def test_job_is_never_gated_and_absent_where_nothing_can_start_one(runtime):
    asking = await runtime.create_run(approvals="ask")
    # A read-tier call: no card is shown, the answer comes at once.
    listed = await asyncio.wait_for(asking.call("job", {"action": "list"}), 10)
    assert listed.ok and "No jobs" in listed.text
    plan = await runtime.create_run(surface="plan")
    assert "job" not in plan.tool_names() and "bash" not in plan.tool_names()
