"""eval: run Python or JavaScript in the run's persistent kernel; cells can call tool()."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

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

if TYPE_CHECKING:
    from ..runtime import RunView


class EvalArgs(ToolArgs):
    code: str = Field(min_length=1, description="The cell to run, as in a notebook.")
    description: str = Field(
        description="What the cell does, in 5 to 10 words; labels the call for the user."
    )
    language: Literal["python", "javascript"] = Field(
        "python", description="python (IPython kernel) or javascript (Deno kernel)."
    )
    reset: bool = Field(False, description="Discard the interpreter and start clean first.")

    @field_validator("description")
    @classmethod
    def _five_to_ten_words(cls, value: str) -> str:
        words = len(value.split())
        if not 5 <= words <= 10:
            raise ValueError(f"must be 5 to 10 words, got {words}")
        return value.strip()


class Eval(Tool):
    name = "eval"
    tier = Tier.EXEC
    requires = frozenset({Resource.WORKDIR, Resource.KERNELS})
    parallel_safe = False
    description = (
        "Run code in this run's persistent kernel (Python by default, or JavaScript in Deno); "
        "state survives between calls, like notebook cells. Returns the last expression's "
        "value, printed output, displays (tables as html, figures as images, Markdown, LaTeX "
        "and JSON as their source) or the traceback. IPython idioms work (%pip, %cd, !cmd, %%bash). Inside a cell, "
        "tool(name, args) calls any tool of this run and returns its result (.text, .data), "
        "raising ToolError on failure. A cell quiet for too long is interrupted. In a run "
        "created on the user's kernel (kernel_id / notebook), Python cells run there, beside "
        "the user's variables: reset is refused, and a cell waits while the user runs one."
    )
    Args = EvalArgs

    def precheck(self, ctx: CallContext, args: EvalArgs) -> None:
        interpreters = ctx.run.resources[Resource.KERNELS]
        if args.reset:
            interpreters.refuse_reset(args.language)
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
        interpreters = ctx.run.resources[Resource.KERNELS]
        return await interpreters.execute(args.language, args.code, reset=args.reset)
