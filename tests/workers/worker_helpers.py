"""Helpers of the worker tests (a unique module name: test folders are not packages)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from jupyter_agent_tools.workers import WorkerBackend, WorkerJob

# The scripted program command workers run in these tests.
AGENT = Path(__file__).with_name("scripted_agent.py")


def alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie nobody reaped yet counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


async def wait_for_file(path: Path, attempts: int = 600) -> str:
    """The content of `path` once a worker wrote it (bounded: a broken worker fails the test)."""
    for _ in range(attempts):
        if path.exists():
            return path.read_text()
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path.name} never appeared")


async def until(predicate, attempts: int = 600) -> None:
    """Let the loop run until `predicate()` holds (bounded)."""
    for _ in range(attempts):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition never held")


class EchoBackend(WorkerBackend):
    """A plug-in backend (loaded as 'worker_helpers:EchoBackend'): the result is the brief."""

    name = "echo"

    async def run(self, job: WorkerJob) -> str:
        return f"{job.grade}: {job.brief}"
