"""Long calls (issue 44 part 4): a call past c.Runtime.max_call_seconds answers `running` with
a job id and its output so far, and goes on as a job of the run that `job` waits for, reads
and cancels — with real kernels, real processes and a real notebook file."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_agent_tools.kernels.outputs import message_text

MAX_CALL_SECONDS = 1.5


def cell(code: str, description: str = "run a small test cell here") -> dict:
    return {"code": code, "description": description}


async def finish(run, job_id: str):
    """`job wait` until the job has ended (each wait is bounded): its last answer."""
    for _ in range(60):
        waited = await run.call("job", {"action": "wait", "job_id": job_id})
        if waited.data.get("status") != "running":
            return waited
    raise AssertionError(f"{job_id} never ended")


async def settled(run, name: str, args: dict):
    """A call's result once its work has ended (a kernel's start may pass max_call_seconds)."""
    result = await run.call(name, args)
    if result.ok and result.data.get("status") == "running":
        result = await finish(run, result.data["job_id"])
    return result


@pytest.fixture
def long_runtime(runtime_factory):
    return runtime_factory({
        "KernelFactory": {"warm_pool": {}, "idle_timeout_seconds": 30.0},
        "Runtime": {"max_call_seconds": MAX_CALL_SECONDS},
    })


def assert_running(result, *said: str) -> str:
    """A call that went on as a job: its id, and the plain words on how to go on."""
    assert result.ok, result.text
    assert result.data["status"] == "running", result.data
    job_id = result.data["job_id"]
    assert job_id.startswith("job-")
    for words in ("Still running", f'"wait", job_id: "{job_id}"', '"output"', '"cancel"',
                  *said):
        assert words in result.text, (words, result.text)
    return job_id


async def test_an_eval_past_max_call_seconds_goes_on_as_a_job(long_runtime):
    run = await long_runtime.create_run()
    assert (await settled(run, "eval", cell("kept = 41"))).ok  # the kernel is up first
    started = time.monotonic()
    answer = await run.call("eval", cell(
        "import time\nprint('started', flush=True)\ntime.sleep(4)\nprint('finished')\nkept + 1"))
    assert time.monotonic() - started < MAX_CALL_SECONDS + 1.5
    job_id = assert_running(answer, "started")
    assert "finished" not in answer.text and answer.data["output"].strip() == "started"

    # Output so far, as the cell streams it.
    output = await run.call("job", {"action": "output", "job_id": job_id})
    assert output.ok and output.data["status"] == "running" and "started" in output.text

    # While it runs in the background, another cell of the same interpreter is refused,
    # naming the job, rather than queued silently behind it.
    busy = await run.call("eval", cell("kept"))
    assert busy.code == "busy" and job_id in busy.error["message"]
    assert f'"wait", job_id: "{job_id}"' in busy.error["message"]

    # A wait is bounded by max_call_seconds too: it answers running again.
    waited_from = time.monotonic()
    again = await run.call("job", {"action": "wait", "job_id": job_id, "timeout_seconds": 60})
    assert time.monotonic() - waited_from < MAX_CALL_SECONDS + 1
    assert again.ok and again.data["status"] == "running" and "still running" in again.text

    final = await finish(run, job_id)
    assert final.ok and final.data["status"] == "done", final.text
    assert "started" in final.text and "finished" in final.text and "42" in final.text
    assert final.data["result"] == "42"  # the eval's own data, as the call would have said
    assert (await run.call("eval", cell("kept"))).text == "41"  # the interpreter is free

    # The transcript has the call as it answered, and the job's result where it was waited.
    entries = [entry.to_json() for entry in run.transcript.entries()]
    long_call = next(e for e in entries if e["tool"] == "eval" and "Still running" in e["text"])
    assert long_call["ok"] and job_id in long_call["text"]
    assert any(e["tool"] == "job" and "finished" in e["text"] and "42" in e["text"]
               for e in entries)


async def test_job_cancel_interrupts_the_cell_and_the_next_eval_runs_normally(long_runtime):
    run = await long_runtime.create_run()
    assert (await settled(run, "eval", cell("x = 5"))).ok
    answer = await run.call("eval", cell(
        "import time\nprint('sleeping', flush=True)\ntime.sleep(60)\nx = 0"))
    job_id = assert_running(answer, "sleeping")
    cancelled = await run.call("job", {"action": "cancel", "job_id": job_id})
    assert cancelled.ok and cancelled.data["status"] == "cancelled", cancelled.text
    # Interrupted (not restarted): the state is kept and the next cell runs at once.
    started = time.monotonic()
    after = await run.call("eval", cell("x + 1", "add one to the stored value"))
    assert after.ok and after.text == "6", after.text
    assert time.monotonic() - started < 10


async def test_a_request_cancelled_before_max_call_seconds_interrupts_the_cell(runtime_factory):
    # Today's behaviour stays: a client that gives up within the first max_call_seconds
    # cancels the call, which interrupts the cell; no job is left.
    runtime = runtime_factory({"KernelFactory": {"warm_pool": {}, "idle_timeout_seconds": 30.0},
                               "Runtime": {"max_call_seconds": 30.0}})
    run = await runtime.create_run()
    assert (await run.call("eval", cell("y = 1"))).ok
    call = asyncio.ensure_future(run.call("eval", cell("import time\ntime.sleep(60)\ny = 0")))
    await asyncio.sleep(1.5)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert run.jobs.background() == []
    after = await run.call("eval", cell("y"))
    assert after.ok and after.text == "1", after.text


async def test_a_quick_call_answers_as_before(long_runtime):
    run = await long_runtime.create_run()
    assert (await settled(run, "eval", cell("1"))).ok  # the kernel is up first
    result = await run.call("eval", cell("print('hi')\n2 + 2"))
    assert result.ok and result.data["status"] == "ok" and "job_id" not in result.data
    failed = await run.call("eval", cell("1 / 0"))
    assert failed.code == "failed" and "ZeroDivisionError" in failed.text
    assert run.jobs.background() == []


async def test_bash_past_max_call_seconds_goes_on_as_a_job(long_runtime):
    run = await long_runtime.create_run()
    answer = await run.call("bash", {"command": "echo first; sleep 3; echo second"})
    job_id = assert_running(answer, "first")
    listed = await run.call("job", {"action": "list"})
    assert [job["job_id"] for job in listed.data["jobs"]] == [job_id]
    final = await finish(run, job_id)
    assert final.ok and final.data["exit_code"] == 0, final.text
    assert "first" in final.text and "second" in final.text


async def test_closing_the_run_ends_a_long_call_gone_on_as_a_job(long_runtime, root: Path):
    run = await long_runtime.create_run()
    marker = root / "still-here"
    answer = await run.call("bash", {"command": f"sleep 4; touch {marker}"})
    assert_running(answer)
    await long_runtime.close_run(run.id)
    await asyncio.sleep(4)
    assert not marker.exists()


async def test_a_notebook_run_goes_on_as_a_job_and_its_outputs_land_in_the_file(
        long_runtime, root: Path):
    path = root / "slow.ipynb"
    nbformat.write(new_notebook(
        cells=[new_code_cell("print('one')"),
               new_code_cell("import time\ntime.sleep(3)\nprint('two')")],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}}), path)
    run = await long_runtime.create_run()
    # The notebook's kernel is up first (its start alone may pass max_call_seconds).
    warm = await settled(run, "notebook", {"action": "run", "path": "slow.ipynb", "cell": 1})
    assert warm.ok, warm.text
    answer = await run.call("notebook", {"action": "run_all", "path": "slow.ipynb"})
    job_id = assert_running(answer, "[cell 1", "one")
    # The first cell's outputs are in the notebook already; the second's come when it ends.
    first = json.loads(path.read_text())["cells"][0]
    assert "one" in "".join(first["outputs"][0]["text"])
    # A change to the same notebook would queue behind the job: it is refused, naming it.
    busy = await run.call("notebook", {"action": "insert", "path": "slow.ipynb",
                                       "source": "3"})
    assert busy.code == "busy" and job_id in busy.error["message"]
    final = await finish(run, job_id)
    assert final.ok and [c["status"] for c in final.data["cells"]] == ["ok", "ok"], final.text
    second = json.loads(path.read_text())["cells"][1]
    assert "two" in "".join(second["outputs"][0]["text"])
    inserted = await run.call("notebook", {"action": "insert", "path": "slow.ipynb",
                                           "source": "3"})
    assert inserted.ok, inserted.text


async def test_max_call_seconds_zero_never_makes_a_job(long_runtime):
    off = await long_runtime.create_run()
    long_runtime.max_call_seconds = 0
    plain = await off.call("bash", {"command": "sleep 2; echo done"})
    assert plain.ok and plain.data["exit_code"] == 0 and "job_id" not in plain.data


def test_a_cells_output_so_far_reads_as_plain_text():
    assert message_text("stream", {"name": "stdout", "text": "\x1b[31mred\x1b[0m\n"}) == "red\n"
    assert message_text("execute_result", {"data": {"text/plain": "42"}}) == "42\n"
    assert message_text("display_data", {"data": {"image/png": "iVBOR", "text/plain": "<Figure>"}}
                        ) == "[image/png image]\n"
    assert "ZeroDivisionError" in message_text("error", {"traceback": [
        "\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"]})
    assert message_text("execute_input", {"code": "1 / 0"}) == ""


def test_a_debug_continue_waits_at_most_max_call_seconds(long_runtime):
    # debug continue and the steps answer "still running" after stop_wait_seconds (status
    # checks again): never past max_call_seconds either.
    supervisor = long_runtime.provider("debug")
    assert supervisor.stop_wait_seconds > MAX_CALL_SECONDS
    assert supervisor._limits().stop_wait == MAX_CALL_SECONDS


async def test_an_eval_queued_behind_one_that_goes_on_as_a_job_says_it_waits(long_runtime):
    # Sent while the first was still in its first max_call_seconds: it queues (as before),
    # and past its own max_call_seconds goes on as a job too, saying what it waits for.
    run = await long_runtime.create_run()
    assert (await settled(run, "eval", cell("n = 1"))).ok
    first = asyncio.ensure_future(run.call("eval", cell("import time\ntime.sleep(3)\nn = 2")))
    await asyncio.sleep(0.3)
    second = await run.call("eval", cell("n * 10"))
    job_id = assert_running(second, "waiting for the eval call before it")
    assert_running(await first)
    final = await finish(run, job_id)
    assert final.ok and final.data["result"] == "20", final.text
