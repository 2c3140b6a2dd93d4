"""The debug tool with a live debugpy adapter, end to end."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

from debug_helpers import (
    LINE_CALL_ADD,
    LINE_IN_ADD,
    LINE_PRINT_TOTAL,
    debug,
    free_port,
    ok,
    session_of,
    wait_ended,
    wait_listening,
)
from traitlets.config import Config

from jupyter_agent_tools import Runtime


async def test_breakpoints_stop_inspect_step_output_terminate(runtime, python_project):
    run = await runtime.create_run(conversation_id="conv")
    assert "debug" in run.tool_names()
    await ok(run, "breakpoints", file="app.py", lines=[LINE_IN_ADD])

    launched = await ok(run, "launch", program="app.py")
    assert launched.data["state"] == "stopped"
    assert launched.data["reason"] == "breakpoint"
    assert launched.data["frame"]["file"] == "app.py"
    assert launched.data["frame"]["line"] == LINE_IN_ADD
    assert "c = a + b" in launched.text
    debuggee, adapter = launched.data["pid"], session_of(runtime, "conv").processes.pid

    threads = await ok(run, "threads")
    assert threads.data["threads"]
    stack = await ok(run, "stack")
    names = [frame["name"] for frame in stack.data["frames"]]
    assert names[:2] == ["add", "main"]
    add_frame, main_frame = stack.data["frames"][0]["id"], stack.data["frames"][1]["id"]

    scopes = await ok(run, "scopes", frame_id=add_frame)
    locals_ref = scopes.data["scopes"][0]["reference"]
    variables = await ok(run, "variables", reference=locals_ref)
    assert {v["name"]: v["value"] for v in variables.data["variables"]} == {"a": "0", "b": "0"}

    # evaluated in each frame's own scope
    assert (await ok(run, "evaluate", expression="a + b + 1", frame_id=add_frame)).data[
        "result"] == "1"
    assert (await ok(run, "evaluate", expression="total", frame_id=main_frame)).data[
        "result"] == "0"
    assert (await ok(run, "evaluate", expression="b - 1")).data["result"] == "-1"  # top frame
    failed = await debug(run, "evaluate", expression="i * 10", frame_id=add_frame)
    assert failed.code == "failed" and "NameError" in failed.error["message"]

    # bounded: values cut at 400 characters, at most 50 children
    long = await ok(run, "evaluate", expression="'x' * 1000")
    assert len(long.data["result"]) == 400 and long.data["result"].endswith("…")
    many = await ok(run, "evaluate", expression="list(range(100))")
    children = await ok(run, "variables", reference=many.data["reference"])
    assert len(children.data["variables"]) == 50 and children.data["truncated"]

    stepped = await ok(run, "step_over")
    assert stepped.data["reason"] == "step" and stepped.data["frame"]["line"] == LINE_IN_ADD + 1

    # references die on resume
    stale = await debug(run, "variables", reference=locals_ref)
    assert stale.code == "invalid_arguments" and stale.error["message"] == (
        f"reference {locals_ref} is not from the current stop (references die when execution "
        "resumes); call scopes or evaluate again for fresh ones.")

    out = await ok(run, "step_out")
    assert out.data["frame"]["name"] == "main" and out.data["frame"]["line"] == LINE_CALL_ADD
    stale_frame = await debug(run, "scopes", frame_id=add_frame)  # `add` has returned
    assert stale_frame.code == "invalid_arguments"
    assert stale_frame.error["message"].endswith("; call stack again for fresh frame ids.")

    await ok(run, "breakpoints", file="app.py", lines=[])
    assert (await ok(run, "step_over")).data["frame"]["line"] == LINE_CALL_ADD - 1  # for loop
    assert (await ok(run, "step_over")).data["frame"]["line"] == LINE_CALL_ADD
    stepped_in = await ok(run, "step_in")
    assert stepped_in.data["frame"]["name"] == "add"

    finished = await ok(run, "continue")
    assert finished.data["state"] == "exited" and finished.data["exit_code"] == 0
    assert "total 3" in finished.text

    output = await ok(run, "output")
    assert "total 3\n" in output.text and "to stderr" in output.text
    assert "telemetry" not in output.text and "ptvsd" not in output.text

    await ok(run, "terminate")
    assert await wait_ended(debuggee, adapter) == []
    missing = await debug(run, "status")
    assert missing.code == "no_session"


async def test_second_launch_is_rejected_and_no_session_is_explained(runtime, python_project):
    run = await runtime.create_run(conversation_id="twice")
    none = await debug(run, "stack")
    assert none.code == "no_session" and "launch" in none.error["message"]

    await ok(run, "breakpoints", file="app.py", lines=[LINE_IN_ADD])
    first = await ok(run, "launch", program="app.py")
    second = await debug(run, "launch", program="app.py")
    assert second.code == "session_exists" and "terminate" in second.error["message"]
    attach = await debug(run, "attach", port=5678)
    assert attach.code == "session_exists"
    # the first session is untouched
    assert (await ok(run, "status")).data["pid"] == first.data["pid"]

    # breakpoints sent to the live session move where it stops next
    sent = await ok(run, "breakpoints", file="app.py", lines=[LINE_PRINT_TOTAL])
    assert sent.data["sent"] and sent.data["breakpoints"][0]["verified"]
    stopped = await ok(run, "continue")  # the file's set was replaced: add's is gone
    assert stopped.data["frame"]["line"] == LINE_PRINT_TOTAL
    status = await ok(run, "status")
    assert status.data["state"] == "stopped" and f"app.py:{LINE_PRINT_TOTAL}" in status.text

    # another conversation has its own session space
    other = await runtime.create_run(conversation_id="someone-else")
    assert (await debug(other, "status")).code == "no_session"


async def test_project_virtualenv_runs_the_debuggee(runtime, project_venv):
    run = await runtime.create_run(conversation_id="venv")
    result = await ok(run, "launch", program="app.py")
    assert result.data["state"] == "exited"
    output = (await ok(run, "output")).text
    interpreter = next(line for line in output.splitlines() if line.startswith("python "))
    interpreter = interpreter.removeprefix("python ")
    assert interpreter == str(project_venv / "bin" / "python")


async def test_hard_ttl_ends_debuggee_and_adapter(root, python_project, jp_asyncio_loop):
    config = Config({"DebugSupervisor": {"session_ttl_seconds": 1.0}})
    runtime = Runtime(root_dir=str(root), config=config)
    try:
        run = await runtime.create_run(conversation_id="ttl")
        await ok(run, "breakpoints", file="app.py", lines=[LINE_IN_ADD])
        launched = await ok(run, "launch", program="app.py")
        adapter = session_of(runtime, "ttl").processes.pid
        assert await wait_ended(launched.data["pid"], adapter) == []
        expired = await debug(run, "status")
        assert expired.code == "no_session" and "time limit" in expired.error["message"]
        # said once; after that there is simply no session
        again = await debug(run, "status")
        assert again.code == "no_session" and "time limit" not in again.error["message"]
    finally:
        await runtime.shutdown()


async def test_adapter_killed_mid_session(runtime, python_project):
    run = await runtime.create_run(conversation_id="killed")
    await ok(run, "breakpoints", file="app.py", lines=[LINE_IN_ADD])
    launched = await ok(run, "launch", program="app.py")
    session = session_of(runtime, "killed")
    tracked = [p.pid for p in session.processes.alive()]
    os.kill(session.processes.pid, signal.SIGKILL)

    assert await wait_ended(launched.data["pid"], *tracked) == []
    result = await debug(run, "stack")
    assert result.code == "no_session"
    assert "adapter" in result.error["message"] and "launch" in result.error["message"]


async def test_closing_the_run_and_shutdown_end_sessions(runtime, python_project):
    run = await runtime.create_run(conversation_id="close")
    await ok(run, "breakpoints", file="app.py", lines=[LINE_IN_ADD])
    launched = await ok(run, "launch", program="app.py")
    adapter = session_of(runtime, "close").processes.pid
    await runtime.close_run(run.id)
    assert await wait_ended(launched.data["pid"], adapter) == []

    run = await runtime.create_run(conversation_id="shutdown")
    await ok(run, "breakpoints", file="app.py", lines=[LINE_IN_ADD])
    launched = await ok(run, "launch", program="app.py")
    adapter = session_of(runtime, "shutdown").processes.pid
    await runtime.shutdown()
    assert await wait_ended(launched.data["pid"], adapter) == []


async def test_attach_to_a_listening_debuggee_and_detach(runtime, python_project):
    port = free_port()
    debuggee = subprocess.Popen(
        [sys.executable, "-m", "debugpy", "--listen", f"127.0.0.1:{port}", "--wait-for-client",
         "app.py"], cwd=python_project, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert await wait_listening(port)
        run = await runtime.create_run(conversation_id="attach")
        await ok(run, "breakpoints", file="app.py", lines=[LINE_IN_ADD])
        attached = await ok(run, "attach", port=port, adapter="debugpy")
        assert attached.data["reason"] == "breakpoint"
        assert attached.data["frame"]["line"] == LINE_IN_ADD
        await ok(run, "breakpoints", file="app.py", lines=[])
        detached = await ok(run, "terminate")
        assert "keeps running" in detached.text
        # not ours: it was detached from, not killed, and finishes on its own
        assert await asyncio.to_thread(debuggee.wait, 60) == 0
    finally:
        if debuggee.poll() is None:
            os.killpg(debuggee.pid, signal.SIGKILL)
        debuggee.wait()


async def test_attach_where_nothing_listens(runtime, python_project):
    run = await runtime.create_run(conversation_id="attach-nothing")
    failed = await debug(run, "attach", port=free_port(), adapter="debugpy")
    assert failed.code == "failed" and "nothing answered" in failed.error["message"]
    assert (await debug(run, "status")).code == "no_session"


async def test_runs_of_one_conversation_share_its_session(runtime, python_project):
    first = await runtime.create_run(conversation_id="shared")
    second = await runtime.create_run(conversation_id="shared")
    await ok(first, "breakpoints", file="app.py", lines=[LINE_IN_ADD])
    launched = await ok(first, "launch", program="app.py")
    assert (await ok(second, "status")).data["pid"] == launched.data["pid"]
    assert (await debug(second, "launch", program="app.py")).code == "session_exists"

    await runtime.close_run(first.id)
    told = await debug(second, "status")
    assert told.code == "no_session" and "the run that started it closed" in told.error["message"]
    assert await wait_ended(launched.data["pid"]) == []
