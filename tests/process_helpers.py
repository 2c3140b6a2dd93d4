"""Whether a process we ended is gone: shared by the tests of everything that kills processes."""

from __future__ import annotations

import time

import psutil


def is_ended(pid: int) -> bool:
    """Gone, or a zombie nobody has reaped yet (in a container, pid 1 may never reap it)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def ended(pid: int, within_seconds: float = 5.0) -> bool:
    """Whether `pid` has ended within `within_seconds`: SIGKILL is delivered asynchronously,
    so a process just killed may still show as running for a moment."""
    deadline = time.monotonic() + within_seconds
    while not is_ended(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True
