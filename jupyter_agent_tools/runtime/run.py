"""A run: one agent's working directory, surface, approvals, resources and transcript.

`Run.call` is the only dispatch path. Every transport (Python, HTTP, the kernel bridge,
workers) ends up here: visible registry → argument validation → approval gate →
wrappers → tool.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import ValidationError

from ..files.errors import FilesError
from ..files.order import SeenFiles
from ..files.paths import relative_to_root, resolve_inside
from ..files.walk import FileWalker
from ..notebooks.journal import NotebookJournal
from .approvals import ApprovalGate
from .events import EventBus
from .file_errors import file_error, os_error
from .jobs import Job, JobTable
from .protocols import RuntimeView
from .registry import ToolRegistry
from .results import ErrorCode, ToolError, ToolResult
from .sandbox import SURFACES, RunSandbox, SandboxMode
from .schemas import tool_schemas
from .store import RunRecorder
from .tiers import Approvals, Surface
from .tool import CallContext, Origin, Resource, Tool
from .transcript import Transcript, TranscriptEntry
from .validation import describe_validation_error
from .wrappers import CallNext, Wrapper


class RunHost(RuntimeView, Protocol):
    """What a run needs of the runtime that created it (`runtime.Runtime` is one): a Protocol,
    so that this module need not import runtime.py, which imports it."""

    log: logging.Logger
    registry: ToolRegistry
    max_transcript_entries: int
    max_transcript_bytes: int

    def wrappers(self) -> list[Wrapper]:
        """Call wrappers, outermost first."""
        ...

    async def close_run(self, run_id: str, ended_by: str = "close") -> None:
        """Release everything the run holds; `ended_by`: close, idle or restart."""
        ...

    # A provider's own API is its package's (loaded by name from config): Any, not
    # ResourceProvider, whose module imports this one.
    def provider(self, resource: Resource | str) -> Any | None:
        """The provider of `resource`, if the runtime has it."""
        ...


@dataclass(frozen=True)
class RunOptions:
    """What a run was created with (the contract's `create_run` arguments)."""

    cwd: str = "."
    surface: Surface = Surface.FULL
    conversation_id: str | None = None
    vibe: bool = False
    approvals: Approvals = Approvals.AUTO
    space: str | None = None
    parent_id: str | None = None
    # Who created the run (shown by front ends): api, http, notebook, worker, mcp, cli.
    origin: Origin = Origin.API
    # The user's kernel its Python eval borrows (given, or the `notebook` session's), and
    # that notebook's path relative to the server root.
    kernel_id: str | None = None
    notebook: str | None = None
    # The sandbox asked for (every surface; None: c.Runtime.sandbox's) and the network.
    sandbox: str | None = None
    network: bool | None = None
    # The agent's program as it names itself (MCP initialize's clientInfo), shown by front
    # ends to tell runs apart.
    client: ClientInfo | None = None


@dataclass(frozen=True)
class ClientInfo:
    """The program an agent runs in, as it names itself (untrusted: bounded, shown as text)."""

    name: str
    version: str | None = None

    MAX_CHARS = 100

    @classmethod
    def of(cls, info: Any) -> ClientInfo | None:
        """From MCP's `clientInfo` ({name, version, ...}); None when it names nothing."""
        if not isinstance(info, dict) or not isinstance(info.get("name"), str):
            return None
        name = info["name"].strip()[:cls.MAX_CHARS]
        version = info.get("version")
        version = (version.strip()[:cls.MAX_CHARS] or None) if isinstance(version, str) else None
        return cls(name, version) if name else None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version}


@runtime_checkable
class HoldsStagedEdits(Protocol):
    """A run's handle that keeps edits waiting for a human's accept or discard (the parser's)."""

    def staged_count(self) -> int:
        """How many of its edits are still staged."""
        ...


