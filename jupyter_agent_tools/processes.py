"""Child processes we start and must end: one way to start, drain and stop them.

A `ManagedProcess` runs in a session of its own, so its pid is its process group and ending
the group reaches what it spawned. Processes that leave the group (debugpy's launcher puts
the debuggee in a session of its own; `setsid` does the same) are remembered as the tree grows
(psutil handles keep the start time, so a reused pid is never hit) and are killed too.
Output is read to its end in chunks and kept within a byte bound, so a chatty child never
blocks on a full pipe and never fills our memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import psutil

_CHUNK = 65536
_EXIT_POLL_SECONDS = 0.05
# After SIGKILL a process is gone at once; what still holds a pipe is not ours to wait for.
_REAP_SECONDS = 5.0
PIPE = asyncio.subprocess.PIPE
DEVNULL = asyncio.subprocess.DEVNULL
STDOUT = asyncio.subprocess.STDOUT


def signal_process_group(pgid: int, sig: signal.Signals = signal.SIGKILL) -> None:
    """Send `sig` to process group `pgid`; a group that is already gone is not an error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class BoundedOutput:
    """What a stream said, within `max_bytes`: its first bytes (`head`) or its last (`tail`)."""

    def __init__(self, max_bytes: int, keep: Literal["head", "tail"] = "head") -> None:
        self.max_bytes = max_bytes
        self.keep = keep
        self.data = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self.keep == "head":
            self.data.extend(chunk[: max(0, self.max_bytes - len(self.data))])
        else:
            self.data.extend(chunk)
            del self.data[: -self.max_bytes or len(self.data)]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.data)

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


async def drain(stream: asyncio.StreamReader, sink: Callable[[bytes], None]) -> None:
    """Read `stream` to its end, handing each chunk to `sink`. Chunks, not lines: one huge
    line must not stop the reading (readline has a limit)."""
    while chunk := await stream.read(_CHUNK):
        sink(chunk)


@dataclass
class Collected:
    """A finished (or stopped) process's exit status and the kept part of its output."""

    returncode: int | None
    stdout: BoundedOutput
    stderr: BoundedOutput
    timed_out: bool = False


class ProcessTree:
    """A process started in its own session and every process it was seen to start.

    Synchronous and pid-based, so that a child started with `subprocess.Popen` (in a worker
    thread) is ended the same way as an asyncio one.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._known: dict[int, psutil.Process] = {}
        self.track(pid)

    def track(self, pid: int) -> None:
        """Remember `pid` (e.g. a debuggee an adapter reported) and its children."""
        with contextlib.suppress(psutil.Error):
            self._known.setdefault(pid, psutil.Process(pid))
        self.snapshot()

    def snapshot(self) -> None:
        """Remember every current descendant of every process already known."""
        for process in list(self._known.values()):
            with contextlib.suppress(psutil.Error):
                for child in process.children(recursive=True):
                    self._known.setdefault(child.pid, child)

    def alive(self) -> list[psutil.Process]:
        """Known processes still running (zombies count as ended), descendants included."""
        self.snapshot()
        return [p for p in self._known.values() if _running(p)]

    def kill(self) -> None:
        """SIGKILL the group, every known process group (never our own) and every known
        process still alive."""
        survivors = self.alive()  # before the group dies: orphans no longer show as children
        signal_process_group(self.pid)
        own_group = os.getpgrp()
        groups = set()
        for process in survivors:
            with contextlib.suppress(psutil.Error, OSError):
                groups.add(os.getpgid(process.pid))
        for group in groups - {own_group}:
            signal_process_group(group)
        for process in survivors:
            with contextlib.suppress(psutil.Error):
                process.kill()


class ManagedProcess(ProcessTree):
    """An asyncio child in its own session: its tree, its exit, its output."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        super().__init__(process.pid)

    @classmethod
    async def start(
        cls, argv: Sequence[str], *, cwd: str | Path | None = None,
        env: dict[str, str] | None = None, stdin: int = DEVNULL, stdout: int = PIPE,
        stderr: int = PIPE, preexec_fn: Callable[[], Any] | None = None,
        limit: int = 2**16,
    ) -> ManagedProcess:
        """Start `argv` in a new session; OSError when it cannot be executed."""
        process = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr,
            start_new_session=True, preexec_fn=preexec_fn, limit=limit,
        )
        return cls(process)

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    @property
    def running(self) -> bool:
        return self.process.returncode is None

    def alive_now(self) -> bool:
        """Running by the system's word: asyncio hears of an exit only once it reaps it."""
        known = self._known.get(self.pid)
        return self.running and known is not None and _running(known)

    # -- waiting and ending ----------------------------------------------------------------

    async def exited(self, timeout: float | None = None) -> bool:
        """Wait until the process itself has exited; False if `timeout` passed first.

        Not `process.wait()`: that also waits for the pipes, which a process left behind
        may hold open long after this one is gone.
        """
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while self.process.returncode is None:
            if deadline is not None and loop.time() >= deadline:
                return False
            await asyncio.sleep(_EXIT_POLL_SECONDS)
        return True

    async def stop(self, grace_seconds: float, *, terminate: bool = True) -> None:
        """End the process and its tree: SIGTERM the group (unless `terminate` is False,
        for a child already asked to exit in its own protocol), wait `grace_seconds` for
        it to exit, then kill the group and every straggler."""
        self.snapshot()
        if terminate and self.running:
            signal_process_group(self.pid, signal.SIGTERM)
        await self.exited(grace_seconds)
        self.kill()
        await self.exited(_REAP_SECONDS)

    async def collect(self, timeout: float, max_bytes: int,
                      keep: Literal["head", "tail"] = "head") -> Collected:
        """Drain stdout and stderr (those piped; each kept within `max_bytes`) until the
        process exits and its pipes close, for at most `timeout` seconds. Past it, the tree
        is killed and `timed_out` is set. Whatever happens, nothing is left running."""
        out, err = BoundedOutput(max_bytes, keep), BoundedOutput(max_bytes, keep)
        readers = [drain(stream, sink.add) for stream, sink in
                   ((self.process.stdout, out), (self.process.stderr, err)) if stream]
        timed_out = False
        try:
            await asyncio.wait_for(asyncio.gather(*readers, self.process.wait()), timeout)
        except asyncio.TimeoutError:
            timed_out = True
        finally:
            if self.running or timed_out:
                self.kill()
                await self.exited(_REAP_SECONDS)
        return Collected(self.process.returncode, out, err, timed_out)


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
