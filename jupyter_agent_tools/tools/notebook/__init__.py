"""notebook: the user's notebook as the agent's workspace — add, change, move, delete and run
cells where the human sees them."""

from __future__ import annotations

import difflib
from collections.abc import Hashable

from typing_extensions import override

from ...runtime import CallContext, Resource, RunView, Tier, Tool, ToolResult
from ...runtime.validation import validate_action
from ..outputs import NotebookOutput
from . import cells, runs
from .args import (
    CHANGES_CELLS,
    NOTEBOOK_ACTIONS,
    RUNS_CODE,
    ClearOutputs,
    Create,
    Delete,
    Insert,
    ListNotebooks,
    Move,
    NotebookArgs,
    Restart,
    Revert,
    RunAll,
    RunCells,
    SetSource,
    SetType,
)
from .create import create

# Actions that replace (or drop) a cell's source: their card shows it as a diff.
_REPLACES = frozenset({"set_source", "set_type", "delete"})


class NotebookTool(Tool):
    name = "notebook"
    # Visible where exec tools are; each call is gated at its action's tier (`call_tier`).
    tier = Tier.EXEC
    requires = frozenset({Resource.WORKDIR, Resource.KERNELS})
    parallel_safe = False
    transcript_keeps_data = True  # the panel shows the cells changed, opens and reverts them
    description = (
        "Work in a Jupyter notebook where the user sees it: create one, insert, delete, move, retype or "
        "rewrite cells, clear outputs, and run cells in the notebook's own kernel (the one "
        "JupyterLab shows; started if the notebook has none) with the outputs written into "
        "the cells as they arrive. A notebook open in JupyterLab changes in place and the "
        "user's typing is kept. A cell is its number (from 1, as JupyterLab counts) or its "
        "id; results name both, numbers as they are after the call. A change to a cell the "
        "user or another agent changed (or moved) since you read it is refused "
        "(stale_edit): read it again. Runs answer "
        "like eval (text, images, tables, tracebacks) and stop at the first failing cell; a run "
        "still going after a while answers status running with a job_id (the `job` tool "
        "follows it) while the cells run on and their outputs keep landing in the notebook. "
        "list shows the open notebooks and kernels; restart restarts the notebook's kernel."
    )
    Args = NotebookArgs
    Output = NotebookOutput
    path_fields = ("path",)

    @override
    def call_tier(self, args: NotebookArgs) -> Tier:
        if args.action in RUNS_CODE or (args.action == "insert" and args.run):
            return Tier.EXEC
        return Tier.WRITE if args.action in CHANGES_CELLS else Tier.READ

    @override
    def runs_long(self, args: NotebookArgs) -> bool:
        # Running cells may go on as a job past max_call_seconds; changing them never runs long.
        return args.action in ("run", "run_all") or (args.action == "insert" and bool(args.run))

    @override
    def serial_scope(self, ctx: CallContext, args: NotebookArgs) -> Hashable:
        return (self.name, ctx.run.id, args.path)

    def label(self, args: NotebookArgs) -> str:
        cell = args.cell if args.cell is not None else args.cells or args.from_cell
        where = f" [cell {cell}]" if cell not in (None, []) else ""
        return f"notebook {args.action} {args.path or ''}{where}".strip()[:80]

    @override
    async def prepare(self, ctx: CallContext, args: NotebookArgs) -> None:
        # What a permission card shows: the cell as it is now, beside what it becomes.
        if args.action in _REPLACES and args.path and args.cell is not None:
            opened = await cells.open_notebook(ctx, args.path)
            args._before = opened.editor.sources()[opened.resolve(args.cell) - 1]

    @override
    def approval_context(self, run: RunView, args: NotebookArgs) -> str:
        """The label, and for a cell's new, rewritten or deleted source the change as a diff."""
        label = self.label(args)
        before = args._before or ""
        after = "" if args.action == "delete" else args.source or before
        if before == after:
            return label
        diff = difflib.unified_diff(before.splitlines(keepends=True),
                                    after.splitlines(keepends=True),
                                    fromfile=f"cell {args.cell}" if args.cell else "new cell",
                                    tofile="after", lineterm="")
        return label + "\n" + "".join(line if line.endswith("\n") else line + "\n"
                                      for line in diff)

    async def call(self, ctx: CallContext, args: NotebookArgs) -> ToolResult:
        action = validate_action(self.name, NOTEBOOK_ACTIONS, args)
        if isinstance(action, ListNotebooks):
            return await runs.list_notebooks(ctx)
        if isinstance(action, Revert):
            return await cells.revert(ctx, action)
        if isinstance(action, Create):
            return await create(ctx, action)
        # A change reads the notebook, changes it and writes it in the file's order across
        # every run (`cells.changing`); running cells holds no file's turn.
        match action:
            case Insert():
                timeout = runs.timeout_of(ctx, action.timeout_seconds) if action.run else 0.0
                async with cells.changing(ctx, action.path) as opened:
                    number = await cells.insert(ctx, opened, action)
                    if not action.run:
                        return cells.inserted(ctx, opened, action, number)
                return await runs.run_cells(ctx, opened, [number], timeout)
            case Delete():
                async with cells.changing(ctx, action.path) as opened:
                    return await cells.delete(ctx, opened, action)
            case Move():
                async with cells.changing(ctx, action.path) as opened:
                    return await cells.move(ctx, opened, action)
            case SetType():
                async with cells.changing(ctx, action.path) as opened:
                    return await cells.set_type(ctx, opened, action)
            case SetSource():
                async with cells.changing(ctx, action.path) as opened:
                    return await cells.set_source(ctx, opened, action)
            case ClearOutputs():
                async with cells.changing(ctx, action.path) as opened:
                    return await cells.clear_outputs(ctx, opened, action)
        opened = await cells.open_notebook(ctx, action.path)
        match action:
            case RunCells():
                timeout = runs.timeout_of(ctx, action.timeout_seconds)
                numbers = [opened.resolve(ref) for ref in action.targets]
                return await runs.run_cells(ctx, opened, numbers, timeout)
            case RunAll():
                timeout = runs.timeout_of(ctx, action.timeout_seconds)
                first = 1 if action.from_cell is None else opened.resolve(action.from_cell)
                numbers = list(range(first, opened.editor.cell_count + 1))
                return await runs.run_cells(ctx, opened, numbers, timeout, named=False)
            case Restart():
                return await runs.restart(ctx, opened)
        raise AssertionError(f"unhandled notebook action {action!r}")
