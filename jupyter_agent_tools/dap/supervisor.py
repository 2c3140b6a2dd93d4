"""The debug supervisor: the `debug` resource. One session per conversation, with a hard TTL.

Sessions are keyed by the run's conversation id; a second launch or attach while one is live
is refused (`session_exists`), never a silent replacement. A session ends when it is
terminated, when its TTL runs out, when its adapter dies, when the run that started it
closes, or when the runtime shuts down; the next call says which, once.
"""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from traitlets import Dict, Float, Int, default
from typing_extensions import override

from ..discovery import BinaryFinder
from ..runtime.protocols import RunView
from ..runtime.resources import ResourceProvider
from ..runtime.tool import Resource
from .adapters import (
    AdapterSpec,
    Availability,
    LauncherScripts,
    adapter_python,
    availability,
    merge_specs,
)
from .errors import (
    AdapterUnusable,
    DebugError,
    NoSession,
    SessionExists,
    SessionFailed,
    StartFailed,
)
from .kernel import KernelAttachFailed, KernelDebugSession
from .session import DebugSession, SessionLimits, State

if TYPE_CHECKING:
    from ..kernels.interpreters import EvalCells
    from ..kernels.session import KernelSession
    from ..runtime.run import Run, RunOptions


@dataclass
class Conversation:
    """What a conversation keeps between calls: breakpoints and at most one live session."""

    breakpoints: dict[Path, list[int]] = field(default_factory=dict)
    session: DebugSession | None = None
    owner_run: str | None = None
    expiry: asyncio.TimerHandle | None = None
    ended_because: str | None = None  # told once, by the next call that finds no session
    runs: set[str] = field(default_factory=set)
    # Runs sharing the conversation share the session: their calls take turns.
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class _SpareKey(NamedTuple):
    """What a launch must match to take the spare adapter."""

    spec_name: str
    argv: tuple[str, ...]
    folder: Path


@dataclass
class _SpareAdapter:
    """An adapter process started ahead of the next launch (no debuggee), and what for."""

    key: _SpareKey
    session: DebugSession
    expiry: asyncio.TimerHandle


