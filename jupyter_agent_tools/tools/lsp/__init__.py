"""lsp and lsp_rename: ask the run's language servers (registered when the run has them)."""

from __future__ import annotations

import asyncio

from ...files import FilesError
from ...lsp.errors import LspError
from ...lsp.session import LspSession
from ...runtime import CallContext, Resource, Tier, Tool, ToolError, ToolResult
from ...runtime.validation import validate_action
from ..outputs import LspOutput, LspRenameOutput
from . import actions
from .args import LSP_ACTIONS, LspArgs, LspRenameArgs
from .errors import tool_error
from .places import build_config_notes, cell_by_id
from .rename import rename


class Lsp(Tool):
    name = "lsp"
    tier = Tier.READ
    requires = frozenset({Resource.WORKDIR, Resource.LSP})
    description = (
        "Ask the language server. Actions: diagnostics (file, or \"*\" for a project check), "
        "definition, type_definition, implementation, references, hover (file + line + symbol), "
        "symbols (file outline, or query to search the workspace), code_actions (file + line, "
        "kind?: lists numbered fixes and refactorings; `apply` with a number or exact title "
        "stages one like ast_edit: a diff and an edit_id for resolve), "
        "status (which servers serve this project and why not), reload (restart them). In a "
        "notebook, give `cell` beside `line`; answers name cells as `analysis.ipynb [cell 3] 4:5`."
    )
    Args = LspArgs
    Output = LspOutput

    def call_tier(self, args: LspArgs) -> Tier:
        # Applying a code action stages an edit, as ast_edit does: a write-tier call.
        return Tier.WRITE if args.action == "code_actions" and args.apply is not None else self.tier

    def label(self, args: LspArgs) -> str:
        cell = f" [cell {args.cell}]" if args.cell else ""
        where = (f" {args.file}{cell}" + (f":{args.line}" if args.line else "")
                 if args.file else "")
        return f"lsp {args.action}{where}"

    async def call(self, ctx: CallContext, args: LspArgs) -> ToolResult:
        session: LspSession = ctx.run.resources[Resource.LSP]
        try:
            if isinstance(args.cell, str):  # a cell id: the number the servers' answers use
                args = args.model_copy(update={"cell": await cell_by_id(session, ctx, args)})
            action = validate_action(self.name, LSP_ACTIONS, args)
            return await actions.perform(session, ctx, action)
        except LspError as exc:
            error = tool_error(exc)
        except ToolError as exc:
            error = exc
        # A server that guesses how the project builds explains many failures: say so.
        if args.file and args.file != "*" and args.action not in ("status", "diagnostics"):
            try:
                path = await asyncio.to_thread(ctx.run.resolve, args.file)
            except (ToolError, FilesError):  # the error already says what is wrong with it
                raise error from None
            notes = await build_config_notes(session, path)
            if notes:
                error.message = f"{error.message} Note: {' '.join(notes)}"
        raise error


class LspRename(Tool):
    name = "lsp_rename"
    tier = Tier.WRITE
    requires = frozenset({Resource.WORKDIR, Resource.LSP})
    description = (
        "Rename a symbol across the project through the language server. Every file changes or "
        "none does; the result lists files and edits, carries the diff and new diagnostics. In a "
        "run whose approvals are 'ask', the rename is staged instead (an edit_id and its diff, "
        "as ast_edit): call resolve to accept or discard it."
    )
    Args = LspRenameArgs
    Output = LspRenameOutput
    path_fields = ("file",)

    def label(self, args: LspRenameArgs) -> str:
        return f"lsp_rename {args.symbol} → {args.new_name}"

    async def call(self, ctx: CallContext, args: LspRenameArgs) -> ToolResult:
        try:
            return await rename(ctx.run.resources[Resource.LSP], ctx, args)
        except LspError as exc:
            raise tool_error(exc) from None
