"""A run's interpreters: one kernel per language, started on first use, replaced when lost.

A run created with a user's kernel (`kernel_id` / `notebook`) runs Python there instead: it
connects on first use and reconnects after the user restarts it, but never replaces it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..runtime import ErrorCode, ToolError, ToolResult
from .javascript_syntax import find_syntax_error
from .outputs import CellOutput
from .session import CellEnd, KernelSession

if TYPE_CHECKING:
    from ..runtime import Run
    from .factory import KernelFactory
    from .user_kernels import UserKernel


class RunInterpreters:
    """The per-run handle of the kernels resource (what `eval` finds in `run.resources`)."""

    def __init__(self, factory: KernelFactory, run: Run,
                 user_kernel: UserKernel | None = None) -> None:
        self.factory = factory
        self.run = run
        self.user_kernel = user_kernel  # Python cells run there, borrowed
        self.sessions: dict[str, KernelSession] = {}
        # Languages whose interpreter was lost since the agent last used it, and why.
        self.lost: dict[str, str] = {}
        # Languages whose interpreter is running a cell right now.
        self.running: set[str] = set()

    def borrows(self, language: str) -> bool:
        """Whether `language` runs in the user's kernel (which a run never resets)."""
        return self.user_kernel is not None and language == "python"

    def refuse_reset(self, language: str) -> None:
        if self.borrows(language):
            assert self.user_kernel is not None
            raise ToolError(
                ErrorCode.INVALID_ARGUMENTS,
                f"reset is refused: this run's Python cells run in the user's own kernel "
                f"({self._user_kernel_name()}), and restarting it would wipe the user's "
                "variables. Delete what you defined with `del name` instead, or ask the user "
                "to restart the kernel.",
            )

    def _user_kernel_name(self) -> str:
        assert self.user_kernel is not None
        notebook = self.user_kernel.notebook
        return f"kernel {self.user_kernel.kernel_id}" + (f" of {notebook}" if notebook else "")

    async def execute(self, language: str, code: str, *, reset: bool = False) -> ToolResult:
        """Run a cell in the run's interpreter for `language`; fail with a ToolError."""
        if reset:
            self.refuse_reset(language)
        session, lost_reason = await self._interpreter(language, reset)
        output = CellOutput(max_chars=self.run.runtime.max_output_chars,
                            max_images=self.factory.max_images)
        self.running.add(language)
        try:
            end = await session.execute(code, output, self.factory.idle_timeout_seconds)
            if end is CellEnd.RESTARTED:  # the user restarted their kernel: reconnect, then run
                session, lost_reason = await self._interpreter(language, reset=False)
                end = await session.execute(code, output, self.factory.idle_timeout_seconds)
        finally:
            self.running.discard(language)
        notes: list[str] = []
        if reset and lost_reason is None:
            notes.append(f"[reset: this is a fresh {language} interpreter]")
        elif lost_reason is not None and not session.owned:
            notes.append(f"[state lost: the user's {self._user_kernel_name()} restarted "
                         f"since the last eval ({lost_reason}); what earlier cells defined, the "
                         "user's variables included, is gone]")
        elif lost_reason is not None:
            notes.append(f"[state lost: the previous {language} kernel stopped ({lost_reason}); "
                         "this is a fresh interpreter, so re-run the imports and definitions "
                         "you need]")
        # Its kernel stopped under the cell (killed, shut down, or stuck after an interrupt).
        gone = end is CellEnd.DIED or (end is not CellEnd.OK and not await session.is_alive())
        if gone and end is CellEnd.ERROR:
            end = CellEnd.DIED
        why = ""
        if end is CellEnd.ERROR and language == "javascript" and not output.has_traceback:
            why = await self._explain_bare_failure(code, output)
        text, blocks, data = output.render()
        if notes:
            text = "\n".join([*notes, text]) if text else "\n".join(notes)
            blocks = [{"type": "text", "text": note} for note in notes] + blocks
        # One story in status, flags and text: state is lost when this cell ran in a fresh
        # interpreter it did not ask for, or when its own kernel stopped under it.
        data.update(status=end.value, language=language, kernel_id=session.kernel_id,
                    where=session.handle.where, user_kernel=not session.owned,
                    state_lost=lost_reason is not None or gone)
        if session.handle.notebook is not None:
            data["notebook"] = session.handle.notebook
        if end is CellEnd.OK:
            return ToolResult.success(text or "(no output)", data, blocks)
        state = ("This ran in a fresh interpreter: what earlier cells defined is gone."
                 if lost_reason is not None else
                 "This ran in a fresh interpreter, as reset asked." if reset else
                 "The interpreter's state is kept.")
        if end is CellEnd.ERROR:
            error = data.get("error") or {}
            raise ToolError(
                ErrorCode.FAILED,
                (why or f"The cell raised {error.get('ename', 'an error')}; read the traceback, "
                 "fix the code and run it again.") + f" {state}",
                text=text, data=data, blocks=blocks,
            )
        if end is CellEnd.QUEUED:
            raise ToolError(
                ErrorCode.TIMEOUT,
                f"The user started a cell in the same instant, and this one is still queued "
                f"behind it after {self.factory.idle_timeout_seconds:g}s: it will run when the "
                "user's cell ends, and its output will not reach you. Check its effects with "
                "a later eval.",
                data=data,
            )
        if end is CellEnd.BUSY:
            raise ToolError(
                ErrorCode.TIMEOUT,
                f"The user's {self._user_kernel_name()} was busy running another cell (the "
                f"user's) for {self.factory.idle_timeout_seconds:g}s, so this cell did not run. "
                "Call eval again later, or ask the user to let that cell finish or interrupt it.",
                data=data,
            )
        if end is CellEnd.TIMEOUT and not gone:
            raise ToolError(
                ErrorCode.TIMEOUT,
                f"The cell produced no output for {self.factory.idle_timeout_seconds:g}s and was "
                "interrupted; what it produced is above. Print progress, make it faster, or split "
                f"the work into smaller cells. {state}",
                text=text, data=data, blocks=blocks,
            )
        reason = session.death_reason or "it died"
        self.lost[language] = reason
        await self.discard(language)
        if not session.owned and end is CellEnd.TIMEOUT:
            self.lost.pop(language)  # stuck, not restarted: the user's state is still there
            data["state_lost"] = False
            raise ToolError(
                ErrorCode.TIMEOUT,
                f"The cell produced no output for {self.factory.idle_timeout_seconds:g}s and did "
                "not stop when interrupted; what it produced is above. The user's kernel is "
                "still running it: a run never restarts the user's kernel, so ask the user to "
                "interrupt or restart it. Until then eval waits behind it.",
                text=text or None, data=data, blocks=blocks,
            )
        if not session.owned:
            raise ToolError(
                ErrorCode.KERNEL_DIED,
                f"The user's {self._user_kernel_name()} stopped while running the cell "
                f"({reason}); what it produced is above. A run never starts a replacement: "
                "once the server has restarted it, the next eval reconnects (its variables are "
                "gone); otherwise ask the user to restart it.",
                text=text or None, data=data, blocks=blocks,
            )
        if end is CellEnd.TIMEOUT:
            raise ToolError(
                ErrorCode.TIMEOUT,
                f"The cell produced no output for {self.factory.idle_timeout_seconds:g}s and did "
                "not stop when interrupted, so its kernel was shut down; what it produced is "
                "above. The next eval starts a fresh interpreter: variables and imports are gone.",
                text=text or None, data=data, blocks=blocks,
            )
        raise ToolError(
            ErrorCode.KERNEL_DIED,
            f"The {language} kernel stopped while running the cell ({reason}); what it produced "
            "is above. The next eval starts a fresh interpreter: variables and imports are gone. "
            "If it ran out of memory, work on less data at once.",
            text=text or None, data=data, blocks=blocks,
        )

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
            session = await self.factory.borrow(self.user_kernel, self.run)
        else:
            session = await self.factory.acquire(language, self.run)
        self.sessions[language] = session
        reason = self.lost.pop(language, None)
        return session, None if reset else reason

    async def _explain_bare_failure(self, code: str, output: CellOutput) -> str:
        """Deno's kernel rejected the cell with only "Execution failed": find out why."""
        problem = await find_syntax_error(code, self.factory.syntax_check_timeout_seconds)
        if problem is None:
            return ("Deno's kernel answered only 'Execution failed', without detail, and the cell "
                    "parses: it failed before running, most often on an import that cannot be "
                    "resolved or downloaded. Check the import specifiers (npm:, jsr:, paths) "
                    "and that the network can reach them.")
        output.add_error(problem.report(), {"ename": "SyntaxError", "evalue": problem.message,
                                            "line": problem.line, "column": problem.column})
        return (f"The cell has a syntax error at line {problem.line}, column {problem.column} "
                f"({problem.message}); none of it ran. Fix it and run the cell again.")

    async def discard(self, language: str) -> None:
        """Shut down the interpreter of `language` (the next eval starts a fresh one); a
        user's kernel is only left, still running."""
        session = self.sessions.pop(language, None)
        if session is not None:
            await self.factory.stop(session)

    async def close(self) -> None:
        """Shut down every interpreter of the run (leave the user's kernel running)."""
        for language in list(self.sessions):
            await self.discard(language)
