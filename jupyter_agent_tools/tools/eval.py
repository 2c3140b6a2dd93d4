"""eval: run Python or JavaScript in the run's persistent kernel; cells can call tool()."""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from ..kernels import errors
from ..kernels.interpreters import CellRun, RunInterpreters
from ..kernels.outputs import message_text
from ..kernels.protocol import BridgeError, BridgeReply
from ..kernels.session import CellEnd
from ..runtime import (
    CallContext,
    ErrorCode,
    Origin,
    Resource,
    Tier,
    Tool,
    ToolArgs,
    ToolError,
    ToolResult,
)
from .outputs import EvalOutput

if TYPE_CHECKING:
    from ..runtime import RunView


# 5 to 10 words, in the schema (clients check it before calling) and on the server alike.
FIVE_TO_TEN_WORDS = r"^\s*\S+(\s+\S+){4,9}\s*$"


class EvalArgs(ToolArgs):
    code: str = Field(min_length=1, description="The cell to run, as in a notebook.")
    description: str = Field(
        description="What the cell does, in 5 to 10 words; labels the call for the user.",
        json_schema_extra={"pattern": FIVE_TO_TEN_WORDS},
    )
    language: Literal["python", "javascript"] = Field(
        "python", description="python (IPython kernel) or javascript (Deno kernel)."
    )
    reset: bool = Field(False, description="Discard the interpreter and start clean first.")

    @field_validator("description")
    @classmethod
    def _five_to_ten_words(cls, value: str) -> str:
        if re.fullmatch(FIVE_TO_TEN_WORDS, value) is None:
            raise ValueError(f"must be 5 to 10 words, got {len(value.split())}")
        return value.strip()


class Eval(Tool):
    name = "eval"
    tier = Tier.EXEC
    requires = frozenset({Resource.WORKDIR, Resource.KERNELS})
    parallel_safe = False
    long_running = True
    description = (
        "Run code in this run's persistent kernel (Python by default, or JavaScript in Deno); "
        "state survives between calls, like notebook cells. Returns the last expression's "
        "value, printed output, displays (tables as html, figures as images, Markdown, LaTeX "
        "and JSON as their source) or the traceback. IPython idioms work (%pip, %cd, !cmd, %%bash). Inside a cell, "
        "tool(name, args) calls any tool of this run and returns its result (.text, .data), "
        "raising ToolError on failure. A cell quiet for too long is interrupted. A cell still "
        "running after a while answers status running with a job_id and its output so far: "
        "it goes on, and the `job` tool waits for it, reads or cancels it. In a run "
        "created on the user's kernel (kernel_id / notebook), Python cells run there, beside "
        "the user's variables: reset is refused, and a cell waits while the user runs one."
    )
    Args = EvalArgs
    Output = EvalOutput

    def precheck(self, ctx: CallContext, args: EvalArgs) -> None:
        interpreters: RunInterpreters = ctx.run.resources[Resource.KERNELS]
        if args.reset:
            try:
                interpreters.refuse_reset(args.language)
            except errors.KernelError as exc:
                raise kernel_error(exc) from None
        if ctx.origin is Origin.CELL and args.language in interpreters.running:
            # It would queue behind a cell that is waiting for it.
            raise ToolError(
                ErrorCode.INVALID_ARGUMENTS,
                f"eval of {args.language} cannot run from this cell: the run's {args.language} "
                "interpreter is busy running a cell (maybe this one). Run the code directly in "
                "the cell, or in the other language.",
            )

    def serial_scope(self, ctx: CallContext, args: EvalArgs) -> Hashable:
        return (self.name, ctx.run.id, args.language)

    def label(self, args: EvalArgs) -> str:
        return args.description

    def approval_context(self, run: RunView, args: EvalArgs) -> str:
        interpreters = run.resources.get(Resource.KERNELS)
        user_kernel = interpreters.user_kernel if interpreters is not None else None
        if user_kernel is None or args.language != "python":
            return args.description
        where = f"the user's kernel {user_kernel.kernel_id}"
        if user_kernel.notebook:
            where += f" (notebook {user_kernel.notebook})"
        return f"{args.description} — runs in {where}, beside the user's variables"

    async def call(self, ctx: CallContext, args: EvalArgs) -> ToolResult:
        interpreters: RunInterpreters = ctx.run.resources[Resource.KERNELS]
        try:
            cell = await interpreters.execute(
                args.language, args.code, reset=args.reset, caller=CellToolCalls(ctx.run),
                listener=lambda msg_type, content: ctx.say(message_text(msg_type, content)))
        except errors.KernelError as exc:
            raise kernel_error(exc) from None
        return eval_result(cell, interpreters.limits.idle_timeout_seconds)


