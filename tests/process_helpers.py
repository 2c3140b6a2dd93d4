"""Whether a process we ended is gone: shared by the tests of everything that kills processes."""

from __future__ import annotations

import random
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


def sleep_mark() -> str:
    """A `sleep` argument no other process has: the processes a test started are looked up by
    it (their command lines hold it), wherever they went."""
    return f"{random.randint(10**6, 10**7)}.{random.randint(10, 99)}"


def survivors(mark: str) -> list[psutil.Process]:
    """Processes (not zombies) whose command line holds `mark`."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        if mark in " ".join(process.info["cmdline"] or ()) and \
                process.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(process)
    return found


def survivors_after(mark: str, within_seconds: float = 5.0) -> list[psutil.Process]:
    """The processes holding `mark` still running `within_seconds` from now: [] if all ended."""
    deadline = time.monotonic() + within_seconds
    while (left := survivors(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def wait_for_survivors(mark: str, count: int, within_seconds: float = 60.0) -> None:
    """Block until `count` processes hold `mark` (they have started); fail past the bound."""
    deadline = time.monotonic() + within_seconds
    while len(survivors(mark)) < count:
        assert time.monotonic() < deadline, f"only {len(survivors(mark))} of {count} started"
        time.sleep(0.05)
