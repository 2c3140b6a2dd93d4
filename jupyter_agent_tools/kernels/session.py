"""One live kernel of a run: its channels, the bridge end on the server, and cell execution.

A single reader task per channel routes every message: replies to the request that asked
(matched by the parent's msg_id), IOPub output to the cell that produced it (busy/idle are
matched to the execute request, not to the kernel, which may be serving other clients), and
bridge requests — stdin prompts with a reserved prefix, from either language — to `Run.call`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeVar

from jupyter_core.utils import ensure_async

from ..runtime.memory import memory_cause, oom_kills
from .bridge_socket import BridgeSocket
from .channels import KernelChannels
from .errors import KernelError, SetupFailed, UserKernelBusy
from .inkernel import source
from .outputs import CellOutput
from .protocol import (
    STDIN_PREFIX,
    BridgeReply,
    BridgeRequest,
    DebugListener,
    ToolCaller,
    no_caller_reply,
)

if TYPE_CHECKING:
    from ..runtime.run import Run

# How often a waiting cell checks that its kernel process is still alive.
_ALIVE_POLL_SECONDS = 0.5
# How long an interrupted cell gets to stop before its kernel counts as stuck.
_INTERRUPT_GRACE_SECONDS = 5.0
# How long closing a run waits for a user's kernel to take the bridge out.
_UNINSTALL_SECONDS = 5.0
_RESTARTED = "it was restarted"
_SETTLE_POLL_SECONDS = 0.05
T = TypeVar("T")


class CellEnd(str, Enum):
    """How an execution ended."""

    OK = "ok"
    ERROR = "error"  # the code raised; the interpreter is fine
    TIMEOUT = "timeout"  # no output for the idle budget; interrupted
    DIED = "died"  # the kernel process is gone (or stuck): its state is lost
    BUSY = "busy"  # a user's kernel ran another client's cell all along: this one never ran
    RESTARTED = "restarted"  # a user's kernel was restarted before the cell: it never ran
    # Sent in the instant a cell of another client began, and still waiting behind it: it
    # runs when that cell ends, unobserved (not interrupted: that would stop the other cell).
    QUEUED = "queued"
    # Stopped at a debugger's breakpoint: the cell runs on (held), its caller answers now.
    PAUSED = "paused"


@dataclass
class KernelHandle:
    """A started kernel: the manager that owns it, its id, and where it runs."""

    manager: Any  # a (Mapping|Async)MultiKernelManager, or a gateway's
    kernel_id: str
    kernel_name: str
    language: str
    where: str  # "host", "sandbox" or "gateway"
    # False for a user's kernel (a notebook's): the run uses it but never restarts or stops it.
    owned: bool = True
    notebook: str | None = None  # the notebook whose session it is, as the server names it


# Called with each IOPub message of a cell but its status (a notebook's live outputs).
OutputListener = Callable[[str, dict[str, Any]], None]


@dataclass
class _Cell:
    output: CellOutput
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    started: bool = False  # the kernel began running it (it may queue behind others' cells)
    last_activity: float = field(default_factory=time.monotonic)
    listener: OutputListener | None = None
    deadline: float | None = None  # a monotonic time after which the cell is interrupted


class KernelSession:
    """A kernel with the bridge installed, bound to at most one run at a time."""

    def __init__(self, handle: KernelHandle, channels: KernelChannels, *, bridge_timeout: float,
                 max_frame_bytes: int, log: logging.Logger) -> None:
        self.handle = handle
        self.channels = channels
        self.bridge_timeout = bridge_timeout
        self.max_frame_bytes = max_frame_bytes
        self.log = log
        # Answers the tool() calls of the run's cells; handed in with each cell.
        self.caller: ToolCaller | None = None
        self.dead = False
        self.death_reason = ""
        # The cgroup's OOM kills so far: one more by the time the kernel dies names the cause.
        self._oom_kills = oom_kills()
        self._replies: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._cells: dict[str, _Cell] = {}
        self._calls: set[asyncio.Task[None]] = set()
        # Abandoned cells still being interrupted: the next cell waits for them, since a
        # kernel aborts every request queued behind a cell that ends in an error.
        self._stopping: set[asyncio.Task[None]] = set()
        self._calls_in_flight = 0
        self._calls_touched = 0.0
        self._handlers = {"iopub": self._on_iopub, "stdin": self._on_stdin,
                          "shell": self._on_reply, "control": self._on_reply}
        self._restart_callbacks: list[tuple[Any, str]] = []
        # The session id a user's kernel process signs its messages with: a new one means the
        # user restarted it (same kernel id, same ports, a fresh interpreter without the bridge).
        self._kernel_process: str | None = None
        # The Python bridge's fast lane (bridge_socket.py), while the bridge is installed.
        self._socket: BridgeSocket | None = None
        # A debug client attached through the Jupyter debug protocol; set while it holds the
        # kernel paused at a breakpoint (a paused cell is not a quiet one: no timeout), with
        # where (`debug_stop_place`, the client's words).
        self.debug_listener: DebugListener | None = None
        self.debug_stop = asyncio.Event()
        self.debug_stop_place: dict[str, Any] | None = None
        # A cell that stopped at a breakpoint and runs on (a CellRun's task), its caller
        # answered already: the debugger's continue waits for it.
        self.held_cell: asyncio.Future[Any] | None = None

    @property
    def language(self) -> str:
        return self.handle.language

    @property
    def kernel_id(self) -> str:
        return self.handle.kernel_id

    @property
    def owned(self) -> bool:
        return self.handle.owned

    # -- start, bind, stop ----------------------------------------------------------------

    async def start(self, cwd: str, timeout: float, *, bridge: bool = True) -> None:
        """Open the channels once the kernel answers, and install the bridge in it (unless
        `bridge` is False: a notebook's cells run as the human's would, without tool())."""
        try:
            await self.channels.open(self._deliver, timeout)
        except BaseException:
            # Never connected: shutdown must not try to talk to it (nothing would carry it).
            self._mark_dead("it did not answer")
            raise
        kernel = self.handle.manager.get_kernel(self.kernel_id)
        if hasattr(kernel, "add_restart_callback"):  # a restarted kernel is a new interpreter
            self._restart_callbacks = [
                (lambda: self._mark_dead(_RESTARTED), "restart"),
                (lambda: self._mark_dead("it died"), "dead"),
            ]
            for callback, event in self._restart_callbacks:
                kernel.add_restart_callback(callback, event)
        if not bridge:
            return
        if self.language == "python":
            await self._install_python_bridge(cwd, timeout)
        else:
            await self._install_deno_bridge(cwd, timeout)

    async def _install_python_bridge(self, cwd: str, timeout: float) -> None:
        if self._socket is None:
            self._socket = BridgeSocket(self._answer_counted, self.log, self.max_frame_bytes)
            await self._socket.start()
        lane = (self._socket.path, self._socket.token, self.max_frame_bytes)
        boot = (
            "def _agent_tools_boot(src, *args):\n"
            "    import sys, types\n"
            # A user's kernel may still hold the bridge of an earlier run that left it busy.
            "    getattr(sys.modules.get('agent_tools'), 'uninstall', lambda: None)()\n"
            "    module = types.ModuleType('agent_tools')\n"
            "    sys.modules['agent_tools'] = module\n"
            "    exec(compile(src, '<agent-tools bridge>', 'exec'), module.__dict__)\n"
            "    module.install(*args)\n"
            f"_agent_tools_boot({source('python_bridge.py')!r}, {STDIN_PREFIX!r}, "
            f"{self.bridge_timeout + 5!r}, {cwd!r}, {lane!r})\n"
            "del _agent_tools_boot\n"
        )
        await self.run_internal(boot, timeout)

    async def _install_deno_bridge(self, cwd: str, timeout: float) -> None:
        code = (source("deno_bridge.js")
                .replace("__PREFIX__", json.dumps(STDIN_PREFIX))
                .replace("__CWD__", json.dumps(cwd)))
        await self.run_internal(code, timeout)

    async def bind(self, run: Run, timeout: float) -> None:
        """Work for `run` from now on: move to its working directory (where the kernel sees
        it: a gateway's kernel may not share this disk)."""
        cwd = json.dumps(str(run.cwd))
        if self.language == "python":
            await self.run_internal(f"import os as _os\n_os.path.isdir({cwd}) and _os.chdir({cwd})\n"
                                    "del _os", timeout)
        else:
            await self.run_internal(f"try {{ Deno.chdir({cwd}); }} catch (_) {{}}", timeout)

    async def shutdown(self) -> None:
        """Stop the readers and the kernel (a user's kernel: only leave it); bounded, and
        never raises."""
        polite = not self.dead  # a dead or stuck kernel would not answer a shutdown request
        if self.debug_listener is not None:
            self.debug_listener.kernel_gone("the run stopped using it")
        if not self.owned and polite:
            await self._uninstall_bridge()
        self.dead = True
        self.caller = None
        for task in self._calls:
            task.cancel()
        await asyncio.gather(*self._calls, return_exceptions=True)
        if self._socket is not None:
            await self._socket.close()
        try:
            await self.channels.close()
        except Exception:
            self.log.debug("stopping the channels of kernel %s failed", self.kernel_id, exc_info=True)
        manager = self.handle.manager
        if not self.owned:
            with contextlib.suppress(Exception):  # the kernel may be gone already
                kernel = manager.get_kernel(self.kernel_id)
                for callback, event in self._restart_callbacks:
                    kernel.remove_restart_callback(callback, event)
            return
        try:
            await asyncio.wait_for(
                ensure_async(manager.shutdown_kernel(self.kernel_id, now=not polite)), 10
            )
        except Exception:  # noqa: BLE001 - any failure of the polite way: the forceful one
            try:
                await ensure_async(manager.shutdown_kernel(self.kernel_id, now=True))
            except Exception:  # already gone
                self.log.debug("kernel %s was already gone", self.kernel_id, exc_info=True)

    async def _uninstall_bridge(self) -> None:
        """Take the bridge's names and hooks out of a user's kernel, if it is free soon."""
        try:
            await self.run_internal("import agent_tools\nagent_tools.uninstall()\ndel agent_tools",
                                    _UNINSTALL_SECONDS)
        except KernelError:  # busy with the user's cell: the bridge stays, inert without us
            self.log.info("kernel %s: left the bridge installed (the kernel was busy)",
                          self.kernel_id)

    def _mark_dead(self, reason: str) -> None:
        if not self.dead:
            self.dead = True
            self.death_reason = reason + memory_cause(self._oom_kills)
            for cell in self._cells.values():
                cell.idle.set()
            self.debug_stop.clear()  # nothing is paused in a dead kernel
            if self.debug_listener is not None:
                self.debug_listener.kernel_gone(reason)

    async def is_alive(self) -> bool:
        if self.dead:
            return False
        try:
            alive = await ensure_async(self.handle.manager.get_kernel(self.kernel_id).is_alive())
        except KeyError:  # the manager no longer knows it (shut down from JupyterLab)
            alive = False
        if not alive:
            self._mark_dead("its process exited")
        return bool(alive)

    async def alive_once_settled(self, wait: float) -> bool:
        """Whether the kernel lives once a shutdown or restart under way has ended (waiting at
        most `wait` seconds). jupyter_client interrupts the running cell before it shuts a
        kernel down (JupyterLab's "Shut Down Kernel"), so the cell's KeyboardInterrupt can
        come while the process still runs: the cell's story is then the shutdown."""
        deadline = time.monotonic() + wait
        while not self.dead and time.monotonic() < deadline:
            try:
                kernel = self.handle.manager.get_kernel(self.kernel_id)
            except KeyError:
                break
            if not getattr(kernel, "shutting_down", False):  # a gateway's kernel has no flag
                break
            await asyncio.sleep(_SETTLE_POLL_SECONDS)
        return await self.is_alive()

    # -- execution ------------------------------------------------------------------------

    async def execute(self, code: str, output: CellOutput, idle_timeout: float,
                      *, silent: bool = False, listener: OutputListener | None = None,
                      time_limit: float | None = None, history: bool | None = None) -> CellEnd:
        """Run `code`, gathering output until the kernel is idle again, died or went quiet.

        A user's kernel may be running a cell of the notebook's: the cell is sent once the
        kernel's shell is free, waiting at most `idle_timeout` (then BUSY: it never ran).
        `listener` sees each output message as it comes; past `time_limit` seconds (waiting
        for the shell included) the cell is interrupted (TIMEOUT). `history`: whether the
        cell counts in the kernel's history (In[n]); by default only in the run's own kernels.
        """
        if self._stopping:
            await asyncio.wait(set(self._stopping))
        if self.dead:
            return CellEnd.DIED
        deadline = None if time_limit is None else time.monotonic() + time_limit
        if not self.owned:
            wait = idle_timeout if time_limit is None else min(idle_timeout, time_limit)
            free = await self._shell_free(wait)
            if self.dead:
                return CellEnd.RESTARTED if self.death_reason == _RESTARTED else CellEnd.DIED
            if not free:
                return CellEnd.BUSY
        content = {
            # The agent's cells do not count in a user's history (In[n], Out, _).
            "code": code, "silent": silent,
            "store_history": not silent and (self.owned if history is None else history),
            "user_expressions": {}, "stop_on_error": True,
            # Deno's prompt() needs stdin allowed. Python's bridge sends its own requests, and
            # with stdin off IPython's input() fails at once and never reads the bridge's socket.
            "allow_stdin": self.language != "python",
        }
        msg = self.channels.session.msg("execute_request", content)
        msg_id = msg["header"]["msg_id"]
        cell = self._cells[msg_id] = _Cell(output, listener=listener, deadline=deadline)
        reply = self._expect_reply(msg_id)
        self.channels.send("shell", msg)
        abandoned = False
        try:
            end = await self._wait(cell, reply, idle_timeout)
            if end is CellEnd.OK and self.language != "python":
                await self._iopub_barrier()
            if end is CellEnd.TIMEOUT and not cell.started:
                end = CellEnd.QUEUED
            elif end is CellEnd.TIMEOUT:
                await self._interrupt(cell, reply)
            elif end is CellEnd.OK and reply.result()["content"].get("status") != "ok":
                end = CellEnd.ERROR
                output.add_reply_error(reply.result()["content"])
            return end
        except asyncio.CancelledError:
            # The caller gave up (a bridge timeout): stop the cell, or the next one queues.
            abandoned = True
            task = asyncio.ensure_future(self._stop_abandoned(msg_id, cell, reply))
            self._calls.add(task)
            self._stopping.add(task)
            task.add_done_callback(self._calls.discard)
            task.add_done_callback(self._stopping.discard)
            raise
        finally:
            if not abandoned:
                self._forget(msg_id)

    def _forget(self, msg_id: str) -> None:
        self._cells.pop(msg_id, None)
        self._replies.pop(msg_id, None)

    async def _stop_abandoned(self, msg_id: str, cell: _Cell, reply: asyncio.Future) -> None:
        try:
            await self._interrupt(cell, reply)
        finally:
            self._forget(msg_id)

    async def _wait(self, cell: _Cell, reply: asyncio.Future, idle_timeout: float) -> CellEnd:
        idle = asyncio.ensure_future(cell.idle.wait())
        checked = time.monotonic()
        try:
            while not (idle.done() and reply.done()):
                done, _ = await asyncio.wait([f for f in (idle, reply) if not f.done()],
                                             timeout=_ALIVE_POLL_SECONDS,
                                             return_when=asyncio.FIRST_COMPLETED)
                if self.dead or not (done or await self.is_alive()):
                    return CellEnd.DIED
                now = time.monotonic()
                if self.debug_stop.is_set():  # both clocks stand still at a breakpoint
                    self._calls_touched = now
                    if cell.deadline is not None:
                        cell.deadline += now - checked
                checked = now
                if cell.deadline is not None and now > cell.deadline:
                    return CellEnd.TIMEOUT
                if done or self._calls_in_flight or self.debug_stop.is_set():
                    continue  # the clock stands still during tool() and at a breakpoint
                quiet_since = max(cell.last_activity, self._calls_touched)
                if time.monotonic() - quiet_since > idle_timeout:
                    return CellEnd.TIMEOUT
            return CellEnd.DIED if self.dead else CellEnd.OK
        finally:
            idle.cancel()

    async def _shell_free(self, timeout: float) -> bool:
        """Wait until the kernel's shell serves us: a kernel_info request queues behind a
        running cell of any client, so its reply means the shell is free now."""
        msg = self.channels.session.msg("kernel_info_request", {})
        msg_id = msg["header"]["msg_id"]
        reply = self._expect_reply(msg_id)
        self.channels.send("shell", msg)
        deadline = time.monotonic() + timeout
        try:
            while not reply.done():
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not await self.is_alive():
                    return False
                await asyncio.wait([reply], timeout=min(remaining, _ALIVE_POLL_SECONDS))
            return True
        finally:
            self._replies.pop(msg_id, None)

    async def kernel_info(self, timeout: float) -> dict[str, Any] | None:
        """The kernel's kernel_info_reply content, asked on the control channel (answered
        even while a cell runs or is paused); None when it does not answer in time."""
        msg = self.channels.session.msg("kernel_info_request", {})
        msg_id = msg["header"]["msg_id"]
        reply = self._expect_reply(msg_id)
        self.channels.send("control", msg)
        try:
            return dict((await asyncio.wait_for(reply, timeout))["content"])
        except asyncio.TimeoutError:
            return None
        finally:
            self._replies.pop(msg_id, None)

    async def watched(self, work: Awaitable[T]) -> T | None:
        """Run `work` (a cell's run), watching this kernel's debugger: its result when it
        ends, or None at once when the debugger stops the kernel first; the work then runs on
        as `held_cell`, for the debugger's continue to wait for."""
        task = asyncio.ensure_future(work)
        if self.debug_listener is None:
            return await task
        stopped = asyncio.ensure_future(self.debug_stop.wait())
        try:
            await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            stopped.cancel()
        if task.done():
            return task.result()
        self.held_cell = task
        task.add_done_callback(self._release_held)
        return None

    def _release_held(self, task: asyncio.Future[Any]) -> None:
        if self.held_cell is task:
            self.held_cell = None
        if not task.cancelled():
            task.exception()  # retrieved: a cell nobody waits for any more must not warn

    def debug_request(self, content: dict[str, Any]) -> asyncio.Future[dict[str, Any]]:
        """Send one DAP request as a `debug_request` on the control channel; the future
        resolves with the `debug_reply`'s content (one DAP response)."""
        msg = self.channels.session.msg("debug_request", content)
        msg_id = msg["header"]["msg_id"]
        reply = self._expect_reply(msg_id)
        reply.add_done_callback(lambda _: self._replies.pop(msg_id, None))
        self.channels.send("control", msg)
        return reply

    async def _iopub_barrier(self) -> None:
        """Wait until IOPub output the kernel sent so far has arrived.

        Deno publishes a cell's execute_result after its idle status; a kernel_info request
        is answered in order, so its own idle status comes after that result.
        """
        msg = self.channels.session.msg("kernel_info_request", {})
        msg_id = msg["header"]["msg_id"]
        barrier = self._cells[msg_id] = _Cell(CellOutput())
        self._expect_reply(msg_id)
        self.channels.send("shell", msg)
        try:
            await asyncio.wait_for(barrier.idle.wait(), _INTERRUPT_GRACE_SECONDS)
        except asyncio.TimeoutError:
            self.log.debug("kernel %s: no IOPub barrier status", self.kernel_id)
        finally:
            self._forget(msg_id)

    async def _interrupt(self, cell: _Cell, reply: asyncio.Future) -> None:
        try:
            await ensure_async(self.handle.manager.interrupt_kernel(self.kernel_id))
            await asyncio.wait_for(asyncio.gather(cell.idle.wait(), reply),
                                   _INTERRUPT_GRACE_SECONDS)
        except Exception:  # noqa: BLE001 - it did not stop: a stuck interpreter is as good as dead
            self._mark_dead("it did not stop when interrupted")

    async def run_internal(self, code: str, timeout: float) -> None:
        """Run set-up code silently; UserKernelBusy or SetupFailed when it does not run."""
        output = CellOutput()
        end = await self.execute(code, output, timeout, silent=True)
        if end is CellEnd.BUSY:
            raise UserKernelBusy(self.kernel_id, timeout)
        if end is not CellEnd.OK:
            text, _, _ = output.render()
            raise SetupFailed(self.language, end.value, text[-500:])

    # -- channels -------------------------------------------------------------------------

    def _deliver(self, channel: str, msg: dict[str, Any]) -> None:
        if not self.owned:
            process = msg.get("header", {}).get("session")
            if self._kernel_process is None:
                self._kernel_process = process
            elif process != self._kernel_process:
                self._mark_dead(_RESTARTED)
        try:
            self._handlers[channel](msg)
        except Exception:
            self.log.exception("kernel %s: handling %s failed", self.kernel_id, msg.get("msg_type"))

    def _answer_input(self, value: str) -> None:
        self.channels.send("stdin", self.channels.session.msg("input_reply", {"value": value}))

    def _expect_reply(self, msg_id: str) -> asyncio.Future[dict[str, Any]]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._replies[msg_id] = future
        return future

    def _on_reply(self, msg: dict[str, Any]) -> None:
        future = self._replies.get(msg["parent_header"].get("msg_id", ""))
        if future is not None and not future.done():
            future.set_result(msg)

    def _on_iopub(self, msg: dict[str, Any]) -> None:
        msg_type = msg["msg_type"]
        content = msg["content"]
        if msg_type == "debug_event":  # the kernel's debugger: to every client, ours included
            if self.debug_listener is not None:
                self.debug_listener.debug_event(content)
            return
        cell = self._cells.get(msg["parent_header"].get("msg_id", ""))
        if cell is None:
            return
        if msg_type == "status":
            if content.get("execution_state") == "idle":
                cell.idle.set()
            else:
                cell.started = True
            return
        if cell.listener is not None:
            cell.listener(msg_type, content)
        if msg_type == "execute_input":
            return
        cell.last_activity = time.monotonic()
        cell.output.add(msg_type, content)

    def _on_stdin(self, msg: dict[str, Any]) -> None:
        if msg["msg_type"] != "input_request":
            return
        prompt = msg["content"].get("prompt", "")
        if not prompt.startswith(STDIN_PREFIX):
            self._answer_input("")  # the kernel waits for an answer: never leave it hanging
            return
        try:
            request = json.loads(prompt[len(STDIN_PREFIX):])
        except json.JSONDecodeError:
            request = {}
        self._calls_in_flight += 1
        task = asyncio.ensure_future(self._call(request))
        self._calls.add(task)
        task.add_done_callback(self._calls.discard)

    # -- the bridge -----------------------------------------------------------------------

    async def _call(self, request: BridgeRequest | dict[str, Any]) -> None:
        reply = await self._answer(request)
        reply["id"] = request.get("id")
        if not self.dead:
            self._answer_input(json.dumps(reply, default=str))

    async def _answer_counted(self, request: dict[str, Any]) -> BridgeReply:
        """A call of the fast lane (counted in flight as `_on_stdin` counts one of stdin)."""
        self._calls_in_flight += 1
        return await self._answer(request)

    async def _answer(self, request: BridgeRequest | dict[str, Any]) -> BridgeReply:
        name = str(request.get("name"))
        caller = self.caller
        # The bridge's timeout cancels this task itself: wait_for would add a task and a
        # loop turn to every call.
        task = asyncio.current_task()
        expired = False

        def expire() -> None:
            nonlocal expired
            expired = True
            if task is not None:
                task.cancel()

        timer = asyncio.get_running_loop().call_later(self.bridge_timeout, expire)
        try:
            reply = (no_caller_reply() if caller is None
                     else await caller.call(name, request.get("args")))
        except asyncio.CancelledError:
            if not expired or caller is None:
                raise
            reply = caller.timed_out(name, self.bridge_timeout)
        except Exception as exc:
            self.log.exception("kernel %s: bridge call failed", self.kernel_id)
            reply = no_caller_reply() if caller is None else caller.failed(name, exc)
        finally:
            timer.cancel()
            self._calls_in_flight -= 1
            self._calls_touched = time.monotonic()
        return reply