class CellToolCalls:
    """Answers the tool() calls of this run's cells: through Run.call, as origin "cell"."""

    def __init__(self, run: RunView) -> None:
        self.run = run

    async def call(self, name: str, args: Any) -> BridgeReply:
        return _reply(await self.run.call(name, args, origin=Origin.CELL))

    def timed_out(self, name: str, seconds: float) -> BridgeReply:
        return _reply(ToolError(ErrorCode.TIMEOUT, f"tool({name!r}) took longer than the "
                                f"bridge's {seconds:.0f}s. Ask for less work per call.",
                                ).to_result())

    def failed(self, name: str, exc: Exception) -> BridgeReply:  # noqa: ARG002 - the protocol's
        return _reply(ToolError(ErrorCode.FAILED,
                                f"The bridge failed ({exc}); call again.").to_result())


def _reply(result: ToolResult) -> BridgeReply:
    error = result.error
    return {"id": None, "ok": result.ok, "text": result.text, "data": result.data,
            "error": BridgeError(code=error["code"], message=error["message"]) if error else None}


def _notes(cell: CellRun) -> list[str]:
    """What the agent must know before the output: a fresh interpreter, or state lost."""
    if cell.reset and cell.lost_reason is None:
        return [f"[reset: this is a fresh {cell.language} interpreter]"]
    if cell.lost_reason is not None and cell.user_kernel is not None:
        return [f"[state lost: the user's {cell.user_kernel} restarted since the last eval "
                f"({cell.lost_reason}); what earlier cells defined, the user's variables "
                "included, is gone]"]
    if cell.lost_reason is not None:
        return [f"[state lost: the previous {cell.language} kernel stopped ({cell.lost_reason}); "
                "this is a fresh interpreter, so re-run the imports and definitions you need]"]
    return []


def _bare_failure(cell: CellRun) -> str:
    """Why Deno's kernel rejected a cell with only 'Execution failed'."""
    problem = cell.syntax_error
    if problem is None:
        return ("Deno's kernel answered only 'Execution failed', without detail, and the cell "
                "parses: it failed before running, most often on an import that cannot be "
                "resolved or downloaded. Check the import specifiers (npm:, jsr:, paths) "
                "and that the network can reach them.")
    return (f"The cell has a syntax error at line {problem.line}, column {problem.column} "
            f"({problem.message}); none of it ran. Fix it and run the cell again.")


