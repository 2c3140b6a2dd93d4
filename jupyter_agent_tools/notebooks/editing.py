"""Changing a notebook's cells: insert, delete, move, retype, replace a source, outputs.

Two targets share one interface (`CellEditor`): the shared document of a notebook open with
real-time collaboration (`shared.SharedNotebook`, where every change reaches the human's
view in place) and a closed notebook's parsed file (`FileCells`, written back in the file's
own style). Cells are addressed by number (1-based, as JupyterLab's status bar counts) or by
their nbformat id; a run's outputs find their cell by id, so a cell that moves while it runs
still gets them.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .document import CellRef, Notebook, cell_number

CellType = Literal["code", "markdown", "raw"]


@dataclass(frozen=True)
class OutputChange:
    """One change to a running cell's outputs, as the kernel's messages make them.

    `append` adds `output`; `stream` appends `text` to the stream output at `position`;
    `replace` puts `output` at `position` (an updated display); `clear` empties them.
    """

    kind: Literal["append", "stream", "replace", "clear"]
    output: dict[str, Any] | None = None
    position: int = 0
    text: str = ""


class CellEditor(Protocol):
    """A notebook whose cells can be changed; `shared` when it is an open shared document."""

    shared: bool

    @property
    def cell_count(self) -> int: ...

    def ids(self) -> list[str | None]: ...

    def cell_at(self, number: int) -> tuple[str | None, str]:
        """The id and the type of the cell numbered `number` (one that is there)."""
        ...

    def number_of(self, cell_id: str) -> int | None:
        """The number of the cell with `cell_id` now, or None when it is gone."""
        ...

    def sources(self) -> list[str]: ...

    def source(self, number: int) -> str:
        """The source of the cell numbered `number` (one that is there)."""
        ...

    def cell_types(self) -> list[str]: ...

    def insert(self, index: int, cell_type: CellType, source: str) -> str:
        """Insert a new cell so that it is numbered `index` (1-based); its id."""
        ...

    def delete(self, index: int) -> None: ...

    def move(self, index: int, to: int) -> None:
        """Move cell `index` so that it is numbered `to` afterwards."""
        ...

    def set_type(self, index: int, cell_type: CellType) -> None: ...

    def snapshot(self, index: int) -> dict[str, Any]:
        """Cell `index` without its outputs: id, cell_type, source (a string), metadata."""
        ...

    def restore(self, index: int, cell: dict[str, Any]) -> None:
        """Put a cell taken by `snapshot` back so that it is numbered `index`."""
        ...

    def set_source(self, index: int, source: str) -> None: ...

    def clear_outputs(self, index: int) -> None: ...

    def begin_execution(self, cell_id: str) -> None:
        """Outputs and count cleared, the cell shown as running."""
        ...

    def change_outputs(self, cell_id: str, change: OutputChange) -> None: ...

    def end_execution(self, cell_id: str, execution_count: int | None) -> None: ...


def resolve_cell(editor: CellEditor, ref: CellRef) -> int:
    """The number (1-based) of the cell `ref` names now: a number, or a cell id (see
    `document.cell_number`)."""
    return cell_number(ref, editor.ids(), shared=editor.shared)


def new_cell(cell_type: CellType, source: str, cell_id: str | None = None) -> dict[str, Any]:
    """A new nbformat 4.5 cell, with an id as JupyterLab gives new cells (a UUID)."""
    cell: dict[str, Any] = {"cell_type": cell_type, "id": cell_id or str(uuid.uuid4()),
                            "metadata": {}, "source": source}
    if cell_type == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def snapshot_of(cell: dict[str, Any]) -> dict[str, Any]:
    """A cell without its outputs, as a revert needs it."""
    return {"id": cell.get("id"), "cell_type": cell.get("cell_type", "code"),
            "source": _joined(cell.get("source", "")),
            "metadata": copy.deepcopy(cell.get("metadata") or {})}


def restored(snapshot: dict[str, Any]) -> dict[str, Any]:
    """A whole nbformat cell from a snapshot (a code cell comes back without outputs)."""
    cell = new_cell(snapshot["cell_type"], snapshot["source"], snapshot.get("id"))
    cell["metadata"] = copy.deepcopy(snapshot.get("metadata") or {})
    return cell


def retyped(cell: dict[str, Any], cell_type: CellType) -> dict[str, Any]:
    """`cell` as another type: its id, source and metadata kept; outputs only for code."""
    changed = {key: value for key, value in cell.items()
               if key in ("id", "metadata", "source", "attachments")}
    changed["cell_type"] = cell_type
    if cell_type == "code":
        changed.pop("attachments", None)
        changed.update(execution_count=None, outputs=[])
    return changed


def _joined(value: str | list[str]) -> str:
    return value if isinstance(value, str) else "".join(value)


class FileCells:
    """A closed notebook's cells, changed in memory and written back in the file's style.

    Sources and text outputs keep the file's form (lists of lines, as nbformat writes, or
    strings). A notebook whose cells have no ids (nbformat 4.0-4.4) gets them as JupyterLab
    gives them on save (UUIDs, nbformat_minor 5) the first time `ensure_ids` is called.
    """

    shared = False

    def __init__(self, notebook: Notebook) -> None:
        self.data: dict[str, Any] = copy.deepcopy(notebook.data)
        self.style = notebook.style
        cells = self.data["cells"]
        self._as_lines = (not cells) or any(isinstance(cell.get("source"), list)
                                            for cell in cells)
        self.ids_added = False

    @property
    def _cells(self) -> list[dict[str, Any]]:
        return self.data["cells"]

    def to_bytes(self) -> bytes:
        return self.style.dumps(self.data).encode("utf-8")

    def ensure_ids(self) -> bool:
        """Give every cell an id (upgrading the notebook to nbformat 4.5); whether it did."""
        missing = [cell for cell in self._cells if not cell.get("id")]
        if not missing and self.data.get("nbformat_minor", 0) >= 5:
            return False
        for cell in missing:
            cell["id"] = str(uuid.uuid4())
        self.data["nbformat_minor"] = max(5, int(self.data.get("nbformat_minor", 0)))
        self.ids_added = True
        return True

    def ids(self) -> list[str | None]:
        return [cell.get("id") for cell in self._cells]

    @property
    def cell_count(self) -> int:
        return len(self._cells)

    def cell_at(self, number: int) -> tuple[str | None, str]:
        cell = self._cells[number - 1]
        return cell.get("id"), str(cell.get("cell_type", "code"))

    def number_of(self, cell_id: str) -> int | None:
        ids = self.ids()
        return ids.index(cell_id) + 1 if cell_id in ids else None

    def sources(self) -> list[str]:
        return [_joined(cell.get("source", "")) for cell in self._cells]

    def source(self, number: int) -> str:
        return _joined(self._cells[number - 1].get("source", ""))

    def cell_types(self) -> list[str]:
        return [str(cell.get("cell_type", "code")) for cell in self._cells]

    def _styled(self, text: str) -> str | list[str]:
        return text.splitlines(keepends=True) if self._as_lines else text

    def _styled_output(self, output: dict[str, Any]) -> dict[str, Any]:
        output = copy.deepcopy(output)
        if "text" in output:
            output["text"] = self._styled(_joined(output["text"]))
        for mime, value in (output.get("data") or {}).items():
            # As nbformat does: text-like values split into lines, JSON kept whole.
            if isinstance(value, str) and not mime.endswith("json") and (
                    mime.startswith("text/") or mime == "image/svg+xml"):
                output["data"][mime] = self._styled(value)
        return output

    def insert(self, index: int, cell_type: CellType, source: str) -> str:
        self.ensure_ids()
        cell = new_cell(cell_type, source)
        cell["source"] = self._styled(source)
        self._cells.insert(index - 1, cell)
        return str(cell["id"])

    def delete(self, index: int) -> None:
        del self._cells[index - 1]

    def move(self, index: int, to: int) -> None:
        self._cells.insert(to - 1, self._cells.pop(index - 1))

    def set_type(self, index: int, cell_type: CellType) -> None:
        self._cells[index - 1] = retyped(self._cells[index - 1], cell_type)

    def set_source(self, index: int, source: str) -> None:
        self._cells[index - 1]["source"] = self._styled(source)

    def snapshot(self, index: int) -> dict[str, Any]:
        return snapshot_of(self._cells[index - 1])

    def restore(self, index: int, cell: dict[str, Any]) -> None:
        whole = restored(cell)
        whole["source"] = self._styled(whole["source"])
        self._cells.insert(index - 1, whole)

    def clear_outputs(self, index: int) -> None:
        cell = self._cells[index - 1]
        if cell.get("cell_type") == "code":
            cell.update(outputs=[], execution_count=None)

    def _cell(self, cell_id: str) -> dict[str, Any] | None:
        return next((cell for cell in self._cells if cell.get("id") == cell_id), None)

    def begin_execution(self, cell_id: str) -> None:
        cell = self._cell(cell_id)
        if cell is not None:
            cell.update(outputs=[], execution_count=None)

    def change_outputs(self, cell_id: str, change: OutputChange) -> None:
        cell = self._cell(cell_id)
        if cell is None:
            return
        apply_output_change(cell.setdefault("outputs", []), change, self._styled_output)

    def end_execution(self, cell_id: str, execution_count: int | None) -> None:
        cell = self._cell(cell_id)
        if cell is not None:
            cell["execution_count"] = execution_count

    def outputs_of(self, cell_id: str) -> tuple[list[dict[str, Any]], int | None] | None:
        """A cell's outputs and execution count (None when no cell has that id)."""
        cell = self._cell(cell_id)
        if cell is None:
            return None
        return cell.get("outputs", []), cell.get("execution_count")

    def set_run_state(self, cell_id: str, outputs: Sequence[dict[str, Any]],
                      execution_count: int | None) -> bool:
        """Give a cell the outputs and count a run left in another copy; False if it is gone."""
        cell = self._cell(cell_id)
        if cell is None or cell.get("cell_type") != "code":
            return False
        cell["outputs"] = [self._styled_output(output) for output in outputs]
        cell["execution_count"] = execution_count
        return True


def apply_output_change(outputs: list[dict[str, Any]], change: OutputChange,
                        styled: Any = copy.deepcopy) -> None:
    """Apply `change` to a plain list of nbformat outputs (`styled` formats new ones)."""
    if change.kind == "clear":
        outputs.clear()
    elif change.kind == "append" and change.output is not None:
        outputs.append(styled(change.output))
    elif change.kind == "replace" and change.output is not None and change.position < len(outputs):
        outputs[change.position] = styled(change.output)
    elif change.kind == "stream" and change.position < len(outputs):
        stream = outputs[change.position]
        text = _joined(stream.get("text", "")) + change.text
        stream["text"] = styled({"text": text})["text"]
