"""The `python` backend: a worker is an in-process callable `(brief, run) -> str`.

For scripted agents (the demo, tests, notebooks). The callable may be sync or async:

    async def agent(brief: str, run: WorkerRun) -> str:
        result = await run.call("grep", {"pattern": "TODO"})
        return result.text

A sync callable runs in a thread and calls tools with `run.call_sync(...)`. Either way the
calls go through the child run's `Run.call`, recorded with origin "worker".
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
from typing import Any, Protocol

from traitlets import Any as AnyTrait

from ..runtime.run import Run
from ..runtime.tool import Origin
from .backends import WorkerBackend, WorkerFailed, WorkerJob, tail


class CallResult(Protocol):
    """What a tool call answers a worker's agent (the runtime's result of `Run.call`)."""

    @property
    def ok(self) -> bool: ...

    @property
    def text(self) -> str:
        """What an agent reads."""
        ...

    @property
    def data(self) -> dict[str, Any]: ...

    @property
    def error(self) -> dict[str, str] | None:
        """None, or the error's `code` and `message` (what to do next)."""
        ...

    @property
    def code(self) -> str | None:
        """The error code, or None when the call succeeded."""
        ...


class WorkerStopped(RuntimeError):
    """A tool call from a worker that was killed or restarted meanwhile."""


class WorkerRun:
    """What a python agent gets as `run`: its child run, seen as a worker."""

    def __init__(self, job: WorkerJob, loop: asyncio.AbstractEventLoop) -> None:
        self._job = job
        self._run: Run = job.run
        self._loop = loop
        self._stopped = False
        self.id = job.run.id
        self.cwd = job.run.cwd
        self.tier = job.grade  # the user's word for it
        self.worker_id = job.worker_id

    async def call(self, name: str, args: dict[str, Any] | None = None) -> CallResult:
        """Call a tool through the child run (its surface, gate and wrappers)."""
        if self._stopped:
            raise WorkerStopped(f"Worker {self.worker_id} was stopped; its calls are refused.")
        return await self._run.call(name, args or {}, origin=Origin.WORKER)

    def call_sync(self, name: str, args: dict[str, Any] | None = None) -> CallResult:
        """`call` for a sync agent, which runs in a thread."""
        return asyncio.run_coroutine_threadsafe(self.call(name, args), self._loop).result()

    def tool_names(self) -> list[str]:
        return self._run.tool_names()

    def schemas(self, format: str = "json") -> list[dict[str, Any]]:
        return self._run.schemas(format=format)

    def report(self, text: str) -> None:
        """Show `text` as the worker's last result while it is still running."""
        self._loop.call_soon_threadsafe(self._job.report,
                                        tail(text, self._job.max_result_chars))

    def stop(self) -> None:
        self._stopped = True


class PythonBackend(WorkerBackend):
    """Runs each worker as a Python callable in this process."""

    name = "python"

    agent = AnyTrait(
        None, allow_none=True,
        help="The agent: a callable (brief, run) -> str, sync or async, or a 'module:attr' "
        "string naming one. `run` is a WorkerRun: `await run.call(tool, args)` (a sync agent "
        "runs in a thread and uses `run.call_sync`). It may read `run.tier` ('fast' or "
        "'good'). Config copies its values: give a function or a 'module:attr' string, not an "
        "object holding state. No default: configure one to use python workers.",
    ).tag(config=True)

    def _agent(self) -> Any:
        agent = self.agent
        if isinstance(agent, str):
            module_name, _, attr = agent.partition(":")
            agent = getattr(importlib.import_module(module_name), attr)
        return agent

    def unavailable(self, grade: str) -> str | None:  # noqa: ARG002 - every grade alike
        try:
            agent = self._agent()
        except (ImportError, AttributeError, ValueError) as exc:
            return f"c.PythonBackend.agent cannot be loaded ({exc}); ask the user to fix it."
        if not callable(agent):
            return ("No python agent is configured: set c.PythonBackend.agent to a callable "
                    "(brief, run) -> str, or use the command backend.")
        return None

    async def run(self, job: WorkerJob) -> str:
        agent = self._agent()
        run = WorkerRun(job, asyncio.get_running_loop())
        try:
            if inspect.iscoroutinefunction(agent) or inspect.iscoroutinefunction(
                type(agent).__call__
            ):
                result = await agent(job.brief, run)
            else:
                # A thread cannot be cancelled: on kill it is abandoned and its calls refused.
                result = await asyncio.to_thread(agent, job.brief, run)
        except (WorkerFailed, asyncio.CancelledError):
            raise
        except Exception as exc:  # noqa: BLE001 - the user's agent may raise anything
            raise WorkerFailed(f"The agent raised {type(exc).__name__}: {exc}") from None
        finally:
            run.stop()
        return tail("" if result is None else str(result), job.max_result_chars)
