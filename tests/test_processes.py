"""Managed processes: a session of their own, output drained within bounds, nothing left behind."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import psutil
from process_helpers import ended

from jupyter_agent_tools.processes import PIPE, STDOUT, ManagedProcess, ProcessTree

# A parent that ignores SIGTERM and starts a child in a session of its own (out of the
# parent's process group) that ignores it too, then waits for ever.
STUBBORN_TREE = textwrap.dedent("""
    import os, signal, subprocess, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen(
        [sys.executable, "-c",
         "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"],
        start_new_session=True)
    print(child.pid, flush=True)
    time.sleep(600)
""")


async def test_a_tree_that_ignores_sigterm_and_leaves_the_group_is_ended(jp_asyncio_loop):
    process = await ManagedProcess.start([sys.executable, "-c", STUBBORN_TREE])
    assert process.process.stdout is not None
    child = int(await process.process.stdout.readline())
    assert psutil.Process(child).ppid() == process.pid
    assert child in [p.pid for p in process.alive()]  # the tree is remembered as it grows

    await process.stop(grace_seconds=0.5)

    assert process.returncode is not None and not process.running
    assert ended(process.pid) and ended(child)


async def test_an_output_flood_is_read_to_its_end_and_kept_within_bounds(jp_asyncio_loop):
    flood = "import sys; sys.stdout.write('x' * 20_000_000); sys.stderr.write('e' * 300_000)"
    process = await ManagedProcess.start([sys.executable, "-c", flood])
    done = await process.collect(timeout=120, max_bytes=1000)
    assert not done.timed_out and done.returncode == 0  # never blocked on a full pipe
    assert done.stdout.total == 20_000_000 and len(done.stdout.data) == 1000
    assert done.stdout.truncated and done.stdout.text() == "x" * 1000
    assert done.stderr.total == 300_000 and len(done.stderr.data) == 1000


async def test_the_tail_is_kept_when_asked(jp_asyncio_loop):
    process = await ManagedProcess.start(["seq", "1", "100000"], stdout=PIPE, stderr=STDOUT)
    done = await process.collect(timeout=120, max_bytes=20, keep="tail")
    assert done.stdout.text().endswith("99999\n100000\n") and len(done.stdout.data) == 20


async def test_a_timeout_keeps_what_was_said_and_kills_the_group(jp_asyncio_loop):
    process = await ManagedProcess.start(
        ["bash", "-c", "echo started; sleep 300 & echo $!; wait"])
    done = await process.collect(timeout=1, max_bytes=1000)
    assert done.timed_out
    said, background = done.stdout.text().split()
    assert said == "started"
    await process.exited(5)
    assert ended(process.pid) and ended(int(background))


async def test_a_missing_program_is_an_os_error(jp_asyncio_loop):
    try:
        await ManagedProcess.start(["surely-not-a-program-here"])
    except OSError as exc:
        assert "surely-not-a-program-here" in str(exc)
    else:
        raise AssertionError("a missing program started")


def test_a_popen_child_is_ended_the_same_way_from_a_thread():
    # What a thread-driven pool (structural/pool.py) would do with its worker processes.
    popen = subprocess.Popen([sys.executable, "-c", STUBBORN_TREE], stdout=subprocess.PIPE,
                             start_new_session=True)
    assert popen.stdout is not None
    child = int(popen.stdout.readline())
    ProcessTree(popen.pid).kill()
    popen.wait()
    popen.stdout.close()
    assert ended(child)