def eval_result(cell: CellRun, idle_timeout: float) -> ToolResult:
    """The cell's output for the agent, or the ToolError saying how it ended and what next."""
    if cell.end is CellEnd.PAUSED:
        return paused_result(cell.data)
    notes = _notes(cell)
    text, blocks, data = cell.text, cell.blocks, cell.data
    if notes:
        text = "\n".join([*notes, text]) if text else "\n".join(notes)
        blocks = [{"type": "text", "text": note} for note in notes] + blocks
    if cell.end is CellEnd.OK:
        return ToolResult.success(text or "(no output)", data, blocks)
    state = ("This ran in a fresh interpreter: what earlier cells defined is gone."
             if cell.lost_reason is not None else
             "This ran in a fresh interpreter, as reset asked." if cell.reset else
             "The interpreter's state is kept.")
    if cell.end is CellEnd.ERROR:
        error = data.get("error") or {}
        why = _bare_failure(cell) if cell.bare_failure else (
            f"The cell raised {error.get('ename', 'an error')}; read the traceback, fix the "
            "code and run it again.")
        raise ToolError(ErrorCode.FAILED, f"{why} {state}", text=text, data=data, blocks=blocks)
    if cell.end is CellEnd.QUEUED:
        raise ToolError(
            ErrorCode.TIMEOUT,
            f"The user started a cell in the same instant, and this one is still queued "
            f"behind it after {idle_timeout:g}s: it will run when the user's cell ends, and its "
            "output will not reach you. Check its effects with a later eval.",
            data=data,
        )
    if cell.end is CellEnd.BUSY:
        raise ToolError(
            ErrorCode.TIMEOUT,
            f"The user's {cell.user_kernel} was busy running another cell (the user's) for "
            f"{idle_timeout:g}s, so this cell did not run. Call eval again later, or ask the "
            "user to let that cell finish or interrupt it.",
            data=data,
        )
    if cell.end is CellEnd.TIMEOUT and not cell.gone:
        raise ToolError(
            ErrorCode.TIMEOUT,
            f"The cell produced no output for {idle_timeout:g}s and was interrupted; what it "
            "produced is above. Print progress, make it faster, or split the work into smaller "
            f"cells. {state}",
            text=text, data=data, blocks=blocks,
        )
    if cell.user_kernel is not None and cell.end is CellEnd.TIMEOUT:
        raise ToolError(
            ErrorCode.TIMEOUT,
            f"The cell produced no output for {idle_timeout:g}s and did not stop when "
            "interrupted; what it produced is above. The user's kernel is still running it: a "
            "run never restarts the user's kernel, so ask the user to interrupt or restart it. "
            "Until then eval waits behind it.",
            text=text or None, data=data, blocks=blocks,
        )
    if cell.user_kernel is not None:
        raise ToolError(
            ErrorCode.KERNEL_DIED,
            f"The user's {cell.user_kernel} stopped while running the cell "
            f"({cell.death_reason}); what it produced is above. A run never starts a "
            "replacement: once the server has restarted it, the next eval reconnects (its "
            "variables are gone); otherwise ask the user to restart it.",
            text=text or None, data=data, blocks=blocks,
        )
    if cell.end is CellEnd.TIMEOUT:
        raise ToolError(
            ErrorCode.TIMEOUT,
            f"The cell produced no output for {idle_timeout:g}s and did not stop when "
            "interrupted, so its kernel was shut down; what it produced is above. The next eval "
            "starts a fresh interpreter: variables and imports are gone.",
            text=text or None, data=data, blocks=blocks,
        )
    raise ToolError(
        ErrorCode.KERNEL_DIED,
        f"The {cell.language} kernel stopped while running the cell ({cell.death_reason}); what "
        "it produced is above. The next eval starts a fresh interpreter: variables and imports "
        "are gone. If it ran out of memory, work on less data at once.",
        text=text or None, data=data, blocks=blocks,
    )


def stopped_at(place: dict[str, Any] | None) -> str:
    """Where a debugger stopped a cell (`data.stopped`), as the agent reads it."""
    if not place:
        return "a breakpoint"
    if place.get("notebook"):
        return f"{place['notebook']} [cell {place['cell']}] line {place['line']}"
    if place.get("cell") is not None:
        return f"eval cell {place['cell']}, line {place['line']}"
    return f"{place.get('file')}:{place.get('line')}"