class DebugSupervisor(ResourceProvider):
    """Starts debug adapters for runs, keyed by conversation id, and ends them all."""

    resource = Resource.DEBUG

    session_ttl_seconds = Float(
        1800.0, help="Hard lifetime of a debug session; at the end the debuggee and adapter are "
        "ended and the next call says so."
    ).tag(config=True)
    adapters = Dict(
        help="Add or override debug adapters: {name: {field: value}}. Fields: adapter_id, "
        "binaries, command, markers, program_suffixes, transport, python, launch_arguments, "
        "attach_arguments, exception_filters, evaluate_context, version_args. A known name "
        "overrides only the fields given; an invalid entry is logged, left out and named in "
        "the status (spec_errors)."
    ).tag(config=True)
    request_timeout_seconds = Float(
        15.0, help="Longest wait for an adapter to answer one request."
    ).tag(config=True)
    start_timeout_seconds = Float(
        30.0, help="Longest wait for an adapter to start and accept launch/attach."
    ).tag(config=True)
    stop_wait_seconds = Float(
        15.0, help="How long launch, continue and steps wait for execution to stop or end "
        "before answering that the program is still running."
    ).tag(config=True)
    exit_grace_seconds = Float(
        1.0, help="How long an adapter may take to exit after disconnect before its process "
        "groups are killed."
    ).tag(config=True)
    binary_probe_timeout_seconds = Float(
        10.0, help="Seconds an adapter binary may take to answer its version probe (run once "
        "per binary, with the spec's version_args) before it counts as not runnable.",
    ).tag(config=True)
    max_output_chars = Int(
        20_000, help="Debuggee output kept per session (the newest is kept)."
    ).tag(config=True)
    output_quiet_seconds = Float(
        0.1, help="After a stop or the program's end, the report waits until the debuggee's "
        "output has been quiet this long (at most ten times as long in all): adapters forward "
        "output apart from stops, so what was printed just before a stop can trail it. 0 "
        "answers at once.",
    ).tag(config=True)

    spare_adapter_seconds = Float(
        300.0, help="After a debugpy launch, one more adapter for the same interpreter and "
        "folder is started and kept ready this long for the next launch (starting one takes "
        "about a quarter of a second: a Python process importing debugpy). At most one is kept; "
        "it has no debuggee. 0: none.",
    ).tag(config=True)

    @default("adapters")
    def _default_adapters(self) -> dict[str, Any]:
        return {}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.specs, self.spec_errors = merge_specs(dict(self.adapters), self.log)
        self.binaries = BinaryFinder(self.binary_probe_timeout_seconds)
        self.launcher_scripts = LauncherScripts(self.binary_probe_timeout_seconds, self._spawn)
        self.conversations: dict[str, Conversation] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._spare: _SpareAdapter | None = None

    # -- resource provider -----------------------------------------------------------------

    def attaches(self, options: RunOptions) -> bool:
        """Debug sessions are shared per conversation: a run without one gets none."""
        return bool(options.conversation_id)

    def attach(self, run: Run, options: RunOptions) -> DebugSupervisor | None:
        if not self.attaches(options) or not options.conversation_id:
            return None
        self.conversations.setdefault(options.conversation_id, Conversation()).runs.add(run.id)
        return self

    @override
    async def release(self, run: Run, handle: Any) -> None:
        conversation = self.conversations.get(run.conversation_id or "")
        if conversation is None:
            return
        conversation.runs.discard(run.id)
        if conversation.owner_run == run.id:
            await self._end(conversation, "the run that started it closed")
        if not conversation.runs:
            self.conversations.pop(run.conversation_id or "", None)

    async def release_idle(self) -> None:
        await self._drop_spare()

    async def shutdown(self) -> None:
        for conversation in list(self.conversations.values()):
            await self._end(conversation, "the server shut down")
        self.conversations.clear()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._drop_spare()

    async def status(self) -> dict[str, Any]:
        """Which adapters' binaries are found (markers depend on each run's directory)."""
        specs = list(self.specs.values())
        checks = await asyncio.gather(*(self.binaries.check(spec.binaries, spec.version_args,
                                                             spec.install)
                                        for spec in specs))
        adapters = {
            # A python adapter may still find the project's own virtualenv at launch.
            spec.name: {"available": bool(found.path) or spec.python, "markers": spec.markers,
                        "reason": None if found.path or spec.python else found.problem}
            for spec, found in zip(specs, checks, strict=True)
        }
        live = sum(1 for c in self.conversations.values() if c.session is not None)
        return {"adapters": adapters, "sessions": live, "spec_errors": self.spec_errors,
                "session_ttl_seconds": self.session_ttl_seconds}

    # -- what the debug tool uses ----------------------------------------------------------

    async def availability(self, run: RunView) -> list[Availability]:
        """Every adapter, usable for this run's directory or not, and why."""
        return list(await asyncio.gather(*(
            availability(spec, run.cwd, self.runtime.root_path, self.binaries)
            for spec in self.specs.values())))

    def conversation(self, run: RunView) -> Conversation:
        return self.conversations.setdefault(run.conversation_id or "", Conversation())

    def session(self, run: RunView) -> DebugSession:
        """The conversation's live session, or `NoSession` saying why the last one ended
        (told once)."""
        conversation = self.conversation(run)
        if conversation.session is None:
            why, conversation.ended_because = conversation.ended_because, None
            raise NoSession(why)
        return conversation.session

    async def start(
        self, run: RunView, spec: AdapterSpec, command: str, arguments: dict[str, Any],
        program: str | None = None, port: int | None = None,
    ) -> DebugSession:
        """Start `spec`'s adapter and launch or attach; the session answers the conversation."""
        conversation = self.conversation(run)
        if conversation.session is not None and conversation.session.state is State.EXITED:
            await self._end(conversation, None)  # its program finished: nothing is replaced
        if conversation.session is not None:
            raise SessionExists(conversation.session.spec.name,
                                conversation.session.state.value)
        found = await availability(spec, run.cwd, self.runtime.root_path, self.binaries)
        if not found.usable:
            raise AdapterUnusable(spec.name, run.relpath(run.cwd) or ".", found.reason or "")
        assert found.binary is not None
        binary = found.binary
        cwd = found.project_root or run.cwd
        if spec.python:
            binary = adapter_python(found.binary)
            if command == "launch":
                python = await self.launcher_scripts.interpreter(found.binary, cwd)
                arguments = {**arguments, "python": [python]}
        argv = [part.replace("{binary}", binary) for part in spec.command]
        # A sandboxed run's adapter is confined, and so the debuggee it launches; it never
        # takes nor leaves a spare adapter (those run unconfined).
        sandbox = run.sandbox.policy("debug")
        spare_key = _SpareKey(spec.name, tuple(argv), cwd)
        session = await self._take_spare(spare_key) if sandbox is None else None
        opened = session is not None
        if session is None:
            session = DebugSession(spec, self._limits(), self.log, self._adapter_gone)
        session.program = program
        conversation.ended_because = None
        conversation.session, conversation.owner_run = session, run.id
        try:
            if command == "attach" and spec.attach_transport == "tcp":
                assert port is not None
                await session.connect("127.0.0.1", port)
            elif not opened:
                await session.open(argv, cwd, env={**os.environ, **run.sandbox.env("debug")},
                                   sandbox=sandbox)
            await session.begin(command, arguments, dict(conversation.breakpoints))
            await session.wait_for_change()
        except (SessionFailed, OSError) as exc:
            await self._end(conversation, None, expected=session)
            raise StartFailed(command, spec.name, exc, session.output.text()) from None
        except BaseException:  # cancelled mid-start: nothing may outlive the call
            await asyncio.shield(self._end(conversation, None, expected=session))
            raise
        self._expire(conversation, session)
        if (command == "launch" and spec.python and self.spare_adapter_seconds > 0
                and sandbox is None):
            # Started once this launch has stopped or run: the next launch takes it.
            self._spawn(self._start_spare(spec, spare_key))
        return session

    async def _take_spare(self, key: _SpareKey) -> DebugSession | None:
        """The spare adapter if it was started for `key` and still runs; any other is ended."""
        spare, self._spare = self._spare, None
        if spare is None:
            return None
        spare.expiry.cancel()
        session = spare.session
        if spare.key == key and session.gone is None and session.processes is not None \
                and session.processes.alive_now():
            return session
        self._spawn(session.end())  # a launch elsewhere does not wait for it
        return None

    async def _start_spare(self, spec: AdapterSpec, key: _SpareKey) -> None:
        await self._drop_spare()
        session = DebugSession(spec, self._limits(), self.log, self._adapter_gone)
        try:
            await session.open(list(key.argv), key.folder, env=dict(os.environ))
        except OSError:  # the launch that asked for it says what is wrong, if anything is
            await session.end()
            return
        if self._spare is not None:  # two launches at once: keep one spare
            await session.end()
            return
        expiry = asyncio.get_running_loop().call_later(
            self.spare_adapter_seconds, lambda: self._spawn(self._drop_spare()))
        self._spare = _SpareAdapter(key, session, expiry)

    async def _drop_spare(self) -> None:
        spare, self._spare = self._spare, None
        if spare is not None:
            spare.expiry.cancel()
            await spare.session.end()

    def _expire(self, conversation: Conversation, session: DebugSession) -> None:
        # Every step of the start is bounded; the hard TTL counts from a working session.
        ttl = self.session_ttl_seconds
        reason = f"it reached its {_minutes(ttl)} time limit (hard TTL)"
        conversation.expiry = asyncio.get_running_loop().call_later(
            ttl, lambda: self._spawn(self._end(conversation, reason, expected=session))
        )

    async def attach_kernel(self, run: RunView, kernel: KernelSession, label: str,
                            eval_cells: EvalCells) -> KernelDebugSession:
        """Attach to a kernel's own debugger (the Jupyter debug protocol); the session
        answers the conversation, as an adapter's would."""
        conversation = self.conversation(run)
        if conversation.session is not None and conversation.session.state is State.EXITED:
            await self._end(conversation, None)
        if conversation.session is not None:
            raise SessionExists(conversation.session.spec.name,
                                conversation.session.state.value)
        session = KernelDebugSession(kernel, label, self._limits(), self.log,
                                     self._adapter_gone, eval_cells)
        conversation.ended_because = None
        conversation.session, conversation.owner_run = session, run.id
        try:
            await session.attach_kernel()
        except SessionFailed as exc:
            await self._end(conversation, None, expected=session)
            raise KernelAttachFailed(kernel.kernel_id, str(exc)) from None
        except DebugError:
            await self._end(conversation, None, expected=session)
            raise
        except BaseException:
            await asyncio.shield(self._end(conversation, None, expected=session))
            raise
        self._expire(conversation, session)
        return session

    def expires_in(self, run: RunView) -> float | None:
        """Seconds left before the conversation's session reaches its hard TTL."""
        expiry = self.conversation(run).expiry
        if expiry is None:
            return None
        return max(0.0, expiry.when() - asyncio.get_running_loop().time())

    async def terminate(self, run: RunView) -> DebugSession:
        """End the conversation's session (the debuggee and the adapter)."""
        conversation = self.conversation(run)
        session = self.session(run)
        await self._end(conversation, None)
        return session

    async def fail(self, run: RunView, reason: str) -> None:
        """End a session that cannot go on, so the next call says `reason`."""
        await self._end(self.conversation(run), reason)

    # -- internals -------------------------------------------------------------------------

    def _limits(self) -> SessionLimits:
        return SessionLimits(
            request_timeout=self.request_timeout_seconds,
            start_timeout=self.start_timeout_seconds,
            # A continue never keeps its request open past max_call_seconds: it answers that
            # the program still runs (status checks again), as after stop_wait.
            stop_wait=min(self.stop_wait_seconds, self.runtime.max_call_seconds or math.inf),
            exit_grace=self.exit_grace_seconds,
            max_output_chars=self.max_output_chars,
            output_quiet=self.output_quiet_seconds,
        )

    async def _end(
        self, conversation: Conversation, reason: str | None,
        expected: DebugSession | None = None,
    ) -> None:
        session = conversation.session
        if session is None or (expected is not None and session is not expected):
            return
        conversation.session, conversation.owner_run = None, None
        if conversation.expiry is not None:
            conversation.expiry.cancel()
            conversation.expiry = None
        conversation.ended_because = reason
        await session.end()

    def _adapter_gone(self, session: DebugSession, reason: str) -> None:
        for conversation in self.conversations.values():
            if conversation.session is session:
                self._spawn(self._end(conversation, f"{reason}; its debuggee was ended",
                                      expected=session))

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:g}-minute" if seconds >= 60 else f"{seconds:g}-second"
