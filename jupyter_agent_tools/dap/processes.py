"""The processes of one debug session: the adapter and everything it starts.

Debuggees do not stay in the adapter's process group (debugpy's launcher puts the debuggee in
its own), and an adapter killed from outside leaves its children behind. So the tree is
remembered as it grows (psutil handles keep the start time, so a reused pid is never hit) and
ending it kills every remembered process group and process that is still alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import os

import psutil

from ..runtime.processes import signal_process_group


class ProcessTree:
    """An adapter process and the processes it started."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._known: dict[int, psutil.Process] = {}
        self.track(process.pid)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def adapter_alive(self) -> bool:
        return self.process.returncode is None

    def track(self, pid: int) -> None:
        """Remember `pid` (e.g. the debuggee the adapter reported) and its children."""
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
        """Known processes still running (zombies count as ended)."""
        return [p for p in self._known.values() if _running(p)]

    async def stop(self, grace_seconds: float) -> None:
        """Give the adapter `grace_seconds` to exit on its own, then kill whatever is left."""
        self.snapshot()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.process.wait(), grace_seconds)
        self.kill()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.process.wait(), 5)

    def kill(self) -> None:
        """SIGKILL every known process group (never our own) and every known process."""
        self.snapshot()
        own_group = os.getpgrp()
        survivors = self.alive()
        groups = set()
        for process in survivors:
            with contextlib.suppress(psutil.Error, OSError):
                groups.add(os.getpgid(process.pid))
        for group in groups - {own_group}:
            signal_process_group(group)
        for process in survivors:
            with contextlib.suppress(psutil.Error):
                process.kill()


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
