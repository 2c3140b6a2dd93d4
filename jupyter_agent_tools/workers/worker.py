"""A worker: a child run plus a backend driving it with a brief, and its state."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from .backends import WorkerBackend, WorkerJob, tail
from .errors import WorkerFailed

if TYPE_CHECKING:
    from ..runtime.run import Run


class WorkerGrade(str, Enum):
    """How capable a worker is. Users (tool arguments, config, README) call it its tier;
    the name differs here so it is not confused with a tool's tier (read/write/exec)."""

    FAST = "fast"
    GOOD = "good"


@dataclass(frozen=True)
class WorkerLimits:
    """The bounds a worker runs within (the pool's config, fixed when it is spawned)."""

    max_worker_seconds: int
    max_result_chars: int
    max_event_result_chars: int
    stop_timeout_seconds: float


class WorkerStatus(str, Enum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    KILLED = "killed"

    @property
    def finished(self) -> bool:
        return self in (WorkerStatus.DONE, WorkerStatus.FAILED, WorkerStatus.KILLED)


class Worker:
    """One background worker of a parent run. Its state changes go out on the parent's bus."""

    def __init__(self, backend: WorkerBackend, parent: Run, *, worker_id: str, label: str,
                 grade: WorkerGrade, brief: str, child: Run, token: str | None,
                 slots: asyncio.Semaphore, limits: WorkerLimits, server_url: str,
                 log: logging.Logger | logging.LoggerAdapter[Any]) -> None:
        self.backend = backend
        self.slots = slots  # shared by every worker of the pool: a running one holds one
        self.limits = limits
        self.server_url = server_url
        self.log = log
        self.parent = parent
        self.id = worker_id
        self.label = label
        self.grade = grade
        self.brief = brief
        self.child = child
        self.token = token
        self.status = WorkerStatus.QUEUED
        self.result = ""
        self.restarts = 0
        self.created_at = time.time()
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self._finished = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    # -- state ----------------------------------------------------------------------------

    @property
    def elapsed_seconds(self) -> float:
        """Time spent running (not queued) in the current execution."""
        if self.started_at is None:
            return 0.0
        end = self.finished_at if self.finished_at is not None else time.time()
        return round(end - self.started_at, 1)

    def describe(self, max_result_chars: int | None = None) -> dict[str, Any]:
        result = self.result if max_result_chars is None else tail(self.result, max_result_chars)
        return {
            "worker_id": self.id,
            "label": self.label,
            "tier": self.grade.value,
            "status": self.status.value,
            "elapsed_seconds": self.elapsed_seconds,
            "result": result,
            "restarts": self.restarts,
            "child_run_id": self.child.id,
        }

    def _set(self, status: WorkerStatus) -> None:
        self.status = status
        self.parent.events.publish("worker_state", run_id=self.parent.id,
                                   **self.describe(self.limits.max_event_result_chars))

    def _finish(self, status: WorkerStatus, result: str) -> None:
        self.finished_at = time.time()
        self.result = tail(result, self.limits.max_result_chars)
        self._set(status)
        self._finished.set()

    def _report(self, text: str) -> None:
        if self.status is WorkerStatus.RUNNING:
            self.result = text

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        """Queue one execution of the brief; it runs when a pool slot is free."""
        self._finished.clear()
        self.result = ""
        self.started_at = self.finished_at = None
        job = WorkerJob(
            worker_id=self.id, label=self.label, brief=self.brief, grade=self.grade.value,
            run=self.child, token=self.token, server_url=self.server_url,
            max_result_chars=self.limits.max_result_chars, report=self._report,
        )
        self._set(WorkerStatus.QUEUED)
        self._task = asyncio.ensure_future(self._execute(job))

    async def _execute(self, job: WorkerJob) -> None:
        async with self.slots:
            self.started_at = time.time()
            self._set(WorkerStatus.RUNNING)
            limit = self.limits.max_worker_seconds
            try:
                result = await asyncio.wait_for(self.backend.run(job), limit)
            except WorkerFailed as failure:
                self._finish(WorkerStatus.FAILED, failure.result)
            except asyncio.TimeoutError:
                self._finish(WorkerStatus.FAILED, f"{self.result}\n[stopped: the worker ran "
                             f"past its limit of {limit}s (c.WorkerPool.max_worker_seconds)]")
            except Exception as exc:  # a backend bug: the worker fails, the pool carries on
                self.log.exception("worker %s of run %s failed", self.id, self.parent.id)
                self._finish(WorkerStatus.FAILED,
                             f"The {self.backend.name} backend failed: {type(exc).__name__}: {exc}")
            else:
                self._finish(WorkerStatus.DONE, result)

    async def _stop_execution(self) -> None:
        task = self._task
        if task is None or task.done():
            return
        task.cancel()
        await asyncio.wait({task}, timeout=self.limits.stop_timeout_seconds)
        if not task.done():
            self.log.warning("worker %s did not stop within %ss", self.id,
                             self.limits.stop_timeout_seconds)

    async def kill(self) -> bool:
        """Stop the worker (its whole process group); False when it had finished already."""
        if self.status.finished:
            return False
        await self._stop_execution()
        if self.status.finished:  # it finished on its own meanwhile
            return False
        self._finish(WorkerStatus.KILLED, self.result)
        return True

    async def restart(self, message: str) -> None:
        """Append `message` to the brief and run the worker again from the start."""
        await self._stop_execution()
        self.brief = f"{self.brief}\n\n{message}"
        self.restarts += 1
        self.start()

    async def wait(self, timeout: float) -> bool:
        """Wait until the worker finishes; False when `timeout` seconds passed first."""
        try:
            await asyncio.wait_for(self._finished.wait(), timeout)
        except asyncio.TimeoutError:
            return False
        return True
