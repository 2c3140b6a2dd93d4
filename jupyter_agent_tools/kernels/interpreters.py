"""A run's interpreters: one kernel per language, started on first use, replaced when lost.

A run created with a user's kernel (`kernel_id` / `notebook`) runs Python there instead: it
connects on first use and reconnects after the user restarts it, but never replaces it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .errors import CellPaused, ResetRefused
from .javascript_syntax import SyntaxProblem, find_syntax_error
from .outputs import CellOutput
from .protocol import ToolCaller
from .session import CellEnd, KernelSession, OutputListener

if TYPE_CHECKING:
    from pathlib import Path

    from ..runtime.run import Run
    from .user_kernels import UserKernel


@dataclass(frozen=True)
class InterpreterLimits:
    """The bounds a run's cells run within (the factory's and runtime's config)."""

    max_output_chars: int
    max_images: int
    idle_timeout_seconds: float
    syntax_check_timeout_seconds: float
    max_eval_cells_kept: int = 1000


class KernelSource(Protocol):
    """Where a run's interpreters come from and go back to (the KernelFactory)."""

    async def acquire(self, language: str, run: Run) -> KernelSession: ...

    async def borrow(self, user_kernel: UserKernel) -> KernelSession: ...

    async def stop(self, session: KernelSession) -> None: ...

    async def notebook_kernel(self, api_path: str, kernel_name: str | None,
                              cwd: Path) -> KernelSession: ...

    async def restart(self, session: KernelSession) -> None: ...


@dataclass
class CellRun:
    """What one cell did, as facts: how it ended, what it printed, and what state is left.

    `end` is DIED when its kernel stopped under it (or is stuck after an interrupt); for a
    user's kernel stuck after an interrupt it stays TIMEOUT with `gone` set.
    """

    language: str
    end: CellEnd
    text: str
    blocks: list[dict[str, Any]]
    data: dict[str, Any]
    reset: bool
    # Why the previous interpreter was lost before this cell ran (None: it was not).
    lost_reason: str | None
    # The kernel stopped (died, or stuck after an interrupt) under this cell.
    gone: bool = False
    death_reason: str = ""
    # "kernel <id> of <notebook>" when the cell ran in the user's kernel.
    user_kernel: str | None = None
    # A JavaScript cell Deno rejected with only "Execution failed": its syntax error, if any.
    bare_failure: bool = False
    syntax_error: SyntaxProblem | None = field(default=None)


class EvalCells:
    """The code of a run's Python eval cells, numbered from 1 (results' `data.cell`), as a
    debugger names them; only the newest `keep` are kept (older numbers stay taken)."""

    def __init__(self, keep: int) -> None:
        self._kept: deque[str] = deque(maxlen=max(1, keep))
        self.count = 0

    def add(self, code: str) -> int:
        self._kept.append(code)
        self.count += 1
        return self.count

    def code(self, number: int) -> str | None:
        """Cell `number`'s code; None when there is no such cell, or it is no longer kept."""
        first = self.count - len(self._kept) + 1
        return self._kept[number - first] if first <= number <= self.count else None

    def newest(self) -> Iterator[tuple[int, str]]:
        for age, code in enumerate(reversed(self._kept)):
            yield self.count - age, code


