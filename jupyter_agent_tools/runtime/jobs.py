"""Jobs: work a run keeps going between calls, which ends with the run.

A job is an asyncio task that produces a `ToolResult`, the bounded output it has said so far,
and an optional cancel hook (for work that must be told to stop, as a kernel is interrupted;
cancelling the task is enough for a process, whose `finally` ends its tree). `bash
{background: true}` starts one at once; a call that runs long may become one (the tool starts
its work as a job of the run and waits for it; `detach` makes it the agent's). The `job` tool
reads, waits for, lists and cancels a run's jobs. A call's own work is a job too, not listed:
so closing the run ends it, as it ends every job.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from ..processes import BoundedOutput
from .results import ErrorCode, ToolError, ToolResult

JobStatus = Literal["running", "done", "failed", "timeout", "cancelled"]
# A cancelled job's task must end at once (its `finally` kills a process tree, bounded);
# past this it is left to end on its own.
_CANCEL_SECONDS = 15.0


class Job:
    """One job of a run: see the module's docstring."""

    def __init__(self, job_id: str, tool: str, label: str, output: BoundedOutput,
                 background: bool) -> None:
        self.id = job_id
        self.tool = tool
        self.label = label
        self.output = output
        self.background = background
        self.started_at = time.time()
        self.finished_at: float | None = None
        self.task: asyncio.Task[ToolResult] | None = None
        #: Awaited before the task is cancelled (e.g. interrupt a kernel); optional.
        self.on_cancel: Callable[[], Awaitable[None]] | None = None
        #: Why the job was cancelled ("cancel": the job tool; "run_closed"), or None.
        self.cancelled_by: str | None = None

    @property
    def done(self) -> bool:
        return self.task is not None and self.task.done()

    @property
    def status(self) -> JobStatus:
        if not self.done:
            return "running"
        if self.cancelled_by is not None:
            return "cancelled"
        result = self.result()
        if result.ok:
            return "done"
        return "timeout" if result.code == ErrorCode.TIMEOUT.value else "failed"

    def result(self) -> ToolResult:
        """The finished job's result, as the call would have answered it."""
        assert self.task is not None and self.task.done()
        if self.task.cancelled():
            why = ("the run was closed" if self.cancelled_by == "run_closed"
                   else "it was cancelled")
            return ToolError(
                ErrorCode.NOT_FOUND if self.cancelled_by == "run_closed" else ErrorCode.TIMEOUT,
                f"Job {self.id} ({self.label}) ended because {why}; everything it started "
                "was ended too.",
                text=self.output.text() or None, data={"job_id": self.id},
            ).to_result()
        error = self.task.exception()
        if isinstance(error, ToolError):
            return error.to_result()
        if error is not None:
            return ToolError(ErrorCode.FAILED,
                             f"Job {self.id} failed unexpectedly ({type(error).__name__}: "
                             f"{error}). This is a bug in the tool; try another way, and "
                             "report it.").to_result()
        return self.task.result()

    async def wait(self, timeout: float | None = None) -> bool:
        """Wait until the job ends (a waiter being cancelled leaves the job running);
        whether it has."""
        assert self.task is not None
        if not self.task.done():
            await asyncio.wait({self.task}, timeout=timeout)
        return self.task.done()

    def describe(self) -> dict[str, Any]:
        """What `job list` and every `job` answer say of it."""
        described: dict[str, Any] = {
            "job_id": self.id, "tool": self.tool, "label": self.label, "status": self.status,
            "started_at": self.started_at, "finished_at": self.finished_at,
            "output_bytes": self.output.total,
        }
        if self.done and self.cancelled_by is None:
            exit_code = self.result().data.get("exit_code")
            if exit_code is not None:
                described["exit_code"] = exit_code
        return described


class JobTable:
    """A run's jobs: started, looked up, cancelled, and all ended when the run closes.

    `max_jobs`: most background jobs running at once, and most finished ones kept (the oldest
    finished are forgotten first). `max_output_bytes`: the tail of its output a background
    job keeps.
    """

    def __init__(self, max_jobs: int, max_output_bytes: int) -> None:
        self.max_jobs = max_jobs
        self.max_output_bytes = max_output_bytes
        self.closed = False
        self._jobs: dict[str, Job] = {}
        self._numbers = itertools.count(1)

    def start(self, tool: str, label: str, work: Callable[[Job], Awaitable[ToolResult]], *,
              background: bool, output: BoundedOutput | None = None) -> Job:
        """Start `work(job)` as a job. A background job counts against `max_jobs`; a call's
        own (not background) is dropped from the table when it ends."""
        if self.closed:
            raise ToolError(ErrorCode.NOT_FOUND, "The run is closed. Create a new run.")
        if background:
            running = [job for job in self.background() if not job.done]
            if len(running) >= self.max_jobs:
                raise ToolError(
                    ErrorCode.BUSY,
                    f"This run has {len(running)} background jobs running, the most it may "
                    f"(c.Runtime.max_jobs_per_run). Wait for one or cancel one with `job`.",
                    data={"jobs": [job.describe() for job in running]},
                )
        job = Job(f"job-{next(self._numbers)}", tool, label,
                  output or BoundedOutput(self.max_output_bytes, "tail"), background)
        job.task = asyncio.ensure_future(work(job))
        job.task.add_done_callback(lambda _task: self._ended(job))
        self._jobs[job.id] = job
        self._forget_finished()
        return job

    def _ended(self, job: Job) -> None:
        job.finished_at = time.time()
        if job.task is not None and not job.task.cancelled():
            job.task.exception()  # retrieved: `result()` reports it
        if not job.background:
            self._jobs.pop(job.id, None)
        self._forget_finished()

    def _forget_finished(self) -> None:
        finished = [job for job in self.background() if job.done]
        for job in finished[: max(0, len(finished) - self.max_jobs)]:
            del self._jobs[job.id]

    def background(self) -> list[Job]:
        """The agent's jobs (started with background, or detached), oldest first."""
        return [job for job in self._jobs.values() if job.background]

    def detach(self, job: Job) -> None:
        """Make a call's own job one the agent continues with the `job` tool."""
        job.background = True
        self._forget_finished()

    def get(self, job_id: str) -> Job:
        job = self._jobs.get(job_id)
        if job is None or not job.background:
            known = ", ".join(j.id for j in self.background()) or "none"
            raise ToolError(ErrorCode.NOT_FOUND,
                            f"No job {job_id!r} in this run (its jobs: {known}). List them "
                            "with job {action: \"list\"}.")
        return job

    async def cancel(self, job: Job, by: str = "cancel") -> None:
        """End the job and everything it started; returns once it has ended (bounded)."""
        if job.done or job.task is None:
            return
        job.cancelled_by = by
        if job.on_cancel is not None:
            with contextlib.suppress(Exception):  # the task's own cancellation still ends it
                await asyncio.wait_for(job.on_cancel(), _CANCEL_SECONDS)
        job.task.cancel()
        await asyncio.wait({job.task}, timeout=_CANCEL_SECONDS)

    async def close(self) -> None:
        """The run is closing: end every job, a call's own included."""
        self.closed = True
        await asyncio.gather(*(self.cancel(job, "run_closed")
                               for job in list(self._jobs.values())))
