"""lsp and lsp_rename: ask the run's language servers (registered when the run has them)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..lsp import actions
from ..lsp.session import LspSession
from ..runtime import CallContext, Resource, Tier, Tool, ToolArgs, ToolResult

LspAction = Literal["diagnostics", "definition", "type_definition", "implementation",
                    "references", "hover", "symbols", "code_actions", "status", "reload"]


class LspArgs(ToolArgs):
    action: LspAction = Field(description="What to ask the language server.")
    file: str | None = Field(None, description="File, relative to the cwd; \"*\" with "
                             "diagnostics checks the whole project.")
    cell: int | None = Field(None, ge=1, description="Notebooks (.ipynb) only: the cell, "
                             "numbered from 1 over every cell as JupyterLab shows; `line` then "
                             "counts within the cell. Needed wherever a line is.")
    line: int | None = Field(None, ge=1, description="1-based line of the symbol.")
    symbol: str | None = Field(None, min_length=1, description="The name on that line to ask "
                               "about (never a column); needed by navigation and hover.")
    occurrence: int | None = Field(None, ge=1, description="Which occurrence of symbol on the "
                                   "line, when it appears several times (1-based).")
    query: str | None = Field(None, min_length=1, description="symbols: search the workspace "
                              "by name instead of listing a file's symbols.")


class Lsp(Tool):
    name = "lsp"
    tier = Tier.READ
    requires = frozenset({Resource.WORKDIR, Resource.LSP})
    description = (
        "Ask the language server. Actions: diagnostics (file, or \"*\" for a project check), "
        "definition, type_definition, implementation, references, hover (file + line + symbol), "
        "symbols (file outline, or query to search the workspace), code_actions (file + line), "
        "status (which servers serve this project and why not), reload (restart them). In a "
        "notebook, give `cell` beside `line`; answers name cells as `analysis.ipynb [cell 3] 4:5`."
    )
    Args = LspArgs

    def label(self, args: LspArgs) -> str:
        cell = f" [cell {args.cell}]" if args.cell else ""
        where = (f" {args.file}{cell}" + (f":{args.line}" if args.line else "")
                 if args.file else "")
        return f"lsp {args.action}{where}"

    async def call(self, ctx: CallContext, args: LspArgs) -> ToolResult:
        session: LspSession = ctx.run.resources[Resource.LSP]
        if args.action in actions.NAVIGATION:
            return await actions.navigate(session, args)
        if args.action == "diagnostics":
            return await actions.diagnostics(session, ctx, args)
        handler = {"hover": actions.hover, "symbols": actions.symbols,
                   "code_actions": actions.code_actions, "status": actions.status,
                   "reload": actions.reload}[args.action]
        return await handler(session, args)


class LspRenameArgs(ToolArgs):
    file: str = Field(description="File holding the symbol, relative to the cwd.")
    cell: int | None = Field(None, ge=1, description="Notebooks (.ipynb) only: the cell, "
                             "numbered from 1 over every cell; `line` then counts within it.")
    line: int = Field(ge=1, description="1-based line the symbol is on.")
    symbol: str = Field(min_length=1, description="The current name, as it appears on the line.")
    new_name: str = Field(min_length=1, description="The new name.")
    occurrence: int | None = Field(None, ge=1, description="Which occurrence of symbol on the "
                                   "line, when it appears several times (1-based).")


class LspRename(Tool):
    name = "lsp_rename"
    tier = Tier.WRITE
    requires = frozenset({Resource.WORKDIR, Resource.LSP})
    description = (
        "Rename a symbol across the project through the language server. Every file changes or "
        "none does; the result lists files and edits, carries the diff and new diagnostics."
    )
    Args = LspRenameArgs
    path_fields = ("file",)

    def label(self, args: LspRenameArgs) -> str:
        return f"lsp_rename {args.symbol} → {args.new_name}"

    async def call(self, ctx: CallContext, args: LspRenameArgs) -> ToolResult:
        return await actions.rename(ctx.run.resources[Resource.LSP], ctx, args)
