"""Background workers (vibe mode): child runs driven by a pluggable backend."""

from .backends import WorkerBackend, WorkerJob
from .errors import (
    GradeUnavailable,
    ParentClosed,
    TooManyWorkers,
    UnknownWorker,
    WorkerError,
    WorkerFailed,
)
from .pool import RunWorkers, WorkerPool
from .python_backend import WorkerRun, WorkerStopped
from .worker import Worker, WorkerGrade, WorkerLimits, WorkerStatus

__all__ = [
    "GradeUnavailable", "ParentClosed", "RunWorkers", "TooManyWorkers", "UnknownWorker",
    "Worker", "WorkerBackend", "WorkerError", "WorkerFailed", "WorkerGrade", "WorkerJob",
    "WorkerLimits", "WorkerPool", "WorkerRun", "WorkerStatus", "WorkerStopped",
]
