"""Processes die with their owner (issue 42), against a real `jupyter server`: a `bash` call, a
background job and a worker command's children (setsid'ed, double-forked, nohup'ed) end when
the server stops by SIGTERM or is killed with `kill -9`, and a server that starts kills what
a dead one left (the sweep)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from process_helpers import ended, sleep_mark, survivors_after, wait_for_survivors

from jupyter_agent_tools.processes import OWNER_ENV, owner_token
from jupyter_agent_tools.testing.server import JupyterServerProcess

AGENT = Path(__file__).parent / "workers" / "scripted_agent.py"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="keepers need Linux (prctl)")


def escaping(mark: str) -> str:
    """Starts five `sleep mark`: double-forked, nohup'ed, setsid'ed, `&` and in the shell."""
    return (f"(sleep {mark} &); nohup sleep {mark} >/dev/null 2>&1 & setsid sleep {mark} & "
            f"sleep {mark} & sleep {mark}")


def call_in_thread(run, tool: str, args: dict) -> threading.Thread:
    """A call that blocks until the server ends it (or dies: the error is the point)."""
    def call() -> None:
        try:
            run.call(tool, args)
        except Exception:  # noqa: BLE001 - the server went away mid-call, as intended
            pass

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    return thread


def wait_for_file(path: Path, within_seconds: float = 60.0) -> str:
    deadline = time.monotonic() + within_seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)
    return path.read_text()


def test_sigterm_of_the_server_ends_calls_and_jobs(tmp_path):
    mark = sleep_mark()
    with JupyterServerProcess(tmp_path) as server:
        deleted, deleted_mark = server.client().create_run(), sleep_mark()
        call_in_thread(deleted, "bash", {"command": escaping(deleted_mark),
                                         "timeout_seconds": 600})
        wait_for_survivors(deleted_mark, 5)
        deleted.close()  # DELETE of the run while its call runs
        assert survivors_after(deleted_mark) == []

        run = server.client().create_run()
        assert run.call("bash", {"command": f"setsid sleep {mark} & sleep {mark}",
                                 "background": True}).ok
        call_in_thread(run, "bash", {"command": escaping(mark), "timeout_seconds": 600})
        wait_for_survivors(mark, 7)
        server.terminate()
        # The stop hook ran (not only the keepers' death signal): the runs were closed.
        assert "agent-tools: stopped; 1 run(s) closed" in server.log_tail()
        assert survivors_after(mark) == []


def test_kill_9_of_the_server_ends_calls_and_worker_commands(tmp_path):
    mark = sleep_mark()
    config = tmp_path / "config.json"
    argv = [sys.executable, str(AGENT)]
    config.write_text(json.dumps({"WorkerPool": {"backend": "command"},
                                  "CommandBackend": {"argv": {"fast": argv, "good": argv}}}))
    root = tmp_path / "root"
    root.mkdir()
    with JupyterServerProcess(root, extra_args=[f"--config={config}"]) as server:
        run = server.client().create_run(vibe=True)
        assert run.call("vibe_spawn", {"label": "stays", "brief": "pidfile pids\ndetach detached\n"
                                                                  "sleep"}).ok
        call_in_thread(run, "bash", {"command": escaping(mark), "timeout_seconds": 600})
        worker = [int(pid) for pid in wait_for_file(root / "pids").split()]
        detached = int(wait_for_file(root / "detached"))
        wait_for_survivors(mark, 6)
        assert psutil.pid_exists(detached)
        server.crash()  # kill -9: no stop hook runs; the keepers' death signal does it
        assert survivors_after(mark) == []
        assert all(ended(pid) for pid in [*worker, detached])


def test_a_starting_server_kills_what_a_dead_one_left(tmp_path):
    gone = subprocess.Popen(["sleep", "0.1"])
    dead_owner = owner_token(gone.pid)
    gone.wait()
    mine = owner_token()
    pid, created = mine.split(":")
    reused_pid = f"{pid}:{float(created) - 1000:.2f}"  # this pid, another process's start time
    mark = sleep_mark()

    def orphan(owner: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(["sleep", mark], env={**os.environ, OWNER_ENV: owner},
                                start_new_session=True)

    left, reused, alive_owner = orphan(dead_owner), orphan(reused_pid), orphan(mine)
    try:
        with JupyterServerProcess(tmp_path):
            assert ended(left.pid) and ended(reused.pid)
            assert alive_owner.poll() is None  # its owner (this test) is alive
    finally:
        for process in (left, reused, alive_owner):
            process.kill()
            process.wait()
