"""The worker pool: background workers of vibe-mode runs (the `workers` resource).

A worker is a child run (the parent's cwd, a surface and approvals from its tier) plus a
backend that drives it with a brief. The pool holds the backend, the concurrency limit
shared by every run, and one `RunWorkers` per vibe-mode run.

Tier defaults (what a child run gets), chosen so that a quick look-up cannot change files:

| tier | surface | approvals |
|---|---|---|
| fast | readonly | auto (reads are never gated) |
| good | full | auto, i.e. the parent's own policy |

A child never gets more than its parent: its surface is capped at the parent's (a plan or
readonly parent only has readonly workers), and its approvals are the stricter of the
tier's and the parent's (auto < ask < deny). It targets the parent's space, so permission
cards reach the same human; it has no conversation id (debug sessions stay the parent's)
and no vibe mode (workers do not spawn workers).
"""

from __future__ import annotations

import asyncio
import weakref
from typing import TYPE_CHECKING, Any

from traitlets import Enum, Float, Int, Unicode

from ..runtime.config import RenamedConfig, renamed_to
from ..runtime.resources import ResourceProvider
from ..runtime.tiers import Approvals, Surface
from ..runtime.tool import Resource
from .backends import WorkerBackend, load_backend_class
from .errors import GradeUnavailable, ParentClosed, TooManyWorkers, UnknownWorker
from .worker import Worker, WorkerGrade, WorkerLimits, WorkerStatus

if TYPE_CHECKING:
    from ..runtime.run import Run, RunOptions

GRADES = tuple(grade.value for grade in WorkerGrade)
_STRICTNESS = [Approvals.AUTO, Approvals.ASK, Approvals.DENY]


class WorkerPool(RenamedConfig, ResourceProvider):
    """Background workers for runs created with `vibe=True`."""

    resource = Resource.WORKERS

    backend = Unicode(
        "command",
        help="What drives workers: 'command' (a program per tier, c.CommandBackend.argv), "
        "'python' (a callable, c.PythonBackend.agent), an entry point of the "
        "'jupyter_agent_tools.worker_backends' group, or 'module:Class'.",
    ).tag(config=True)
    default_tier = Enum(list(GRADES), "fast", help="Tier of a worker spawned without one.").tag(
        config=True
    )
    fast_surface = Enum([s.value for s in Surface], "readonly",
                        help="Surface of a fast worker's child run (capped at the parent's).").tag(
        config=True
    )
    fast_approvals = Enum([a.value for a in Approvals], "auto",
                          help="Approvals of a fast worker's child run (the parent's when "
                          "stricter).").tag(config=True)
    good_surface = Enum([s.value for s in Surface], "full",
                        help="Surface of a good worker's child run (capped at the parent's).").tag(
        config=True
    )
    good_approvals = Enum([a.value for a in Approvals], "auto",
                          help="Approvals of a good worker's child run (the parent's when "
                          "stricter).").tag(config=True)
    max_running = Int(
        4, help="Workers running at once across all runs; more spawns wait, queued."
    ).tag(config=True)
    max_workers_per_run = Int(
        20, help="Workers a run may hold; finished ones are forgotten first to make room."
    ).tag(config=True)
    max_worker_seconds = Int(
        3600, help="Longest a worker may run before it is stopped and marked failed."
    ).tag(config=True)
    max_result_chars = Int(
        8000, help="Longest last result kept per worker (the tail of its output)."
    ).tag(config=True)
    max_list_result_chars = Int(
        500, help="Longest last result shown per worker by vibe_list (vibe_wait shows it all)."
    ).tag(config=True)
    max_event_result_chars = Int(
        500, help="Longest last result carried by a worker_state event."
    ).tag(config=True)
    wait_default_seconds = Int(30, help="How long vibe_wait waits when no timeout is given.").tag(
        config=True
    )
    max_wait_seconds = Int(600, help="Longest timeout vibe_wait accepts.").tag(config=True)
    stop_timeout_seconds = Float(
        15.0, help="Longest a kill or restart waits for a worker's execution to wind down."
    ).tag(config=True)
    list_result_chars = renamed_to("max_list_result_chars", Int)
    event_result_chars = renamed_to("max_event_result_chars", Int)
    wait_max_seconds = renamed_to("max_wait_seconds", Int)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.backend_error: str | None = None
        self.worker_backend: WorkerBackend | None = None
        try:
            self.worker_backend = load_backend_class(self.backend)(parent=self, log=self.log)
        except Exception as exc:  # contained: spawns say why, the rest of the runtime works
            self.log.exception("could not load worker backend %s", self.backend)
            self.backend_error = f"{type(exc).__name__}: {exc}"
        self._slots: asyncio.Semaphore | None = None
        self._handles: weakref.WeakSet[RunWorkers] = weakref.WeakSet()

    @property
    def slots(self) -> asyncio.Semaphore:
        """The concurrency limit: a running worker holds one slot."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(max(1, self.max_running))
        return self._slots

    def attaches(self, options: RunOptions) -> bool:
        """Only a run created with vibe gets workers."""
        return options.vibe

    def attach(self, run: Run, options: RunOptions) -> RunWorkers | None:
        if not self.attaches(options):
            return None
        handle = RunWorkers(self, run)
        self._handles.add(handle)
        return handle

    async def release(self, run: Run, handle: RunWorkers) -> None:  # noqa: ARG002 - interface
        await handle.close()

    async def shutdown(self) -> None:
        await asyncio.gather(*(handle.close() for handle in list(self._handles)),
                             return_exceptions=True)

    async def status(self) -> dict[str, Any]:
        workers = [w for handle in list(self._handles) for w in handle.workers.values()]
        return {
            "backend": self.backend,
            "backend_error": self.backend_error,
            "tiers": {grade: _availability(self.unavailable(grade)) for grade in GRADES},
            "max_running": self.max_running,
            "running": sum(w.status is WorkerStatus.RUNNING for w in workers),
            "queued": sum(w.status is WorkerStatus.QUEUED for w in workers),
        }

    # -- what a spawn needs ---------------------------------------------------------------

    def unavailable(self, grade: str) -> str | None:
        """Why a worker of `grade` cannot be started here, or None."""
        if self.worker_backend is None:
            return (f"The worker backend {self.backend!r} could not be loaded "
                    f"({self.backend_error}); ask the user to fix c.WorkerPool.backend.")
        return self.worker_backend.unavailable(grade)

    def child_options(self, parent: Run, grade: WorkerGrade) -> tuple[str, str]:
        """The child run's (surface, approvals): the grade's, capped by the parent's."""
        surface = Surface(getattr(self, f"{grade.value}_surface"))
        if not surface.tiers <= parent.surface.tiers:
            surface = parent.surface
        approvals = max(Approvals(getattr(self, f"{grade.value}_approvals")),
                        parent.gate.policy, key=_STRICTNESS.index)
        return surface.value, approvals.value

    def limits(self) -> WorkerLimits:
        return WorkerLimits(max_worker_seconds=self.max_worker_seconds,
                            max_result_chars=self.max_result_chars,
                            max_event_result_chars=self.max_event_result_chars,
                            stop_timeout_seconds=self.stop_timeout_seconds)