def paused_result(data: dict[str, Any]) -> ToolResult:
    """A cell stopped at a debugger's breakpoint: where, and what to do next."""
    place = data.get("stopped") or {}
    code = f"\n  {place['line']} | {place['source_line']}" if place.get("source_line") else ""
    return ToolResult.success(
        f"Stopped at {stopped_at(place)}.{code}\nThe cell is paused (the kernel is busy for "
        "every client). Inspect with debug stack/scopes/variables/evaluate; debug continue or "
        "step_* resumes and answers at the next stop or with the cell's output; debug "
        "terminate detaches and lets it run on.", data)


def kernel_error(exc: errors.KernelError) -> ToolError:
    """What a kernels error means to the agent: its contract code and what to do next."""
    match exc:
        case errors.CellPaused(place=place):
            return ToolError(
                ErrorCode.BUSY,
                f"A cell of this kernel is paused at {stopped_at(place)}; the kernel runs "
                "nothing else until it resumes. Call debug continue (or step_*), or debug "
                "terminate to detach and let it run on, then eval again.")
        case errors.ResetRefused(kernel=kernel):
            return ToolError(
                ErrorCode.INVALID_ARGUMENTS,
                f"reset is refused: this run's Python cells run in the user's own kernel "
                f"({kernel}), and restarting it would wipe the user's variables. Delete what you "
                "defined with `del name` instead, or ask the user to restart the kernel.",
            )
        case errors.UnknownLanguage(language=language, languages=languages):
            return ToolError(ErrorCode.INVALID_ARGUMENTS,
                             f"eval has no language {language!r}; use one of {languages}.")
        case errors.KernelNotInstalled(language=language, kernel_name=name, install_hint=hint):
            return ToolError(ErrorCode.UNAVAILABLE, f"No {language} kernel is installed "
                             f"(kernelspec {name!r} not found). {hint}")
        case errors.KernelDidNotStart(language=language, kernel_name=name, reason=reason,
                                      install_hint=hint, started=started):
            how = "started but did not answer" if started else "did not start"
            return ToolError(ErrorCode.UNAVAILABLE,
                             f"The {language} kernel ({name}) {how}: {reason}. {hint}")
        case errors.TooManyKernels(limit=limit):
            return ToolError(ErrorCode.UNAVAILABLE, f"{limit} kernels are running already. "
                             "Close runs you no longer need, then call eval again.")
        case errors.GatewayUnreachable(reason=reason):
            return ToolError(ErrorCode.UNAVAILABLE, f"The kernel gateway did not answer "
                             f"({reason}). Check that it is up at c.GatewayClient.url, then call "
                             "eval again.")
        case errors.UserKernelNotRunning(kernel_id=kernel_id, waited_seconds=waited):
            return ToolError(ErrorCode.KERNEL_DIED,
                             f"The user's kernel {kernel_id} is not running (shut down, or dead "
                             f"and not restarted within {waited:g}s). A run never starts a "
                             "replacement: ask the user to restart the notebook's kernel, then "
                             "call eval again.")
        case errors.UserKernelSilent(kernel_id=kernel_id, reason=reason):
            return ToolError(ErrorCode.UNAVAILABLE, f"The user's kernel {kernel_id} did not "
                             f"answer: {reason}. Check it in JupyterLab (restart it if it hangs).")
        case errors.UserKernelBusy(kernel_id=kernel_id, waited_seconds=waited):
            return ToolError(ErrorCode.TIMEOUT,
                             f"The user's kernel {kernel_id} was busy running another cell for "
                             f"{waited:g}s, so nothing ran. Call eval again once it is done, or "
                             "ask the user to interrupt it.")
        case errors.SetupFailed(language=language, ending=ending, output=output):
            return ToolError(ErrorCode.UNAVAILABLE, f"Setting up the {language} kernel failed "
                             f"({ending}): {output} Check the kernel's installation (status "
                             "shows it).")
    return ToolError(ErrorCode.UNAVAILABLE, f"eval cannot run: {exc}. Try again; if it keeps "
                     "failing, run the code with bash meanwhile.")
