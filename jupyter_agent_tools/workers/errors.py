"""What can go wrong with a run's workers, as plain facts (the vibe tools word them)."""

from __future__ import annotations


class WorkerError(Exception):
    """Base class of the workers resource's errors."""


class UnknownWorker(WorkerError):
    def __init__(self, worker_id: str, known: list[str]) -> None:
        super().__init__(f"no worker {worker_id!r}")
        self.worker_id = worker_id
        self.known = known


class GradeUnavailable(WorkerError):
    """No worker of this grade can start here; `reason` says why (the backend's words)."""

    def __init__(self, grade: str, reason: str) -> None:
        super().__init__(f"cannot start a {grade} worker: {reason}")
        self.grade = grade
        self.reason = reason


class ParentClosed(WorkerError):
    """The parent run is closed: it spawns nothing more."""

    def __init__(self) -> None:
        super().__init__("the run is closed")


class TooManyWorkers(WorkerError):
    """The run holds its limit of workers and none has finished."""

    def __init__(self, count: int) -> None:
        super().__init__(f"{count} active workers, the limit")
        self.count = count


class WorkerFailed(WorkerError):
    """Raised by a backend when its worker failed; `result` is what the agent gets to read."""

    def __init__(self, result: str) -> None:
        super().__init__(result)
        self.result = result