class Run:
    """One agent run. Create through `Runtime.create_run`; close through `Runtime.close_run`."""

    def __init__(self, runtime: RunHost, options: RunOptions, cwd: Path,
                 run_id: str | None = None) -> None:
        self.runtime = runtime
        self.options = options
        self.id = run_id or uuid.uuid4().hex
        self.cwd = cwd
        self._cwd_text = os.fspath(cwd)
        self._cwd_prefix = os.path.join(self._cwd_text, "")  # with one trailing separator
        # The cwd as a path from the root: where a read from the kernel's caches starts.
        self.cwd_under_root = relative_to_root(runtime.root_path, cwd)
        self.surface = options.surface
        self.conversation_id = options.conversation_id
        self.space = options.space
        self.created_at = time.time()
        self.resources: dict[Resource, Any] = {}
        self.notebooks = NotebookJournal()
        self.seen_files = SeenFiles()
        self.gate = ApprovalGate(options.approvals)
        #: What of the run is confined (create_run sets it from the options; else nothing).
        self.sandbox = RunSandbox({surface: SandboxMode.OFF for surface in SURFACES}, True, cwd)
        self.events = EventBus()
        self.transcript = Transcript(max_entries=runtime.max_transcript_entries,
                                     max_bytes=runtime.max_transcript_bytes)
        self.closed = False
        #: Work that goes on between calls (`bash {background: true}`, a call's own process):
        #: all of it ends when the run closes (runtime/jobs.py).
        self.jobs = JobTable(max_jobs=runtime.max_jobs_per_run,
                             max_output_bytes=runtime.max_job_output_bytes)
        #: What this run writes to the run store as it changes (runtime/store.py).
        self.record = RunRecorder(None, self.id)
        #: The ended run whose transcript this one continues (same conversation_id), and what
        #: the agent is told of it with its first result.
        self.resumed_from: str | None = None
        self.notice: str | None = None
        self._serial_locks: dict[Hashable, asyncio.Lock] = {}
        #: The job of a long call holding a serial scope's lock (runs_long), by scope.
        self._serial_jobs: dict[Hashable, Job] = {}
        self._call_counter = 0
        #: Calls started and not finished, and when a call last started or finished (time.time):
        #: the server reports them to JupyterHub as activity (activity.py).
        self.calls_in_flight = 0
        self.last_call_at: float | None = None

    # -- paths ----------------------------------------------------------------------------

    def resolve(self, path: str) -> Path:
        """An absolute path for `path` (relative to the run's cwd), refused outside the root."""
        return resolve_inside(self.runtime.root_path, self.cwd, path)

    def _resolve_all(self, paths: list[str]) -> None:
        for path in paths:
            self.resolve(path)

    def relpath(self, path: Path) -> str:
        """How results name a file: relative to the run's cwd when inside it, else to the root."""
        # A string prefix, not Path.relative_to: results name a file per match, and pathlib's
        # parsing was a visible share of a search call's CPU. Path objects are normalized, so
        # the prefix test says what relative_to would (POSIX's `//` root aside).
        text = os.fspath(path)
        if not text.startswith("//"):
            if text == self._cwd_text:
                return "."
            if text.startswith(self._cwd_prefix):
                return text[len(self._cwd_prefix):]
        try:
            return path.relative_to(self.cwd).as_posix()
        except ValueError:
            return relative_to_root(self.runtime.root_path, path)

    def walker(self, **overrides: Any) -> FileWalker:
        """A tree walker configured from the runtime's limits."""
        options: dict[str, Any] = {
            "respect_gitignore": self.runtime.respect_gitignore,
            "max_file_bytes": self.runtime.max_read_bytes,
            "skip_dirs": tuple(self.runtime.skip_dirs),
        }
        options.update(overrides)
        return FileWalker(self.runtime.root_path, **options)

    # -- what the run can see -------------------------------------------------------------

    def registered_tools(self) -> list[Tool]:
        """Tools whose resources are all attached to this run, whatever their tier."""
        attached = set(self.resources)
        return [tool for tool in self.runtime.registry if tool.requires <= attached]

    def visible_tools(self) -> list[Tool]:
        """Registered tools within this run's surface ceiling: all the agent may know of."""
        return [tool for tool in self.registered_tools() if self.surface.allows(tool.tier)]

    def tool_names(self) -> list[str]:
        return sorted(tool.name for tool in self.visible_tools())

    def schemas(self, format: str = "json") -> list[dict[str, Any]]:
        return tool_schemas(self.visible_tools(), format)

    def attach(self, resource: Resource, handle: Any) -> None:
        """Attach a resource after creation; says `tools_changed` when the visible tools change.

        Transports that list tools once (MCP sessions) listen for that event to tell their
        client the list changed.
        """
        before = self.tool_names()
        self.resources[resource] = handle
        after = self.tool_names()
        if after != before:
            self.events.publish("tools_changed", run_id=self.id, tools=after)

    @property
    def approvals(self) -> str:
        """The run's approval policy: auto, ask or deny."""
        return self.gate.policy.value

    def describe(self) -> dict[str, Any]:
        root = self.runtime.root_path
        return {
            "id": self.id,
            "cwd": self.cwd.relative_to(root).as_posix() or ".",
            "surface": self.surface.value,
            "approvals": self.gate.policy.value,
            "conversation_id": self.conversation_id,
            "space": self.space,
            "vibe": self.options.vibe,
            "parent_id": self.options.parent_id,
            "origin": self.options.origin.value,
            "kernel_id": self.options.kernel_id,
            "notebook": self.options.notebook,
            "sandbox": self.sandbox.describe(),
            "resources": sorted(r.value for r in self.resources),
            "tools": self.tool_names(),
            "created_at": self.created_at,
            "transcript_dropped": self.transcript.dropped,
            "state": "ended" if self.closed else "open",
            "ended_by": None,
            "resumed_from": self.resumed_from,
            "notice": self.notice,
            "client": None if self.options.client is None else self.options.client.describe(),
            "staged_edits": sum(handle.staged_count() for handle in self.resources.values()
                                if isinstance(handle, HoldsStagedEdits)),
        }

    # -- the one dispatch path ------------------------------------------------------------

    async def call(
        self, name: str, args: dict[str, Any] | None = None, *, origin: Origin | str = Origin.API
    ) -> ToolResult:
        """Call a tool by name. Never raises for a tool failure: see `ToolResult.error`."""
        args = {} if args is None else args
        origin = Origin(origin)
        self._call_counter += 1
        call_id = f"{self.id[:8]}-{self._call_counter}"
        tool = self._visible_tool(name)
        parsed: Any = None
        invalid: ValidationError | None = None
        if tool is not None and isinstance(args, dict):
            try:
                parsed = tool.Args.model_validate(args)
            except ValidationError as error:
                invalid = error
        label = tool.label(parsed) if tool is not None and parsed is not None else name
        entry = self.transcript.start(
            TranscriptEntry(
                call_id=call_id,
                tool=name,
                label=label,
                args=args if isinstance(args, dict) else {"_": repr(args)},
                origin=origin.value,
                started_at=time.time(),
            )
        )
        self.events.publish("call_started", run_id=self.id, call_id=call_id, tool=name,
                            label=label, origin=origin.value)
        started = time.perf_counter()
        self.calls_in_flight += 1
        self.last_call_at = time.time()
        try:
            result = await self._dispatch(tool, name, args, parsed, invalid, origin, call_id)
        except ToolError as error:
            result = error.to_result()
        except FilesError as exc:
            result = file_error(exc).to_result()
        except asyncio.CancelledError:
            result = ToolError(ErrorCode.TIMEOUT, "The call was cancelled before it finished. "
                               "Call again if you still need its result.").to_result()
            self._finish(entry, result, started, tool)
            raise
        except OSError as exc:
            result = self._os_failure(name, exc)
        except Exception as exc:  # noqa: BLE001 - a tool bug must not take the transport down
            result = self._bug(name, exc)
        finally:
            self.calls_in_flight -= 1
            self.last_call_at = time.time()
        if self.notice is not None:  # said once, with the first result
            result.text = f"[{self.notice}]\n\n{result.text}"
            if result.blocks:
                result.blocks.insert(0, {"type": "text", "text": f"[{self.notice}]"})
            self.notice = None
        self._finish(entry, result, started, tool)
        return result

    def _os_failure(self, name: str, exc: OSError) -> ToolResult:
        # A path the OS refuses (too long, not allowed, ...) is no bug: say what to do. An
        # OSError about no file (a broken pipe, a timeout) stays a bug of the tool.
        if exc.filename is None:
            return self._bug(name, exc)
        self.runtime.log.warning("tool %s: %s", name, exc)
        return os_error(exc, action="open").to_result()

    def _bug(self, name: str, exc: Exception) -> ToolResult:
        self.runtime.log.exception("tool %s failed", name)
        return ToolError(
            ErrorCode.FAILED,
            f"{name} failed unexpectedly ({type(exc).__name__}: {exc}). This is a bug in the "
            "tool; try another way, and report it.",
        ).to_result()

    def _finish(self, entry: TranscriptEntry, result: ToolResult, started: float,
                tool: Tool | None) -> None:
        duration_ms = (time.perf_counter() - started) * 1000
        keep = tool is not None and tool.transcript_keeps_data and result.ok
        self.transcript.finish(entry, ok=result.ok, error_code=result.code,
                               duration_ms=duration_ms, text=result.text,
                               data=result.data if keep else None)
        if self.record and entry._sequence >= self.transcript.dropped:
            self.record.entry_finished(entry._sequence, entry.to_json(), self.transcript.dropped)
        self.events.publish("call_finished", run_id=self.id, call_id=entry.call_id,
                            tool=entry.tool, label=entry.label, origin=entry.origin,
                            ok=result.ok, error_code=result.code,
                            duration_ms=entry.duration_ms)

    def _visible_tool(self, name: str) -> Tool | None:
        tool = self.runtime.registry.get(name)
        if tool is None or not tool.requires <= self.resources.keys():
            return None
        return tool if self.surface.allows(tool.tier) else None

    async def _dispatch(
        self,
        tool: Tool | None,
        name: str,
        args: Any,
        parsed: Any,
        invalid: ValidationError | None,
        origin: Origin,
        call_id: str,
    ) -> ToolResult:
        if self.closed:
            raise ToolError(ErrorCode.NOT_FOUND, f"Run {self.id} is closed. Create a new run.")
        if tool is None:
            raise ToolError(
                ErrorCode.UNKNOWN_TOOL,
                f"There is no tool {name!r} in this run. Available: {', '.join(self.tool_names())}.",
            )
        if not isinstance(args, dict):
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"Arguments for {name} must be a JSON object, not {type(args).__name__}.")
        if invalid is not None:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            describe_validation_error(name, invalid, tool.json_schema()))
        ctx = CallContext(run=self, tool=tool, origin=origin, call_id=call_id)
        # A call that cannot succeed fails here, before a human is asked to approve it.
        await tool.prepare(ctx, parsed)
        paths = tool.paths(parsed)
        tier = tool.call_tier(parsed)
        if paths and not self.gate.passes_unasked(tool, tier):
            # Resolving touches the disk, so not on the loop; a call that goes ahead unasked
            # skips it: its tool resolves each path again where it reads or writes.
            await asyncio.to_thread(self._resolve_all, paths)
        tool.precheck(ctx, parsed)
        await self.gate.check(self, tool, args, parsed, tier)
        if not tool.parallel_safe:
            self._refuse_behind_job(tool, tool.serial_scope(ctx, parsed))
        if tool.runs_long(parsed) and self.runtime.max_call_seconds > 0:
            return await self._long_call(ctx, parsed)
        if tool.parallel_safe:
            return await self._wrapped(ctx, parsed)
        lock = self._serial_locks.setdefault(tool.serial_scope(ctx, parsed), asyncio.Lock())
        async with lock:
            return await self._wrapped(ctx, parsed)

    def _refuse_behind_job(self, tool: Tool, scope: Hashable) -> None:
        """A call that would queue behind a long call gone on as a job (the same eval
        interpreter, the same notebook) is refused: it would wait, silently, for as long as
        the job runs."""
        holder = self._serial_jobs.get(scope)
        if holder is None or not holder.background or holder.done:
            return
        raise ToolError(
            ErrorCode.BUSY,
            f"{tool.name} cannot run now: {holder.id} ({holder.label[:80]}) is still running "
            f"in the same {tool.name} session, as a job. Wait for it with job "
            f'{{action: "wait", job_id: "{holder.id}"}} (or read it with "output", stop it '
            'with "cancel"), then call again.',
            data={"job_id": holder.id, "status": "busy", "jobs": [holder.describe()]})

    async def _long_call(self, ctx: CallContext, args: Any) -> ToolResult:
        """A call that may run long runs as a job of the run: answered when it ends within
        max_call_seconds, else `running` with its job id and output so far (the job goes
        on; `job` waits for it, reads or cancels it). Cancelled before that (the client gave
        up), the job is cancelled too, as the call itself would have been."""
        tool = ctx.tool
        scope = None if tool.parallel_safe else tool.serial_scope(ctx, args)
        label = tool.label(args)

        async def work(job: Job) -> ToolResult:
            ctx.job = job
            if scope is None:
                return await self._wrapped(ctx, args)
            lock = self._serial_locks.setdefault(scope, asyncio.Lock())
            if lock.locked():  # behind a call of the same scope, which may go on as a job
                ctx.say(f"[waiting for the {tool.name} call before it in this session]\n")
            async with lock:
                self._serial_jobs[scope] = job
                try:
                    return await self._wrapped(ctx, args)
                finally:
                    if self._serial_jobs.get(scope) is job:
                        del self._serial_jobs[scope]

        job = self.jobs.start(tool.name, label, work, background=False)
        try:
            finished = await job.wait(self.runtime.max_call_seconds)
        except asyncio.CancelledError:
            await self.jobs.cancel(job, "call_cancelled")
            raise
        assert job.task is not None
        if finished:
            # As the call would have ended: a bug raises to Run.call, which reports it.
            return job.result() if job.task.cancelled() else job.task.result()
        self.jobs.detach(job)
        job.task.add_done_callback(lambda _task: self._job_ended(job, ctx.call_id))
        return running_result(job, label, self.runtime.max_call_seconds,
                              self.runtime.max_output_chars)

    def _job_ended(self, job: Job, call_id: str) -> None:
        """A call that went on as a job ended: front ends hear it (its call ended long ago)."""
        described = job.describe()
        self.events.publish("job_finished", run_id=self.id, call_id=call_id, job_id=job.id,
                            tool=job.tool, label=job.label, status=described["status"])

    async def _wrapped(self, ctx: CallContext, args: Any) -> ToolResult:
        async def innermost() -> ToolResult:
            # Wrappers see every outcome as a result: a failed call is bounded and noted too.
            try:
                return await ctx.tool.call(ctx, args)
            except ToolError as error:
                return error.to_result()
            except FilesError as exc:  # what a tool let through reads as the files contract
                return file_error(exc).to_result()

        call_next: CallNext = innermost
        for wrapper in reversed(self.runtime.wrappers()):
            call_next = _bind(wrapper, ctx, args, call_next)
        return await call_next()


def running_result(job: Job, label: str, seconds: float, max_chars: int) -> ToolResult:
    """The answer of a call that goes on as `job`: that it still runs, how to go on, and
    its output so far (the end of it)."""
    text = job.output.text()
    if len(text) > max_chars or job.output.truncated:
        text = "[... earlier output cut: job output shows the end ...]\n" + text[-max_chars:]
    how = (f'Call job {{action: "wait", job_id: "{job.id}"}} to wait for its result, '
           f'job {{action: "output", job_id: "{job.id}"}} to read its output so far, or '
           f'job {{action: "cancel", job_id: "{job.id}"}} to stop it. It ends with this run.')
    return ToolResult.success(
        f"Still running after {seconds:g}s: {label[:80]} goes on as job {job.id}. {how}\n"
        f"Output so far:\n{text or '(none yet)'}",
        {"status": "running", "job_id": job.id, "output": text})


def _bind(wrapper: Wrapper, ctx: CallContext, args: Any, call_next: CallNext) -> CallNext:
    async def bound() -> ToolResult:
        return await wrapper(ctx, args, call_next)

    return bound
