"""A Python found on PATH as a launcher script (pyenv's shim) is resolved to the interpreter it
picks for the project, so the script does not run before debugpy's launcher and the debuggee.

The shim here is a real shell script in the way pyenv's works: it picks an interpreter by a
file in the folder it runs in, then execs it; each run is logged.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from debug_helpers import ok

from jupyter_agent_tools.dap.adapters import LauncherScripts

SHIM = """\
#!/bin/sh
echo ran >> "{log}"
if [ -f .pick ]; then exec "$(cat .pick)" "$@"; fi
exec "{python}" "$@"
"""


@pytest.fixture
def shim(tmp_path: Path) -> Path:
    folder = tmp_path / "shims"
    folder.mkdir()
    path = folder / "python3"
    path.write_text(SHIM.format(log=tmp_path / "shim.log", python=sys.executable))
    path.chmod(0o755)
    return path


def shim_runs(shim: Path) -> int:
    log = shim.parent.parent / "shim.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


class Spawned:
    """The background refreshes a `LauncherScripts` asks for, to wait on."""

    def __init__(self) -> None:
        self.tasks: list[asyncio.Task[None]] = []

    def __call__(self, coroutine) -> None:
        self.tasks.append(asyncio.ensure_future(coroutine))

    async def settle(self) -> None:
        await asyncio.gather(*self.tasks)


async def test_a_script_is_resolved_per_folder_and_a_changed_pick_shows_next_time(
        shim: Path, tmp_path: Path):
    project = tmp_path / "project"
    project.mkdir()
    spawned = Spawned()
    scripts = LauncherScripts(10.0, spawned)

    assert await scripts.interpreter(str(shim), project) == sys.executable
    assert shim_runs(shim) == 1

    # The project now picks another interpreter (a link to ours: its sys.executable differs).
    other = tmp_path / "other-python"
    other.symlink_to(sys.executable)
    (project / ".pick").write_text(str(other))
    assert await scripts.interpreter(str(shim), project) == sys.executable  # known, at once
    await spawned.settle()  # the refresh that use asked for
    assert await scripts.interpreter(str(shim), project) == str(other)
    assert shim_runs(shim) == 2
    await spawned.settle()


async def test_a_script_that_fails_is_used_itself_and_a_binary_is_not_run(
        shim: Path, tmp_path: Path):
    project = tmp_path / "project"
    project.mkdir()
    (project / ".pick").write_text(str(tmp_path / "no-such-python"))
    scripts = LauncherScripts(10.0, Spawned())
    assert await scripts.interpreter(str(shim), project) == str(shim)

    binary = os.path.realpath(sys.executable)
    assert await scripts.interpreter(binary, project) == binary
    assert shim_runs(shim) == 1


async def test_a_launch_through_a_shim_runs_the_debuggee_in_the_picked_interpreter(
        runtime, python_project, shim: Path, monkeypatch):
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")
    run = await runtime.create_run(conversation_id="shim")
    result = await ok(run, "launch", program="app.py")
    assert result.data["state"] == "exited"
    output = (await ok(run, "output")).text
    assert f"python {sys.executable}" in output.splitlines()
    # The shim answered the question once; neither debugpy's launcher nor the debuggee ran it.
    assert shim_runs(shim) == 1
