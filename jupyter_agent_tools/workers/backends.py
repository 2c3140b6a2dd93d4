"""Worker backends: what drives a worker's child run with its brief.

A backend is data plus one coroutine: `run(job) -> str`. The built-ins are `command` (an
outside program, e.g. a coding-agent CLI, calling tools over HTTP with a run token) and
`python` (an in-process callable). Plug-ins come from the `jupyter_agent_tools.worker_backends`
entry-point group (name → WorkerBackend subclass), or a 'module:Class' spec.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, ClassVar

from traitlets.config import LoggingConfigurable

from .errors import WorkerFailed

if TYPE_CHECKING:
    from ..runtime.run import Run

ENTRY_POINT_GROUP = "jupyter_agent_tools.worker_backends"

BUILTIN_BACKENDS = {
    "command": "jupyter_agent_tools.workers.command_backend:CommandBackend",
    "python": "jupyter_agent_tools.workers.python_backend:PythonBackend",
}


@dataclass
class WorkerJob:
    """One execution of a worker: what a backend is given."""

    worker_id: str
    label: str
    brief: str
    grade: str  # "fast" or "good" (what users call the worker's tier)
    run: Run
    # A token scoped to `run` (None for backends that do not call over HTTP).
    token: str | None
    server_url: str
    max_result_chars: int
    # Update the worker's last result while it runs (shown by vibe_list).
    report: Callable[[str], None]


__all__ = ["WorkerBackend", "WorkerFailed", "WorkerJob", "load_backend_class", "tail"]


class WorkerBackend(LoggingConfigurable):
    """Base of a worker backend. Subclasses are traitlets-configurable (c.<Class>.knob)."""

    name: ClassVar[str]
    # Whether workers call tools over HTTP and so need a run token and a server.
    uses_http: ClassVar[bool] = False

    def unavailable(self, grade: str) -> str | None:  # noqa: ARG002 - subclasses use it
        """Why this backend cannot start a worker of `grade` here, or None when it can."""
        return None

    async def run(self, job: WorkerJob) -> str:
        """Drive `job.run` with `job.brief`; the worker's last result. Raise WorkerFailed.

        Cancellation means the worker is being killed or restarted: stop everything started.
        """
        raise NotImplementedError


def load_backend_class(name: str) -> type[WorkerBackend]:
    """The backend class named `name`: a built-in, an entry point, or 'module:Class'."""
    spec = BUILTIN_BACKENDS.get(name)
    if spec is None:
        for entry in entry_points(group=ENTRY_POINT_GROUP):
            if entry.name == name:
                return entry.load()
        spec = name
    module_name, _, attr = spec.partition(":")
    if not attr:
        raise LookupError(
            f"No worker backend {name!r}: use 'command', 'python', an entry point of the "
            f"{ENTRY_POINT_GROUP!r} group, or 'module:Class'."
        )
    backend_class: Any = getattr(importlib.import_module(module_name), attr)
    if not (isinstance(backend_class, type) and issubclass(backend_class, WorkerBackend)):
        raise TypeError(f"{spec} is not a WorkerBackend subclass.")
    return backend_class


def tail(text: str, max_chars: int) -> str:
    """The last `max_chars` of `text`, saying how much was cut: a worker's last result."""
    if len(text) <= max_chars:
        return text
    return f"[... {len(text) - max_chars} earlier characters cut ...]\n{text[-max_chars:]}"
