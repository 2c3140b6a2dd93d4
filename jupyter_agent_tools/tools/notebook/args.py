"""The arguments of `notebook`: one flat object for the agent, and the model of each action,
into which every call is validated (a missing field names the action that needs it)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, TypeAdapter, model_validator

from ...runtime import ToolArgs

NotebookAction = Literal["list", "create", "insert", "delete", "move", "set_type", "set_source",
                         "clear_outputs", "run", "run_all", "restart", "revert"]
CellTypeName = Literal["code", "markdown", "raw"]
# A cell: its number (1-based over every cell, as JupyterLab counts) or its nbformat id.
CellArg = int | str

# Most cells one `run` names (run_all has no such bound: the notebook's own cells).
MAX_RUN_CELLS = 200

_CELL = ("A cell: its number (1-based over every cell, as JupyterLab's status bar counts) or "
         "its nbformat cell id (a string; ids stay the same when cells are added or removed).")


class NotebookArgs(ToolArgs):
    action: NotebookAction = Field(description=(
        "list: the notebooks open in JupyterLab and the server's kernels (no path). "
        "create: a new notebook at path (kernel?, cells?: its first code cells' sources; "
        "default one empty code cell, so JupyterLab adds none and numbers hold). "
        "insert: add a cell (source, cell_type, index or after `cell`; run=true runs it). "
        "delete / move (to index) / set_type / set_source: change one cell. "
        "clear_outputs: one cell's, or all. run: run `cell` or `cells` in the notebook's "
        "kernel, outputs written into the cells as they arrive. run_all: every code cell, or "
        "from `from_cell` to the end. restart: restart the notebook's kernel. revert: undo "
        "one change of yours (change_id from its result) if the cell still holds what you "
        "left."))
    path: str | None = Field(None, description="The notebook (.ipynb), relative to the cwd.")
    cell: CellArg | None = Field(None, description=_CELL + " For insert: the new cell goes "
                                 "right after it.")
    cells: list[CellArg] | None = Field(None, min_length=1, max_length=MAX_RUN_CELLS,
                                        description="run: several cells, run in this order. "
                                        "create: the new notebook's first cells, each a code "
                                        "cell's source (strings).")
    kernel: str | None = Field(None, max_length=200, description="create: the kernel's name "
                               "(kernelspec, e.g. python3; default: the server's default).")
    index: int | None = Field(None, ge=1, description="insert: the position the new cell takes "
                              "(1-based; default: the end). move: the position the cell takes.")
    source: str | None = Field(None, description="insert / set_source: the cell's whole text.")
    cell_type: CellTypeName | None = Field(None, description="insert (default code) / set_type.")
    run: bool = Field(False, description="insert: run the new code cell at once.")
    from_cell: CellArg | None = Field(None, description="run_all: the first cell to run.")
    change_id: str | None = Field(None, max_length=64, description="revert: the change to "
                                  "undo, as a cell change's result names it (data.change_id).")
    timeout_seconds: float | None = Field(
        None, ge=0.1, description="run / run_all / insert with run: past this the kernel is "
        "interrupted and the call says so (default: the server's, 600 s).")
    # The source of the cell a call replaces or deletes, read by `prepare` for the card.
    _before: str | None = PrivateAttr(None)


# -- per action: what each one takes, required where it needs it ---------------------------
# Descriptions are the hints of "notebook <action> needs `<field>`: ..." messages.


class _Action(BaseModel):
    model_config = ConfigDict(extra="ignore")  # the flat object carries every action's fields


class _OnNotebook(_Action):
    path: str = Field(description="the notebook (.ipynb), relative to the cwd.")


class ListNotebooks(_Action):
    action: Literal["list"]


class Create(_OnNotebook):
    action: Literal["create"]
    kernel: str | None = None
    cells: list[str] | None = Field(None, description="the first cells' sources (strings).")


class Insert(_OnNotebook):
    action: Literal["insert"]
    source: str = Field(description="the new cell's text.")
    cell_type: CellTypeName = "code"
    index: int | None = None
    cell: CellArg | None = None
    run: bool = False
    timeout_seconds: float | None = None

    @model_validator(mode="after")
    def _one_place(self) -> Insert:
        if self.index is not None and self.cell is not None:
            raise ValueError("give index (the position the cell takes) or cell (the cell it "
                             "follows), not both")
        if self.run and self.cell_type != "code":
            raise ValueError(f"run=true runs code cells; a {self.cell_type} cell has nothing "
                             "to run")
        return self


class Delete(_OnNotebook):
    action: Literal["delete"]
    cell: CellArg = Field(description="the cell to delete (number or id).")


class Move(_OnNotebook):
    action: Literal["move"]
    cell: CellArg = Field(description="the cell to move (number or id).")
    index: int = Field(description="the position (1-based) the cell takes.")


class SetType(_OnNotebook):
    action: Literal["set_type"]
    cell: CellArg = Field(description="the cell to change (number or id).")
    cell_type: CellTypeName = Field(description="code, markdown or raw.")


class SetSource(_OnNotebook):
    action: Literal["set_source"]
    cell: CellArg = Field(description="the cell to change (number or id).")
    source: str = Field(description="the cell's new whole text.")


class ClearOutputs(_OnNotebook):
    action: Literal["clear_outputs"]
    cell: CellArg | None = None


class RunCells(_OnNotebook):
    action: Literal["run"]
    cell: CellArg | None = None
    cells: list[CellArg] | None = None
    timeout_seconds: float | None = None

    @model_validator(mode="after")
    def _some_cells(self) -> RunCells:
        if (self.cell is None) == (self.cells is None):
            raise ValueError("give cell (one cell) or cells (several), exactly one of them")
        return self

    @property
    def targets(self) -> list[CellArg]:
        return [self.cell] if self.cell is not None else list(self.cells or [])


class RunAll(_OnNotebook):
    action: Literal["run_all"]
    from_cell: CellArg | None = None
    timeout_seconds: float | None = None


class Restart(_OnNotebook):
    action: Literal["restart"]


class Revert(_Action):
    action: Literal["revert"]
    change_id: str = Field(description="the change to undo (data.change_id of its result).")


NotebookCall = Annotated[
    ListNotebooks | Create | Insert | Delete | Move | SetType | SetSource | ClearOutputs | RunCells
    | RunAll | Restart | Revert,
    Field(discriminator="action"),
]
NOTEBOOK_ACTIONS: TypeAdapter[NotebookCall] = TypeAdapter(NotebookCall)

# Which actions change cells (write tier) and which run code (exec tier); the rest read.
CHANGES_CELLS = frozenset({"create", "insert", "delete", "move", "set_type", "set_source",
                           "clear_outputs", "revert"})
RUNS_CODE = frozenset({"run", "run_all", "restart"})
