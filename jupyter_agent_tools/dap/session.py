"""One debug session: an adapter process, the DAP conversation with it, and the debuggee's state.

The start follows what debugpy 1.8 and lldb-dap 19 need: initialize → launch/attach sent
without waiting → `initialized` → breakpoints and exception filters → configurationDone →
the launch response. Frame ids and variable references handed out are valid only until
execution resumes; the session refuses stale ones instead of letting an adapter misbehave.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from ..processes import DEVNULL, PIPE, ManagedProcess
from .adapters import AdapterSpec
from .client import BodyT, DapClient, StreamDapClient
from .errors import (
    AdapterGone,
    DapError,
    NoStoppedThread,
    NothingListening,
    ProgramFinished,
    ProgramRunning,
    RequestTimeout,
    SessionFailed,
    StaleFrame,
    StaleVariables,
)
from .protocol import (
    Breakpoint,
    Capabilities,
    DapModel,
    DisconnectArguments,
    EvaluateArguments,
    EvaluateResponseBody,
    Event,
    ExitedEventBody,
    InitializeArguments,
    OutputEventBody,
    ProcessEventBody,
    Scope,
    ScopesArguments,
    ScopesResponseBody,
    SetBreakpointsArguments,
    SetBreakpointsResponseBody,
    SetExceptionBreakpointsArguments,
    Source,
    SourceBreakpoint,
    StackFrame,
    StackTraceArguments,
    StackTraceResponseBody,
    StoppedEventBody,
    TerminateArguments,
    Thread,
    ThreadArguments,
    ThreadsResponseBody,
    Variable,
    VariablesArguments,
    VariablesResponseBody,
)

# Output categories that are the debuggee's own; telemetry and adapter chatter are dropped.
DEBUGGEE_OUTPUT = frozenset({"stdout", "stderr"})


class State(str, Enum):
    STARTING = "starting"
    RUNNING = "running"
    STOPPED = "stopped"
    EXITED = "exited"


@dataclass(frozen=True)
class SessionLimits:
    """The bounds a session works within (the supervisor's configuration)."""

    request_timeout: float = 15.0
    start_timeout: float = 30.0
    stop_wait: float = 15.0
    exit_grace: float = 1.0
    max_output_chars: int = 20_000
    output_quiet: float = 0.1
    max_frames: int = 30
    max_variables: int = 50
    max_value_chars: int = 400


@dataclass
class StopInfo:
    """Where and why execution stopped."""

    reason: str
    thread_id: int | None
    description: str | None = None
    frame: StackFrame | None = None


@dataclass
class OutputBuffer:
    """The debuggee's stdout/stderr, bounded: the oldest text goes first.

    Each stream is kept whole-line: adapters forward writes as they come, and a partial line
    of stdout would otherwise be split by a line of stderr ("totalto stderr 3").
    """

    max_chars: int
    chunks: deque[str] = field(default_factory=deque)
    partial: dict[str, str] = field(default_factory=dict)
    size: int = 0
    dropped: int = 0
    unread_from: int = 0  # total characters written when output was last reported
    written: int = 0

    def append(self, stream: str, text: str) -> None:
        head, newline, tail = (self.partial.pop(stream, "") + text).rpartition("\n")
        if tail:
            self.partial[stream] = tail
        if newline:
            self._keep(head + newline)

    def text(self) -> str:
        for stream in list(self.partial):
            self._keep(self.partial.pop(stream))
        return "".join(self.chunks)

    def take_new(self) -> str:
        """What was written since the last call (as much of it as is still kept)."""
        text = self.text()
        new = self.written - self.unread_from
        self.unread_from = self.written
        return text[-new:] if new else ""

    def _keep(self, text: str) -> None:
        self.chunks.append(text)
        self.size += len(text)
        self.written += len(text)
        while self.size > self.max_chars and self.chunks:
            head = self.chunks.popleft()
            cut = min(len(head), self.size - self.max_chars)
            if cut < len(head):
                self.chunks.appendleft(head[cut:])
            self.size -= cut
            self.dropped += cut


class DebugSession:
    """A live adapter and the program it debugs: `open` (or `connect`), then `begin`."""

    def __init__(
        self,
        spec: AdapterSpec,
        limits: SessionLimits,
        log: logging.Logger,
        on_gone: Callable[[DebugSession, str], None],
    ) -> None:
        self.spec = spec
        self.limits = limits
        self.log = log
        self.on_gone = on_gone
        self.state = State.STARTING
        self.program: str | None = None
        # An attached debuggee is not ours: it is detached from, never terminated or killed.
        self.attached = False
        self.began = False  # launch or attach sent: a debuggee may exist
        self.debuggee_pid: int | None = None
        self.exit_code: int | None = None
        self.stop: StopInfo | None = None
        self.output = OutputBuffer(limits.max_output_chars)
        self.capabilities = Capabilities()
        self.client: DapClient | None = None
        self.processes: ManagedProcess | None = None
        self._socket_dir: str | None = None
        self._initialized = asyncio.Event()
        self._changed = asyncio.Event()
        self._output_arrived = asyncio.Event()
        self._pause_requested = False
        self._resumed_with: str | None = None
        self._frames: dict[int, StackFrame] = {}
        self._references: set[int] = set()
        self._ending: asyncio.Task[None] | None = None
        self.gone: str | None = None  # why the adapter went away on its own, if it did
        self._watch: asyncio.Task[None] | None = None

    # -- start -----------------------------------------------------------------------------

    async def open(self, argv: list[str], cwd: Path, env: dict[str, str] | None = None,
                   sandbox: str | None = None) -> None:
        """Start the adapter process and connect to it; confined by `sandbox` (a policy,
        sandbox.py) when given: the debuggee it launches is confined with it."""
        if self.spec.transport == "unix":
            # A confined adapter makes its socket in the run's temp folder (env's TMPDIR).
            place = (env or {}).get("TMPDIR") if sandbox is not None else None
            self._socket_dir = tempfile.mkdtemp(prefix="agent-dap-", dir=place)
            socket_path = os.path.join(self._socket_dir, "dap.sock")
            argv = [part.replace("{socket}", socket_path) for part in argv]
        stdio = self.spec.transport == "stdio"
        pipe = PIPE if stdio else DEVNULL
        self.processes = await ManagedProcess.start(argv, cwd=cwd, env=env, stdin=pipe,
                                                    stdout=pipe, stderr=DEVNULL, sandbox=sandbox)
        process = self.processes.process
        if stdio:
            assert process.stdout is not None and process.stdin is not None
            reader, writer = process.stdout, process.stdin
        else:
            reader, writer = await self._connect_unix(socket_path)
        self.client = StreamDapClient(reader, writer, self._on_event, self.log)
        self._watch = asyncio.create_task(self._watch_adapter())

    async def connect(self, host: str, port: int) -> None:
        """Talk DAP straight to a debuggee's own listening adapter (no process of ours)."""
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port),
                                                    self.limits.start_timeout)
        except (OSError, asyncio.TimeoutError) as exc:
            raise NothingListening(host, port, str(exc)) from None
        self.client = StreamDapClient(reader, writer, self._on_event, self.log)
        self._watch = asyncio.create_task(self._watch_adapter())

    async def _connect_unix(
        self, socket_path: str
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        deadline = time.monotonic() + self.limits.start_timeout
        while time.monotonic() < deadline:
            assert self.processes is not None
            if not self.processes.running:
                raise SessionFailed("the adapter exited before it opened its socket")
            if os.path.exists(socket_path):
                with contextlib.suppress(OSError):
                    return await asyncio.open_unix_connection(socket_path)
            await asyncio.sleep(0.05)
        raise SessionFailed(
            f"the adapter did not open its socket within {self.limits.start_timeout:g}s"
        )

    async def begin(
        self, command: str, arguments: dict[str, Any], breakpoints: dict[Path, list[int]]
    ) -> None:
        """Run the start sequence for `launch` or `attach`, up to the adapter's answer."""
        client = self._client()
        self.attached = command == "attach"
        self.began = True
        try:
            self.capabilities = await client.request(
                "initialize", InitializeArguments(adapter_id=self.spec.adapter_id), Capabilities,
                self.limits.start_timeout,
            )
            started = client.send(command, _Raw.of(arguments))
            initialized = asyncio.create_task(self._initialized.wait())
            try:
                first: set[asyncio.Future[Any]] = {started, initialized}
                await asyncio.wait(first, timeout=self.limits.start_timeout,
                                   return_when=asyncio.FIRST_COMPLETED)
                if started.done() and not initialized.done():
                    await client.wait(started, 0)  # raises the adapter's reason if it failed
                    # an early success is allowed: `initialized` may still come
                    await asyncio.wait_for(asyncio.shield(initialized), self.limits.start_timeout)
            except asyncio.TimeoutError:
                pass
            finally:
                initialized.cancel()
            if not self._initialized.is_set():
                raise SessionFailed(f"the adapter sent no `initialized` event within "
                                    f"{self.limits.start_timeout:g}s")
            for path, lines in breakpoints.items():
                await self.set_breakpoints(path, lines)
            await self._set_exception_filters()
            # Running from here: the events that follow (even before the answer) win.
            self.state = State.RUNNING
            if self.capabilities.supports_configuration_done_request:
                await client.request("configurationDone", None, _Raw, self.limits.request_timeout)
            await client.wait(started, self.limits.start_timeout)
        except DapError as exc:
            raise SessionFailed(f"the adapter refused {exc.command}: {exc.message}") from None
        except (AdapterGone, RequestTimeout) as exc:
            raise SessionFailed(f"the adapter stopped answering ({exc})") from None

    async def _set_exception_filters(self) -> None:
        advertised = {f.filter for f in self.capabilities.exception_breakpoint_filters}
        filters = [f for f in self.spec.exception_filters if f in advertised]
        if advertised:
            await self._client().request(
                "setExceptionBreakpoints", SetExceptionBreakpointsArguments(filters=filters),
                _Raw, self.limits.request_timeout,
            )

    # -- events ----------------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        body = event.body or {}
        if event.event == "initialized":
            self._initialized.set()
        elif event.event == "stopped":
            stopped = StoppedEventBody.model_validate(body)
            reason = stopped.reason
            # lldb-dap can repeat the last step's stop after a continue; a continue never
            # ends in a step, so that one is stale.
            if self._resumed_with == "continue" and reason == "step":
                return
            # lldb-dap reports a requested pause as an `exception` stop.
            if self._pause_requested and reason == "exception":
                reason = "pause"
            self._pause_requested = False
            self._resumed_with = None
            self.stop = StopInfo(reason, stopped.thread_id, stopped.description or stopped.text)
            self.state = State.STOPPED
            if self.processes is not None:
                self.processes.snapshot()
            self._changed.set()
        elif event.event in ("exited", "terminated"):
            if event.event == "exited":
                self.exit_code = ExitedEventBody.model_validate(body).exit_code
            self.state = State.EXITED
            self.stop = None
            self._changed.set()
        elif event.event == "output" and self._ending is None:
            output = OutputEventBody.model_validate(body)
            if output.category in DEBUGGEE_OUTPUT:
                self.output.append(output.category, output.output.replace("\r\n", "\n"))
                self._output_arrived.set()
        elif event.event == "process":
            process = ProcessEventBody.model_validate(body)
            self.debuggee_pid = process.system_process_id
            if process.system_process_id and self.processes is not None and not self.attached:
                self.processes.track(process.system_process_id)
        # Everything else (thread, module, telemetry, debugpy's custom events) is not ours.

    async def _watch_adapter(self) -> None:
        if self.processes is not None:
            code = await self.processes.process.wait()
            why = f"the {self.spec.name} adapter exited unexpectedly (status {code})"
        else:
            assert self.client is not None
            why = f"the debuggee's adapter closed the connection ({await self.client.wait_closed()})"
        if self._ending is None:
            self.gone = why
            self._changed.set()  # wake a call waiting for a stop that will never come
            self.on_gone(self, why)

    # -- execution control -----------------------------------------------------------------

    async def resume(self, command: str, thread_id: int | None) -> None:
        """continue / next / stepIn / stepOut: references die, then wait for the next stop."""
        self._require_stopped(command)
        thread = self.thread_or_default(thread_id)
        self._invalidate()
        self.state = State.RUNNING
        self.stop = None
        self._resumed_with = command
        self._changed.clear()
        await self._call(command, ThreadArguments(thread_id=thread), _Raw)
        await self.wait_for_change()

    async def pause(self, thread_id: int | None) -> None:
        if self.state is State.STOPPED:
            return
        self._require_live("pause")
        self._pause_requested = True
        self._changed.clear()
        await self._call("pause", ThreadArguments(thread_id=thread_id or await self._any_thread()),
                         _Raw)
        await self.wait_for_change()

    async def wait_for_change(self) -> None:
        """Wait (bounded) until execution stops or the program ends; then locate the stop."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._changed.wait(), self.limits.stop_wait)
        if self.gone is not None:
            raise AdapterGone(self.gone)
        if self.state in (State.STOPPED, State.EXITED):
            await self._let_output_settle()
        await self.locate_stop()

    async def _let_output_settle(self) -> None:
        """Wait (bounded) until the debuggee's output falls quiet.

        Adapters forward output apart from stops (debugpy's launcher reads the program's pipe in
        another process), so what was printed just before a stop can arrive just after it.
        """
        quiet = self.limits.output_quiet
        if quiet <= 0:
            return
        deadline = asyncio.get_running_loop().time() + 10 * quiet
        self._output_arrived.clear()
        while asyncio.get_running_loop().time() < deadline:
            try:
                await asyncio.wait_for(self._output_arrived.wait(), quiet)
            except asyncio.TimeoutError:
                return
            self._output_arrived.clear()

    async def locate_stop(self) -> None:
        """Find the frame of a stop not located yet (one that came after a call answered)."""
        if self.state is not State.STOPPED or self.stop is None or self.stop.frame is not None:
            return
        with contextlib.suppress(DapError, RequestTimeout):
            thread = self.stop.thread_id or await self._any_thread()
            self.stop.thread_id = thread
            frames = await self.stack(thread, levels=1)
            self.stop.frame = frames[0] if frames else None

    # -- inspection ------------------------------------------------------------------------

    async def threads(self) -> list[Thread]:
        self._require_live("threads")
        return (await self._call("threads", None, ThreadsResponseBody)).threads

    async def stack(self, thread_id: int | None, levels: int | None = None) -> list[StackFrame]:
        self._require_stopped("stack")
        body = await self._call(
            "stackTrace",
            StackTraceArguments(thread_id=self.thread_or_default(thread_id),
                                levels=levels or self.limits.max_frames),
            StackTraceResponseBody,
        )
        frames = body.stack_frames[: self.limits.max_frames]
        self._frames.update((frame.id, frame) for frame in frames)
        return frames

    async def scopes(self, frame_id: int) -> list[Scope]:
        self._require_stopped("scopes")
        self._check_frame(frame_id)
        scopes = (await self._call("scopes", ScopesArguments(frame_id=frame_id),
                                   ScopesResponseBody)).scopes
        self._references.update(s.variables_reference for s in scopes if s.variables_reference)
        return scopes

    async def variables(self, reference: int) -> tuple[list[Variable], bool]:
        """Children of a scope or variable (bounded), and whether some were left out."""
        self._require_stopped("variables")
        if reference not in self._references:
            raise StaleVariables(reference)
        limit = self.limits.max_variables
        body = await self._call(
            "variables", VariablesArguments(variables_reference=reference, count=limit + 1),
            VariablesResponseBody,
        )
        shown = [self._clip(v) for v in body.variables[:limit]]
        self._references.update(v.variables_reference for v in shown if v.variables_reference)
        return shown, len(body.variables) > limit

    async def evaluate(self, expression: str, frame_id: int | None) -> EvaluateResponseBody:
        self._require_stopped("evaluate")
        if frame_id is None:
            frames = await self.stack(None, levels=1)
            frame_id = frames[0].id if frames else None
        else:
            self._check_frame(frame_id)
        result = await self._call(
            "evaluate",
            EvaluateArguments(expression=expression, frame_id=frame_id,
                              context=self.spec.evaluate_context),
            EvaluateResponseBody,
        )
        if result.variables_reference:
            self._references.add(result.variables_reference)
        result.result = _clip_text(result.result, self.limits.max_value_chars)
        return result

    async def set_breakpoints(self, path: Path, lines: list[int]) -> list[Breakpoint]:
        """Send one file's breakpoints (an empty list clears them); the adapter's verdicts."""
        body = await self._call(
            "setBreakpoints",
            SetBreakpointsArguments(source=Source(name=path.name, path=str(path)),
                                    breakpoints=[SourceBreakpoint(line=n) for n in lines]),
            SetBreakpointsResponseBody,
        )
        return body.breakpoints

    # -- end -------------------------------------------------------------------------------

    async def end(self) -> None:
        """Terminate the debuggee and the adapter; kill whatever does not exit in time.
        Idempotent: every caller waits for the same ending."""
        if self._ending is None:
            self._ending = asyncio.create_task(self._end())
        await asyncio.shield(self._ending)

    async def _end(self) -> None:
        client = self.client
        adapter_alive = self.processes is None or self.processes.running
        # An adapter never asked to launch or attach has no debuggee: end of input ends it.
        if client is not None and not client.closed and adapter_alive and self.began:
            short = min(self.limits.request_timeout, 5.0)
            with contextlib.suppress(DapError, AdapterGone, RequestTimeout):
                # Only requests the adapter advertises: lldb-dap 19 crashes on `terminate`.
                if self.capabilities.supports_terminate_request and not self.attached \
                        and self.state is not State.EXITED:
                    self._changed.clear()
                    await client.request("terminate", TerminateArguments(), _Raw, short)
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self._changed.wait(), short)
                await client.request(
                    "disconnect", DisconnectArguments(terminate_debuggee=not self.attached),
                    _Raw, short,
                )
        if client is not None:
            await client.close()  # end of input: the cue for an adapter to exit
        if self.processes is not None:
            # debugpy's adapter lingers after disconnect: the grace period bounds it.
            await self.processes.stop(self.limits.exit_grace, terminate=False)
        if self._watch is not None:
            self._watch.cancel()
        if self._socket_dir is not None:
            with contextlib.suppress(OSError):
                for name in os.listdir(self._socket_dir):
                    os.unlink(os.path.join(self._socket_dir, name))
                os.rmdir(self._socket_dir)
        self.state = State.EXITED

    # -- helpers ---------------------------------------------------------------------------

    def thread_or_default(self, thread_id: int | None) -> int:
        if thread_id is not None:
            return thread_id
        if self.stop is not None and self.stop.thread_id is not None:
            return self.stop.thread_id
        raise NoStoppedThread()

    async def _any_thread(self) -> int:
        threads = await self.threads()
        if not threads:
            raise SessionFailed("the program has no threads")
        return threads[0].id

    def _client(self) -> DapClient:
        assert self.client is not None
        if self.client.closed:
            raise AdapterGone(self.client.closed_reason or "closed")
        return self.client

    async def _call(self, command: str, arguments: DapModel | None, body_type: type[BodyT]
                    ) -> BodyT:
        return await self._client().request(command, arguments, body_type,
                                            self.limits.request_timeout)

    def _require_live(self, what: str) -> None:
        if self.state is State.EXITED:
            raise ProgramFinished(what)

    def _require_stopped(self, what: str) -> None:
        self._require_live(what)
        if self.state is not State.STOPPED:
            raise ProgramRunning(what)

    def _check_frame(self, frame_id: int) -> None:
        if frame_id not in self._frames:
            raise StaleFrame(frame_id)

    def _invalidate(self) -> None:
        self._frames.clear()
        self._references.clear()

    def _clip(self, variable: Variable) -> Variable:
        variable.value = _clip_text(variable.value, self.limits.max_value_chars)
        return variable


class _Raw(DapModel):
    """An untyped body: arguments assembled from adapter spec data, or a body we ignore."""

    @classmethod
    def of(cls, fields: dict[str, Any]) -> _Raw:
        return cls.model_validate(fields)

    def wire(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def _clip_text(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
