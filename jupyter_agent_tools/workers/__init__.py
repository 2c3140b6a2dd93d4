"""Background workers (vibe mode): child runs driven by a pluggable backend."""

from .backends import WorkerBackend, WorkerFailed, WorkerJob
from .pool import RunWorkers, WorkerPool
from .python_backend import WorkerRun, WorkerStopped
from .worker import Worker, WorkerStatus

__all__ = [
    "RunWorkers", "Worker", "WorkerBackend", "WorkerFailed", "WorkerJob", "WorkerPool",
    "WorkerRun", "WorkerStatus", "WorkerStopped",
]