def _availability(reason: str | None) -> dict[str, Any]:
    return {"available": reason is None, "reason": reason}


class RunWorkers:
    """The workers of one parent run (the per-run handle of the `workers` resource)."""

    def __init__(self, pool: WorkerPool, parent: Run) -> None:
        self.pool = pool
        self.parent = parent
        self.workers: dict[str, Worker] = {}
        self._count = 0
        self._closed = False

    def get(self, worker_id: str) -> Worker:
        worker = self.workers.get(worker_id)
        if worker is None:
            raise UnknownWorker(worker_id, list(self.workers))
        return worker

    async def spawn(self, brief: str, label: str, grade: WorkerGrade | None) -> Worker:
        """Create the worker's child run and queue the worker; returns at once."""
        grade = grade or WorkerGrade(self.pool.default_tier)
        reason = self.pool.unavailable(grade.value)
        if reason is not None:
            raise GradeUnavailable(grade.value, reason)
        if self._closed:
            raise ParentClosed()
        await self._make_room()
        runtime = self.pool.runtime
        surface, approvals = self.pool.child_options(self.parent, grade)
        cwd = self.parent.cwd.relative_to(runtime.root_path).as_posix() or "."
        # The worker's run is confined as its parent is (its tools and its command alike).
        child = await runtime.create_run(cwd=cwd, surface=surface, approvals=approvals,
                                         space=self.parent.space, parent_id=self.parent.id,
                                         origin="worker", sandbox=self.parent.options.sandbox,
                                         network=self.parent.sandbox.network)
        backend = self.pool.worker_backend
        assert backend is not None  # unavailable() said so otherwise
        token = runtime.run_tokens.issue(child.id) if backend.uses_http else None
        self._count += 1
        worker = Worker(backend, self.parent, worker_id=f"w{self._count}", label=label,
                        grade=grade, brief=brief, child=child, token=token,
                        slots=self.pool.slots, limits=self.pool.limits(),
                        server_url=runtime.server_url, log=self.pool.log)
        self.workers[worker.id] = worker
        worker.start()
        return worker

    async def _make_room(self) -> None:
        while len(self.workers) >= self.pool.max_workers_per_run:
            finished = [w for w in self.workers.values() if w.status.finished]
            if not finished:
                raise TooManyWorkers(len(self.workers))
            oldest = min(finished, key=lambda w: w.finished_at or 0)
            del self.workers[oldest.id]
            await self.pool.runtime.close_run(oldest.child.id)

    async def close(self) -> None:
        """Kill every worker and close their child runs: nothing outlives the parent."""
        if self._closed:
            return
        self._closed = True
        workers = list(self.workers.values())
        await asyncio.gather(*(w.kill() for w in workers), return_exceptions=True)
        for worker in workers:
            await self.pool.runtime.close_run(worker.child.id)
