"""vibe_spawn, vibe_send, vibe_wait, vibe_kill, vibe_list: background workers (vibe mode).

Read tier: these only start, watch and stop workers. The gate belongs to the workers' own
tools, which go through each worker's child run.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..runtime import CallContext, ErrorCode, Resource, Tier, Tool, ToolArgs, ToolError, ToolResult
from ..workers import (
    GradeUnavailable,
    ParentClosed,
    RunWorkers,
    TooManyWorkers,
    UnknownWorker,
    Worker,
    WorkerError,
    WorkerGrade,
)
from .outputs import VibeKillOutput, VibeListOutput, VibeWaitOutput, WorkerOutput


def _workers(ctx: CallContext) -> RunWorkers:
    return ctx.run.resources[Resource.WORKERS]


def _worker(ctx: CallContext, worker_id: str) -> Worker:
    try:
        return _workers(ctx).get(worker_id)
    except WorkerError as exc:
        raise _tool_error(exc) from None


def _tool_error(exc: WorkerError) -> ToolError:
    """What a workers error means to the agent: its contract code and what to do next."""
    match exc:
        case UnknownWorker(worker_id=worker_id, known=known):
            return ToolError(ErrorCode.NOT_FOUND,
                             f"This run has no worker {worker_id!r} (its workers: "
                             f"{', '.join(known) or 'none'}). Call vibe_list to see them.")
        case GradeUnavailable(grade=grade, reason=reason):
            return ToolError(ErrorCode.UNAVAILABLE, f"Cannot start a {grade} worker: {reason}")
        case ParentClosed():
            return ToolError(ErrorCode.NOT_FOUND, "This run is closed. Create a new run.")
        case TooManyWorkers(count=count):
            return ToolError(ErrorCode.UNAVAILABLE,
                             f"This run already has {count} active workers (the limit). "
                             "Wait for one with vibe_wait or stop one with vibe_kill.")
    return ToolError(ErrorCode.FAILED, f"The worker failed: {exc}. See its state with "
                     "vibe_list, or spawn a new one.")


def _line(worker: Worker) -> str:
    return (f"{worker.id} [{worker.grade.value}] {worker.label}: {worker.status.value}, "
            f"{worker.elapsed_seconds}s")


class VibeTool(Tool):
    tier = Tier.READ
    requires = frozenset({Resource.WORKERS})


class SpawnArgs(ToolArgs):
    brief: str = Field(min_length=1, description="What the worker should do, self-contained.")
    label: str = Field(min_length=1, max_length=80, description="A short name for the worker.")
    tier: Literal["fast", "good"] | None = Field(
        None, description="fast: quick, read-only look-ups; good: capable, may edit files.")


class VibeSpawn(VibeTool):
    name = "vibe_spawn"
    description = (
        "Start a background worker on a brief; returns at once with its worker id. The worker "
        "works in its own run in this working directory. Follow it with vibe_wait or vibe_list."
    )
    Args = SpawnArgs
    Output = WorkerOutput

    def label(self, args: SpawnArgs) -> str:
        return f"vibe_spawn {args.label}"

    async def call(self, ctx: CallContext, args: SpawnArgs) -> ToolResult:
        grade = WorkerGrade(args.tier) if args.tier else None
        try:
            worker = await _workers(ctx).spawn(args.brief, args.label, grade)
        except WorkerError as exc:
            raise _tool_error(exc) from None
        return ToolResult.success(
            f"Started worker {worker.id} ({worker.grade.value}, {worker.label}): "
            f"{worker.status.value}. "
            f"Call vibe_wait {{\"worker_id\": \"{worker.id}\"}} for its result.",
            worker.describe(),
        )


class SendArgs(ToolArgs):
    worker_id: str = Field(description="The worker, as vibe_spawn returned it.")
    message: str = Field(min_length=1, description="Appended to the brief.")


class VibeSend(VibeTool):
    name = "vibe_send"
    description = ("Append a message to a worker's brief and restart it with the whole brief "
                   "(stopping it first if it is still running).")
    Args = SendArgs
    Output = WorkerOutput

    def label(self, args: SendArgs) -> str:
        return f"vibe_send {args.worker_id}"

    async def call(self, ctx: CallContext, args: SendArgs) -> ToolResult:
        worker = _worker(ctx, args.worker_id)
        await worker.restart(args.message)
        return ToolResult.success(
            f"Worker {worker.id} restarted with the message appended to its brief: "
            f"{worker.status.value}.",
            worker.describe(),
        )


class WaitArgs(ToolArgs):
    worker_id: str = Field(description="The worker, as vibe_spawn returned it.")
    timeout_seconds: int | None = Field(
        None, ge=0, description="Stop waiting after this long (default 30s); 0 only looks.")


class VibeWait(VibeTool):
    name = "vibe_wait"
    description = ("Wait until a worker finishes and return its last result; after the timeout, "
                   "say it is still running (not an error).")
    Args = WaitArgs
    Output = VibeWaitOutput

    def label(self, args: WaitArgs) -> str:
        return f"vibe_wait {args.worker_id}"

    async def call(self, ctx: CallContext, args: WaitArgs) -> ToolResult:
        worker = _worker(ctx, args.worker_id)
        pool = _workers(ctx).pool
        timeout = min(pool.wait_default_seconds if args.timeout_seconds is None
                      else args.timeout_seconds, pool.max_wait_seconds)
        finished = await worker.wait(timeout)
        data = {**worker.describe(), "finished": finished}
        if not finished:
            return ToolResult.success(
                f"{_line(worker)}: still {worker.status.value} after waiting {timeout}s. Call "
                "vibe_wait again, do something else meanwhile, or stop it with vibe_kill.",
                data,
            )
        return ToolResult.success(f"{_line(worker)}.\n{worker.result or '(no output)'}", data)


class KillArgs(ToolArgs):
    worker_id: str = Field(description="The worker, as vibe_spawn returned it.")


class VibeKill(VibeTool):
    name = "vibe_kill"
    description = "Stop a worker (with every process it started). Its last result is kept."
    Args = KillArgs
    Output = VibeKillOutput

    def label(self, args: KillArgs) -> str:
        return f"vibe_kill {args.worker_id}"

    async def call(self, ctx: CallContext, args: KillArgs) -> ToolResult:
        worker = _worker(ctx, args.worker_id)
        killed = await worker.kill()
        text = (f"Stopped worker {worker.id}." if killed else
                f"Worker {worker.id} had already finished ({worker.status.value}); nothing to stop.")
        return ToolResult.success(text, {**worker.describe(), "killed": killed})


class ListArgs(ToolArgs):
    pass


class VibeList(VibeTool):
    name = "vibe_list"
    description = "List this run's workers: tier, status, elapsed time and last result."
    Args = ListArgs
    Output = VibeListOutput

    async def call(self, ctx: CallContext, args: ListArgs) -> ToolResult:  # noqa: ARG002
        workers = _workers(ctx)
        limit = workers.pool.max_list_result_chars
        if not workers.workers:
            return ToolResult.success("No workers yet. Start one with vibe_spawn.", {"workers": []})
        described, lines = [], []
        for worker in workers.workers.values():
            info = worker.describe(limit)
            described.append(info)
            lines.append(_line(worker))
            if info["result"]:
                lines.append("  " + info["result"].replace("\n", "\n  "))
        return ToolResult.success("\n".join(lines), {"workers": described})
