"""Debugging a Jupyter kernel through the Jupyter debug protocol, as JupyterLab's debugger does.

The DAP conversation is the same as with any adapter (`DebugSession`); only its transport
differs: each request goes to the kernel as a `debug_request` on the control channel, its
response comes back as the `debug_reply`, and the debugger's events arrive on IOPub as
`debug_event`s. ipykernel runs debugpy inside the kernel and answers some requests itself:
`debugInfo` (whether a client started the debugger, the folder and hash of cell files) and
`dumpCell` (writes a cell's code to the file its code objects are named after, a hash of the
code, so breakpoints can be set in it). ipykernel serves one debug client: a second one would
share, and disturb, the first one's session, so attaching where the debugger is started is
refused.

While the debugger holds the kernel at a breakpoint the cell that stopped is still running:
the kernel's shell is busy for every client. The session marks its kernel paused
(`KernelSession.debug_stop`) with where it stopped, so the cell's caller can answer at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from IPython.core.inputtransformer2 import TransformerManager

from ..kernels.interpreters import EvalCells
from ..kernels.session import KernelSession
from .adapters import AdapterSpec
from .client import DapClient
from .errors import AdapterGone, DapError, DebugError, RequestTimeout, SessionFailed
from .protocol import DapModel, Event, StackFrame
from .session import DebugSession, SessionLimits, State

KERNEL_SPEC = AdapterSpec(name="ipykernel", adapter_id="python", binaries=[], command=[],
                          markers=[], evaluate_context="repl")
# How long a kernel may take to say what it supports (kernel_info on the control channel).
KERNEL_INFO_SECONDS = 10.0
# What a request answered while the kernel's debugger is stopped says (ipykernel answers {}).
DEBUGGER_NOT_STARTED = "the kernel's debugger is not started"
# How many of the run's newest eval cells a stop in an unknown cell file is looked for in.
MAX_CELLS_SEARCHED = 100


class KernelHasNoDebugger(DebugError):
    """The kernel does not implement the Jupyter debug protocol."""

    def __init__(self, kernel_name: str, language: str) -> None:
        super().__init__(f"the {kernel_name} kernel ({language}) has no debugger")
        self.kernel_name = kernel_name
        self.language = language


class DebuggerInUse(DebugError):
    """Another client (JupyterLab's debugger) has started the kernel's debugger."""

    def __init__(self, kernel_id: str) -> None:
        super().__init__(f"another client has started the debugger of kernel {kernel_id}")
        self.kernel_id = kernel_id


class KernelAttachFailed(DebugError):
    """The kernel's debugger refused or did not answer the start sequence."""

    def __init__(self, kernel_id: str, reason: str) -> None:
        super().__init__(f"attaching to the debugger of kernel {kernel_id} failed: {reason}")
        self.kernel_id = kernel_id
        self.reason = reason


class DebuggerStopped(DebugError):
    """Another client of the kernel's debugger (JupyterLab's) stopped it."""

    def __init__(self, action: str) -> None:
        super().__init__(f"another client stopped the kernel's debugger; {action} needs it")
        self.action = action


class KernelGone(DebugError):
    """The debugged kernel died or was restarted."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Place:
    """What a kernel's code file is to the agent: an eval cell, a notebook cell or a file."""

    source: str  # the code, to show lines of
    cell: int | str | None = None  # an eval cell's number, or a notebook cell's number
    cell_id: str | None = None
    notebook: str | None = None  # as results name it
    file: str | None = None

    def data(self, line: int) -> dict[str, Any]:
        found: dict[str, Any] = {"line": line}
        if self.notebook is not None:
            found.update(notebook=self.notebook, cell=self.cell, id=self.cell_id)
        elif self.cell is not None:
            found["cell"] = self.cell
        else:
            found["file"] = self.file
        return found

    @property
    def name(self) -> str:
        if self.notebook is not None:
            return f"{self.notebook} [cell {self.cell}]"
        if self.cell is not None:
            return f"eval cell {self.cell}"
        return str(self.file)

    def shown(self, line: int) -> str:
        return f"{self.name}:{line}" if self.file is not None else f"{self.name} line {line}"

    def line_text(self, line: int) -> str | None:
        lines = self.source.splitlines()
        return lines[line - 1].strip()[:200] if 0 < line <= len(lines) else None


def code_lines(source: str) -> set[int]:
    """The 1-based lines of a cell (IPython syntax included) or a Python file that hold code a
    breakpoint can stop at; empty when it does not compile."""
    try:
        # IPython's own transformation (what the kernel runs) keeps the line numbers.
        code = compile(TransformerManager().transform_cell(source), "<cell>", "exec")
    except (SyntaxError, ValueError):
        return set()
    found: set[int] = set()
    pending = [code]
    while pending:
        current = pending.pop()
        found.update(line for _, _, line in current.co_lines() if line)
        pending.extend(c for c in current.co_consts if hasattr(c, "co_lines"))
    return found


class KernelDapClient(DapClient):
    """DAP over a kernel's control channel (requests) and IOPub (events)."""

    def __init__(self, kernel: KernelSession, on_event: Callable[[Event], None],
                 log: logging.Logger) -> None:
        self._kernel = kernel
        self._inbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._kernel_stopped: str | None = None
        # Replies still awaited: cancelled at close, so the kernel session forgets them.
        self._unanswered: set[asyncio.Future[dict[str, Any]]] = set()
        kernel.debug_listener = self
        super().__init__(on_event, log)
        if kernel.dead:
            self.kernel_gone(kernel.death_reason or "it died")

    # -- DebugListener (the kernel session calls these) ------------------------------------

    def debug_event(self, content: dict[str, Any]) -> None:
        self._inbox.put_nowait(content)

    def kernel_gone(self, reason: str) -> None:
        if self._kernel_stopped is None:  # the first reason is the cause
            self._kernel_stopped = reason
            self._inbox.put_nowait(None)

    # -- transport -------------------------------------------------------------------------

    def _write(self, message: dict[str, Any]) -> None:
        if message.get("type") != "request":
            return  # ipykernel sends no reverse requests: nothing to answer
        reply = self._kernel.debug_request(message)
        self._unanswered.add(reply)
        reply.add_done_callback(self._unanswered.discard)
        reply.add_done_callback(lambda done: self._answered(message, done))

    def _answered(self, request: dict[str, Any], reply: asyncio.Future[dict[str, Any]]) -> None:
        if reply.cancelled() or reply.exception() is not None:
            return
        content = dict(reply.result().get("content") or {})
        if content.get("type") != "response":
            # ipykernel answers {} to a request it cannot serve (its debugger is not started).
            content = {"type": "response", "success": False, "command": request["command"],
                       "message": DEBUGGER_NOT_STARTED}
        # Matched by our own sequence number: ipykernel's own answers carry no seq of theirs.
        content.update(request_seq=request["seq"], seq=content.get("seq", 0))
        self._inbox.put_nowait(content)

    async def _read_message(self) -> dict[str, Any] | None:
        message = await self._inbox.get()
        if message is None:
            self.closed_reason = self._kernel_stopped
        return message

    def _close_transport(self) -> None:
        if self._kernel.debug_listener is self:
            self._kernel.debug_listener = None
        for reply in list(self._unanswered):
            reply.cancel()


class KernelDebugSession(DebugSession):
    """A debug session on a kernel: attach, breakpoints in cells and files, detach.

    `eval_cells` holds the code of the run's eval cells, so a stop in one of them can be named
    by its number even when no breakpoint was set there.
    """

    def __init__(self, kernel: KernelSession, label: str, limits: SessionLimits,
                 log: logging.Logger, on_gone: Callable[[DebugSession, str], None],
                 eval_cells: EvalCells) -> None:
        super().__init__(KERNEL_SPEC, limits, log, on_gone)
        self.kernel = kernel
        self.program = label
        self.eval_cells = eval_cells
        self.places: dict[str, Place] = {}
        self._tmp_prefix = ""
        self._locating: asyncio.Task[None] | None = None
        self._resumed_cell: asyncio.Future[Any] | None = None
        self._not_cells: set[str] = set()  # cell files of no eval cell (a human's cells)
        self._joined = False

    async def attach_kernel(self) -> None:
        """Check the kernel has a free debugger, then initialize and attach."""
        kernel = self.kernel
        info = await kernel.kernel_info(KERNEL_INFO_SECONDS) if kernel.language == "python" \
            else None
        if info is None or not (info.get("debugger")
                                or "debugger" in info.get("supported_features", [])):
            raise KernelHasNoDebugger(kernel.handle.kernel_name, kernel.language)
        self.client = KernelDapClient(kernel, self._on_event, self.log)
        self._watch = asyncio.create_task(self._watch_adapter())
        debug_info = await self._raw("debugInfo", {})
        if debug_info.get("isStarted"):
            raise DebuggerInUse(kernel.kernel_id)
        self._tmp_prefix = str(debug_info.get("tmpFilePrefix") or "")
        self._joined = True  # from `initialize` on, the kernel's debugger is ours to stop
        await self.begin("attach", {}, {})
        self.state = State.RUNNING

    async def dump_cell(self, code: str) -> str:
        """The file the kernel runs `code` under (written by the kernel)."""
        return str((await self._raw("dumpCell", {"code": code})).get("sourcePath") or "")

    async def _raw(self, command: str, arguments: dict[str, Any]) -> dict[str, Any]:
        response = await self._client().wait(self._client().send(command, _Args.of(arguments)),
                                             self.limits.request_timeout)
        return response.body or {}

    # -- where it stopped ------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        super()._on_event(event)
        if event.event == "stopped" and self.state is State.STOPPED:
            self._locating = asyncio.ensure_future(self._tell_kernel())
        elif event.event == "continued" and self.state is State.STOPPED:
            # Another client of the same debugger (JupyterLab's, joined later) resumed it.
            self._invalidate()
            self.state, self.stop = State.RUNNING, None
            self.kernel.debug_stop.clear()

    def _require_live(self, what: str) -> None:
        if self.state is State.EXITED:  # a kernel does not finish: its debugger was stopped
            raise DebuggerStopped(what)

    async def _tell_kernel(self) -> None:
        """Locate the stop, then mark the kernel paused there (the cell's caller answers)."""
        with contextlib.suppress(DebugError):
            await self.locate_stop()
        self.kernel.debug_stop_place = await self.stop_place()
        self.kernel.debug_stop.set()

    async def stop_place(self) -> dict[str, Any] | None:
        stop = self.stop
        if stop is None or stop.frame is None:
            return None
        place = await self.place_of(stop.frame)
        line = stop.frame.line
        if place is None:
            path = stop.frame.source.path if stop.frame.source else None
            return {"file": path, "line": line}
        return {**place.data(line), "source_line": place.line_text(line)}

    async def place_of(self, frame: StackFrame) -> Place | None:
        """The eval cell, notebook cell or file a frame is in (None: outside them all)."""
        path = frame.source.path if frame.source is not None else None
        if not path:
            return None
        if path not in self.places and path not in self._not_cells \
                and self._tmp_prefix and path.startswith(self._tmp_prefix):
            # A cell file: which eval cell has that code? (a breakpoint names its own) The
            # newest first, a bounded number: the kernel names the file, by a hash of the code.
            for _, (number, code) in zip(range(MAX_CELLS_SEARCHED), self.eval_cells.newest(),
                                         strict=False):
                with contextlib.suppress(DebugError):
                    if await self.dump_cell(code) == path:
                        self.places[path] = Place(code, cell=number)
                        break
            else:
                self._not_cells.add(path)
        return self.places.get(path)

    async def _watch_adapter(self) -> None:
        """The kernel stopped: calls waiting for a stop wake up, and the next call says so
        (the session is no process of ours: nothing to end in the background)."""
        assert self.client is not None
        why = await self.client.wait_closed()
        if self._ending is None:
            self.gone = why
            self._changed.set()

    async def resume(self, command: str, thread_id: int | None) -> None:
        self.kernel.debug_stop.clear()
        self.kernel.debug_stop_place = None
        # Taken now: the cell may end (and stop being held) before the answer to `command`.
        self._resumed_cell = self.kernel.held_cell
        try:
            await super().resume(command, thread_id)
        finally:
            self._resumed_cell = None

    async def wait_for_change(self) -> None:
        """Wait (bounded) for the next stop, or for the held cell to end."""
        held = self._resumed_cell
        if held is None:
            await super().wait_for_change()
            return
        changed = asyncio.ensure_future(self._changed.wait())
        try:
            await asyncio.wait({changed, held}, timeout=self.limits.stop_wait,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            changed.cancel()
        if self.gone is not None:
            raise KernelGone(self.gone)
        await self.locate_stop()

    async def _end(self) -> None:
        """Detach: disconnect (debugpy lets every thread run on) and leave the kernel."""
        client = self.client
        # Refused (another client's debugger): disconnecting would stop theirs.
        if client is not None and not client.closed and self._joined:
            with contextlib.suppress(DapError, AdapterGone, RequestTimeout, SessionFailed):
                await client.request("disconnect", _Args.of({"restart": False,
                                                              "terminateDebuggee": False}),
                                     _Args, min(self.limits.request_timeout, 5.0))
        self.kernel.debug_stop.clear()
        self.kernel.debug_stop_place = None
        if client is not None:
            await client.close()
        if self._watch is not None:
            self._watch.cancel()
        if self._locating is not None:
            self._locating.cancel()
        self.state = State.EXITED


class _Args(DapModel):
    """Arguments ipykernel reads as they are (debugInfo, dumpCell, disconnect)."""

    @classmethod
    def of(cls, fields: dict[str, Any]) -> _Args:
        return cls.model_validate(fields)

    def wire(self) -> dict[str, Any]:
        return dict(self.model_extra or {})
