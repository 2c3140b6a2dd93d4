"""bash: runs in the cwd, bounded in output and time, kills its process group."""

from __future__ import annotations

import os
import sys
import time


async def test_runs_in_the_working_directory(runtime, root):
    (root / "sub").mkdir()
    run = await runtime.create_run(cwd="sub")
    result = await run.call("bash", {"command": "pwd; echo err >&2"})
    assert result.ok
    assert result.text.splitlines() == [str((root / "sub").resolve()), "err"]


async def test_non_zero_exit_is_an_error_with_the_output(runtime):
    run = await runtime.create_run()
    result = await run.call("bash", {"command": "echo oops; exit 4"})
    assert result.code == "failed" and result.data["exit_code"] == 4
    assert result.text.startswith("oops")


async def test_timeout_kills_the_whole_process_group(runtime, root):
    run = await runtime.create_run()
    result = await run.call(
        "bash", {"command": "sleep 30 & echo $! > child.pid; echo started; wait", "timeout_seconds": 1}
    )
    assert result.code == "timeout" and "started" in result.text
    child = int((root / "child.pid").read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the background child survived the timeout")


async def test_output_is_bounded(runtime):
    runtime.max_output_chars = 1000
    runtime._wrappers = None
    run = await runtime.create_run()
    result = await run.call("bash", {"command": "yes | head -c 100000"})
    assert result.ok and len(result.text) < 1200 and "omitted" in result.text


async def test_the_servers_python_and_jupyter_come_first_on_path(runtime, monkeypatch):
    # Started as `.venv/bin/jupyter lab`, without activating the environment.
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    run = await runtime.create_run()
    result = await run.call("bash", {"command": "command -v python; command -v jupyter"})
    assert result.ok, result.text
    folder = os.path.dirname(sys.executable)
    assert result.text.splitlines() == [f"{folder}/python", f"{folder}/jupyter"]