class RunInterpreters:
    """The per-run handle of the kernels resource (what `eval` finds in `run.resources`)."""

    def __init__(self, kernels: KernelSource, limits: InterpreterLimits, run: Run,
                 user_kernel: UserKernel | None = None) -> None:
        self.kernels = kernels
        self.limits = limits
        self.run = run
        self.user_kernel = user_kernel  # Python cells run there, borrowed
        self.sessions: dict[str, KernelSession] = {}
        # Languages whose interpreter was lost since the agent last used it, and why.
        self.lost: dict[str, str] = {}
        # Languages whose interpreter is running a cell right now.
        self.running: set[str] = set()
        # The kernels of notebooks whose cells this run ran, by API path.
        self.notebooks: dict[str, KernelSession] = {}
        self.eval_cells = EvalCells(limits.max_eval_cells_kept)

    def borrows(self, language: str) -> bool:
        """Whether `language` runs in the user's kernel (which a run never resets)."""
        return self.user_kernel is not None and language == "python"

    def refuse_reset(self, language: str) -> None:
        if self.borrows(language):
            raise ResetRefused(self.user_kernel_name())

    def user_kernel_name(self) -> str:
        """"kernel <id>" and its notebook, as the user knows the kernel this run borrows."""
        assert self.user_kernel is not None
        notebook = self.user_kernel.notebook
        return f"kernel {self.user_kernel.kernel_id}" + (f" of {notebook}" if notebook else "")

    async def python_session(self) -> KernelSession:
        """The run's Python interpreter (the user's kernel it borrows), started if needed."""
        session, _ = await self._interpreter("python", reset=False)
        return session

    async def execute(self, language: str, code: str, *, reset: bool = False,
                      caller: ToolCaller | None = None,
                      listener: OutputListener | None = None) -> CellRun:
        """Run a cell in the run's interpreter for `language`; `caller` answers its tool()
        calls, `listener` sees each output message as it comes. A cell that fails, times out
        or loses its kernel is a CellRun too; a KernelError when no interpreter can run it.

        With a debugger attached to the interpreter, a cell that stops at a breakpoint is
        answered at once (PAUSED, `data.stopped`) and runs on as the kernel's `held_cell`."""
        session = self.sessions.get(language)
        if session is not None and session.debug_stop.is_set():
            raise CellPaused(session.kernel_id, session.debug_stop_place)
        if language != "python":
            return await self._execute(language, code, reset=reset, caller=caller,
                                       listener=listener)
        number = self.eval_cells.add(code)
        if session is None or session.debug_listener is None or reset:
            cell = await self._execute(language, code, reset=reset, caller=caller,
                                       listener=listener)
            cell.data["cell"] = number
            return cell
        return await self._execute_debugged(session, code, caller, number, listener)

    async def _execute_debugged(self, session: KernelSession, code: str,
                                caller: ToolCaller | None, number: int,
                                listener: OutputListener | None) -> CellRun:
        async def numbered() -> CellRun:
            cell = await self._execute("python", code, reset=False, caller=caller,
                                       listener=listener)
            cell.data["cell"] = number
            return cell

        cell = await session.watched(numbered())
        if cell is not None:
            return cell
        data = {"status": CellEnd.PAUSED.value, "language": "python",
                "kernel_id": session.kernel_id, "where": session.handle.where,
                "user_kernel": not session.owned, "state_lost": False,
                "stopped": session.debug_stop_place}
        return CellRun("python", CellEnd.PAUSED, "", [], data, False, None,
                       user_kernel=None if session.owned else self.user_kernel_name())

    async def _execute(self, language: str, code: str, *, reset: bool,
                       caller: ToolCaller | None,
                       listener: OutputListener | None = None) -> CellRun:
        if reset:
            self.refuse_reset(language)
        session, lost_reason = await self._interpreter(language, reset)
        session.caller = caller
        output = CellOutput(max_chars=self.limits.max_output_chars,
                            max_images=self.limits.max_images)
        idle_timeout = self.limits.idle_timeout_seconds
        self.running.add(language)
        try:
            end = await session.execute(code, output, idle_timeout, listener=listener)
            if end is CellEnd.RESTARTED:  # the user restarted their kernel: reconnect, then run
                session, lost_reason = await self._interpreter(language, reset=False)
                session.caller = caller
                end = await session.execute(code, output, idle_timeout, listener=listener)
        finally:
            self.running.discard(language)
        # Its kernel stopped under the cell (killed, shut down, or stuck after an interrupt).
        gone = end is CellEnd.DIED or (
            end is not CellEnd.OK and not await session.alive_once_settled(idle_timeout))
        if gone and end is CellEnd.ERROR:
            end = CellEnd.DIED
        syntax_error = None
        bare_failure = (end is CellEnd.ERROR and language == "javascript"
                        and not output.has_traceback)
        if bare_failure:
            syntax_error = await self._find_syntax_error(code, output)
        text, blocks, data = output.render()
        # One story in status, flags and text: state is lost when this cell ran in a fresh
        # interpreter it did not ask for, or when its own kernel stopped under it.
        data.update(status=end.value, language=language, kernel_id=session.kernel_id,
                    where=session.handle.where, user_kernel=not session.owned,
                    state_lost=lost_reason is not None or gone)
        if session.handle.notebook is not None:
            data["notebook"] = session.handle.notebook
        cell = CellRun(language, end, text, blocks, data, reset, lost_reason, gone,
                       user_kernel=None if session.owned else self.user_kernel_name(),
                       bare_failure=bare_failure, syntax_error=syntax_error)
        if end in (CellEnd.OK, CellEnd.ERROR, CellEnd.QUEUED, CellEnd.BUSY) or (
                end is CellEnd.TIMEOUT and not gone):
            return cell
        # The kernel is gone (or stuck): forget it, so the next cell gets a fresh one.
        cell.end = CellEnd.TIMEOUT if end is CellEnd.TIMEOUT else CellEnd.DIED
        cell.death_reason = session.death_reason or "it died"
        self.lost[language] = cell.death_reason
        await self.discard(language)
        if not session.owned and end is CellEnd.TIMEOUT:
            self.lost.pop(language)  # stuck, not restarted: the user's state is still there
            data["state_lost"] = False
        return cell

    async def _interpreter(self, language: str, reset: bool) -> tuple[KernelSession, str | None]:
        """The session to run in, and why the previous one was lost (None: it was not)."""
        session = self.sessions.get(language)
        # A kernel that died between calls is replaced before the cell runs, not after.
        if session is not None and (reset or not await session.is_alive()):
            if session.dead:
                self.lost.setdefault(language, session.death_reason or "it died")
            await self.discard(language)
            session = None
        if session is not None:
            return session, None
        if self.borrows(language):
            assert self.user_kernel is not None
            session = await self.kernels.borrow(self.user_kernel)
        else:
            session = await self.kernels.acquire(language, self.run)
        self.sessions[language] = session
        reason = self.lost.pop(language, None)
        return session, None if reset else reason

    async def _find_syntax_error(self, code: str, output: CellOutput) -> SyntaxProblem | None:
        """Deno's kernel rejected the cell with only "Execution failed": find out why, and
        show the syntax error as the cell's traceback."""
        problem = await find_syntax_error(code, self.limits.syntax_check_timeout_seconds)
        if problem is not None:
            output.add_error(problem.report(), {"ename": "SyntaxError", "evalue": problem.message,
                                                "line": problem.line, "column": problem.column})
        return problem

    async def notebook_session(self, api_path: str, kernel_name: str | None,
                               cwd: Path) -> KernelSession:
        """The session on the kernel where the notebook `api_path`'s cells run (see
        `KernelFactory.notebook_kernel`), kept for the run's next calls while it lives."""
        session = self.notebooks.get(api_path)
        if session is not None and not await session.is_alive():
            await self.kernels.stop(self.notebooks.pop(api_path))
            session = None
        if session is None:
            session = await self.kernels.notebook_kernel(api_path, kernel_name, cwd)
            self.notebooks[api_path] = session
        return session

    async def restart_notebook(self, api_path: str, kernel_name: str | None,
                               cwd: Path) -> KernelSession:
        """Restart the notebook's kernel (its variables are gone); the fresh session."""
        session = await self.notebook_session(api_path, kernel_name, cwd)
        self.notebooks.pop(api_path, None)
        await self.kernels.restart(session)
        return await self.notebook_session(api_path, kernel_name, cwd)

    async def discard(self, language: str) -> None:
        """Shut down the interpreter of `language` (the next eval starts a fresh one); a
        user's kernel is only left, still running."""
        session = self.sessions.pop(language, None)
        if session is not None:
            await self.kernels.stop(session)

    async def close(self) -> None:
        """Shut down every interpreter of the run (leave the user's kernel running)."""
        for language in list(self.sessions):
            await self.discard(language)
        for api_path in list(self.notebooks):
            await self.kernels.stop(self.notebooks.pop(api_path))
