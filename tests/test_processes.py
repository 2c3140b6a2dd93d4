"""Managed processes: a session of their own, output drained within bounds, nothing left behind."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
import time

import psutil
from process_helpers import ended, sleep_mark, survivors, survivors_after

from jupyter_agent_tools.processes import PIPE, STDOUT, ManagedProcess, ProcessTree, owned_command

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


# -- owned processes: under a keeper (keeper.py) ----------------------------------------------

# A tree that ignores SIGTERM and leaves the group twice: a setsid'ed child, and a grandchild
# whose parent exits at once (a double fork: it is handed to the keeper, the subreaper).
ORPHANING_TREE = textwrap.dedent("""
    import os, signal, subprocess, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
    child = subprocess.Popen([sys.executable, "-c", stubborn], start_new_session=True)
    middle = subprocess.Popen([sys.executable, "-c",
        f"import subprocess, sys; print(subprocess.Popen([sys.executable, '-c', {stubborn!r}]).pid)"],
        stdout=subprocess.PIPE)
    orphan = int(middle.stdout.readline())
    middle.wait()
    print(child.pid, orphan, flush=True)
    time.sleep(600)
""")


async def test_an_owned_tree_is_ended_by_its_keeper_after_the_grace(jp_asyncio_loop):
    process = await ManagedProcess.start([sys.executable, "-c", ORPHANING_TREE], owned=True,
                                         grace_seconds=0.3)
    assert process.owned and process.process.stdout is not None
    child, orphan = map(int, (await process.process.stdout.readline()).split())
    assert psutil.Process(orphan).ppid() == process.pid  # the keeper adopted it

    await process.stop(grace_seconds=0.3)

    assert not process.running and ended(child) and ended(orphan)


async def test_an_owned_start_cancelled_midway_leaves_nothing_running(jp_asyncio_loop):
    # A run closed while its command was starting, on a loop too busy to finish the start
    # before the keeper had started the command: asyncio alone SIGKILLs the keeper and
    # orphans the command.
    mark = sleep_mark()
    starting = asyncio.ensure_future(ManagedProcess.start(["sleep", mark], owned=True))
    for _ in range(3):  # the start's first steps: the fork
        await asyncio.sleep(0)
    deadline = time.monotonic() + 30
    while len(survivors(mark)) < 2:  # the loop held (a busy loop) until the keeper and its
        assert time.monotonic() < deadline  # command run
        time.sleep(0.01)
    starting.cancel()
    # Without the keeper's own stop, asyncio waits for the orphan to close its pipes: forever.
    done, _ = await asyncio.wait({starting}, timeout=30)
    assert done and starting.cancelled()
    assert survivors_after(mark) == []


async def test_an_owned_command_exits_as_its_main_process_did(jp_asyncio_loop):
    codes = []
    for command in ("exit 7", "kill -TERM $$", "kill -KILL $$"):
        process = await ManagedProcess.start(["bash", "-c", command], owned=True)
        codes.append((await process.collect(60, 100)).returncode)
    assert codes == [7, -15, -9]


async def test_an_owned_missing_program_is_an_os_error(jp_asyncio_loop):
    try:
        await ManagedProcess.start(["surely-not-a-program-here"], owned=True)
    except OSError as exc:
        assert "surely-not-a-program-here" in str(exc)
    else:
        raise AssertionError("a missing program started")


def test_a_keeper_outlives_the_thread_that_started_it():
    # PR_SET_PDEATHSIG fires when the *thread* that forked the keeper ends: the keeper must
    # tell that from the server's death (it watches its parent instead).
    started: list[subprocess.Popen[bytes]] = []

    def start() -> None:
        argv, env, preexec = owned_command(["sleep", "600"])
        started.append(subprocess.Popen(argv, env=env, preexec_fn=preexec,
                                        start_new_session=True))

    thread = threading.Thread(target=start)
    thread.start()
    thread.join()
    keeper = started[0]
    deadline = time.monotonic() + 30
    while not (children := psutil.Process(keeper.pid).children()):
        assert time.monotonic() < deadline and keeper.poll() is None
        time.sleep(0.02)
    time.sleep(0.5)  # the keeper had its death signal when the thread ended
    assert children[0].status() != psutil.STATUS_ZOMBIE and keeper.poll() is None
    keeper.terminate()
    keeper.wait()
    assert ended(children[0].pid)
