"""Notebooks open with real-time collaboration: changed through their shared document.

When jupyter-collaboration is installed, a notebook open in JupyterLab lives in a shared
(Y) document on the server; the file on disk is what that document last saved. A tool
that wrote the file would race the human's keystrokes and raise JupyterLab's "file
changed on disk" dialog. So a change to an open notebook goes into the shared document,
as jupyter_server_ydoc's API offers server extensions (`get_document(..., copy=False)`
on the extension it keeps in the server's settings): every connected client sees it in
place, and the collaboration server saves it as it saves any edit.

All of this runs on the server's event loop, where the shared documents live; reading a
cell and changing it happen with no await between, so no remote update comes in between.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from .document import Notebook, unloadable
from .editing import CellType, OutputChange, new_cell, restored, retyped, snapshot_of
from .errors import CellOutOfRange, InvalidNotebook

# Where jupyter_server_ydoc keeps its extension in the server's settings (its documented API).
_COLLABORATION_SETTING = "jupyter_server_ydoc"


class SharedNotebook:
    """The live shared document of an open notebook (a jupyter_ydoc YNotebook).

    Also a `CellEditor`: every change is one Y transaction, so it reaches every open view in
    place. A cell is moved or retyped as JupyterLab does it (the same cell, id included,
    put in again), so typing inside that very cell at that instant may be lost; typing in
    other cells never is.
    """

    shared = True

    def __init__(self, document: Any) -> None:
        self._document = document
        # Where each cell id was when last seen: a run's outputs find their cell there at
        # once (checked by id) instead of reading every cell of a long notebook per output.
        self._positions: dict[str, int] = {}

    def metadata(self) -> dict[str, Any]:
        """The notebook's metadata (kernelspec, language_info, ...)."""
        from pycrdt import Map

        meta = self._document.ydoc.get("meta", type=Map).to_py() or {}
        return dict(meta.get("metadata") or {})

    def unloadable(self, name: str) -> InvalidNotebook | None:
        """Why JupyterLab cannot load this notebook (its version or cell types, as the shared
        document holds them), or None. None too when the document has no version yet (not
        loaded): then its file says (`current.check_loadable`)."""
        from pycrdt import Map

        meta = self._document.ydoc.get("meta", type=Map).to_py() or {}
        if "nbformat" not in meta:
            return None
        return unloadable(meta.get("nbformat"), _int_or_none(meta.get("nbformat_minor")),
                          self.cell_types(), name=name)

    @property
    def loaded(self) -> bool:
        """Whether the document holds a notebook's version (what loading the file sets)."""
        from pycrdt import Map

        return "nbformat" in (self._document.ydoc.get("meta", type=Map).to_py() or {})

    def ids(self) -> list[str | None]:
        with self._document.ydoc.transaction():  # one read transaction for every cell
            ids = [_optional_str(cell.get("id")) for cell in self._document.ycells]
        # The first of duplicate ids wins, as a scan from the start finds it.
        self._positions = {cell_id: index for index, cell_id in reversed(list(enumerate(ids)))
                           if cell_id is not None}
        return ids

    def _position(self, cell_id: str) -> int | None:
        """The 0-based position of the cell with `cell_id` now: where it was last seen if it
        is still there (cells shift only when some are added, moved or deleted), else found
        again among all."""
        ycells = self._document.ycells
        known = self._positions.get(cell_id)
        if known is not None and known < len(ycells) and ycells[known].get("id") == cell_id:
            return known
        self.ids()
        return self._positions.get(cell_id)

    def cell_at(self, number: int) -> tuple[str | None, str]:
        ycell = self._document.ycells[number - 1]
        with self._document.ydoc.transaction():
            cell_id = _optional_str(ycell.get("id"))
            cell_type = str(ycell.get("cell_type", "code"))
        if cell_id is not None:
            self._positions[cell_id] = number - 1
        return cell_id, cell_type

    def number_of(self, cell_id: str) -> int | None:
        position = self._position(cell_id)
        return None if position is None else position + 1

    def cell_types(self) -> list[str]:
        with self._document.ydoc.transaction():
            return [str(cell.get("cell_type", "code")) for cell in self._document.ycells]

    def insert(self, index: int, cell_type: CellType, source: str) -> str:
        cell = new_cell(cell_type, source)
        with self._document.ydoc.transaction():
            self._document.ycells.insert(index - 1, self._document.create_ycell(cell))
        self._positions[str(cell["id"])] = index - 1
        return str(cell["id"])

    def delete(self, index: int) -> None:
        with self._document.ydoc.transaction():
            del self._document.ycells[index - 1]

    def move(self, index: int, to: int) -> None:
        with self._document.ydoc.transaction():
            cell = self._document.get_cell(index - 1)
            del self._document.ycells[index - 1]
            self._document.ycells.insert(to - 1, self._document.create_ycell(cell))

    def set_type(self, index: int, cell_type: CellType) -> None:
        with self._document.ydoc.transaction():
            cell = retyped(self._document.get_cell(index - 1), cell_type)
            self._document.set_ycell(index - 1, self._document.create_ycell(cell))

    def set_source(self, index: int, source: str) -> None:
        self.set_sources({index: source})

    def snapshot(self, index: int) -> dict[str, Any]:
        return snapshot_of(self._document.get_cell(index - 1))

    def restore(self, index: int, cell: dict[str, Any]) -> None:
        with self._document.ydoc.transaction():
            self._document.ycells.insert(index - 1, self._document.create_ycell(restored(cell)))

    def clear_outputs(self, index: int) -> None:
        ycell = self._document.ycells[index - 1]
        if ycell.get("cell_type") != "code":
            return
        with self._document.ydoc.transaction():
            ycell["outputs"].clear()
            ycell["execution_count"] = None

    def _ycell(self, cell_id: str) -> Any:
        position = self._position(cell_id)
        return None if position is None else self._document.ycells[position]

    def begin_execution(self, cell_id: str) -> None:
        ycell = self._ycell(cell_id)
        if ycell is None:
            return
        with self._document.ydoc.transaction():
            ycell["outputs"].clear()
            ycell["execution_count"] = None
            ycell["execution_state"] = "running"

    def change_outputs(self, cell_id: str, change: OutputChange) -> None:
        ycell = self._ycell(cell_id)
        if ycell is None:
            return
        from pycrdt import Text  # installed with jupyter-collaboration, as shared documents are

        youtputs = ycell["outputs"]
        with self._document.ydoc.transaction():
            if change.kind == "clear":
                youtputs.clear()
            elif change.kind == "append" and change.output is not None:
                youtputs.append(_youtput(change.output))
            elif change.kind == "replace" and change.output is not None:
                if change.position < len(youtputs):
                    youtputs[change.position] = _youtput(change.output)
            elif change.kind == "stream" and change.position < len(youtputs):
                stream = youtputs[change.position]
                text = stream.get("text")
                if isinstance(text, Text):
                    text += change.text
                else:  # a stream some client stored as a plain string
                    youtputs[change.position] = _youtput(
                        {**stream.to_py(), "text": f"{text or ''}{change.text}"})

    def end_execution(self, cell_id: str, execution_count: int | None) -> None:
        ycell = self._ycell(cell_id)
        if ycell is None:
            return
        with self._document.ydoc.transaction():
            ycell["execution_count"] = execution_count
            ycell["execution_state"] = "idle"

    @property
    def cell_count(self) -> int:
        return len(self._document.ycells)

    def sources(self) -> list[str]:
        """Every cell's source as the shared document holds it now."""
        with self._document.ydoc.transaction():
            return [str(cell["source"]) for cell in self._document.ycells]

    def source(self, number: int) -> str:
        return str(self._document.ycells[number - 1]["source"])

    def cells_content(self) -> dict[str, Any]:
        """The notebook as the shared document holds it now (nbformat 4, as a dict) without
        its outputs and attachments: what the tools that read code take (search, language
        servers), converted from the document in a fraction of `content`'s time."""
        from pycrdt import Map

        meta = self._document.ydoc.get("meta", type=Map).to_py() or {}
        nbformat, minor = _int_or_none(meta.get("nbformat")), _int_or_none(
            meta.get("nbformat_minor"))
        cells = []
        with self._document.ydoc.transaction():
            for ycell in self._document.ycells:
                metadata = ycell.get("metadata")
                cell: dict[str, Any] = {
                    "cell_type": str(ycell.get("cell_type", "code")),
                    "metadata": metadata.to_py() if isinstance(metadata, Map)
                    else dict(metadata or {}),
                    "source": str(ycell.get("source", "")),
                }
                if ycell.get("id") is not None and not (nbformat == 4 and (minor or 0) <= 4):
                    cell["id"] = str(ycell.get("id"))
                if cell["cell_type"] == "code":
                    cell["execution_count"] = _int_or_none(ycell.get("execution_count"))
                    cell["outputs"] = []
                cells.append(cell)
        return {"cells": cells, "metadata": dict(meta.get("metadata") or {}),
                "nbformat": nbformat or 0, "nbformat_minor": minor or 0}

    def content(self) -> dict[str, Any]:
        """The notebook as the shared document holds it now (nbformat 4, as a dict)."""
        return self._document.get()

    def set_content(self, notebook: dict[str, Any]) -> None:
        """Make the shared document hold `notebook` (valid nbformat 4, sources as strings).

        jupyter_ydoc updates cells it recognises by id in place and replaces the others.
        """
        self._document.set(notebook)

    def replace(self, cell: int, spans: Iterable[tuple[int, int]], new_text: str) -> None:
        """Replace each (start, end) character span of a cell's source, in one transaction.

        Only the replaced characters change, so a human typing elsewhere in the same cell
        keeps their text and cursor.
        """
        if not 1 <= cell <= self.cell_count:
            raise CellOutOfRange(cell=cell, cell_count=self.cell_count, shared=True)
        text = self._document.ycells[cell - 1]["source"]
        source = str(text)
        with self._document.ydoc.transaction():
            for start, end in sorted(spans, reverse=True):
                # Y text positions are UTF-8 byte offsets.
                begin = len(source[:start].encode("utf-8"))
                length = len(source[start:end].encode("utf-8"))
                del text[begin:begin + length]
                text.insert(begin, new_text)

    def holds(self, sources: Mapping[int, str]) -> bool:
        """Whether each cell numbered in `sources` is there and holds that source now."""
        current = self.sources()
        return all(1 <= cell <= len(current) and current[cell - 1] == source
                   for cell, source in sources.items())

    def set_sources(self, sources: Mapping[int, str]) -> None:
        """Give cells new sources in one transaction; in each, only the characters between
        the common start and end of its old and new source change (a human typing elsewhere
        in it keeps their text)."""
        with self._document.ydoc.transaction():
            for cell, new in sources.items():
                old = self.sources()[cell - 1]
                start = _common_prefix(old, new)
                end = _common_prefix(old[start:][::-1], new[start:][::-1])
                self.replace(cell, [(start, len(old) - end)], new[start:len(new) - end])


class SharedChange:
    """A tool's change to cells of an open notebook: each cell's source before and after.

    A rewrite computed on the notebook (ast_edit, lsp_rename) is applied here when its
    notebook is open: `stale` when a cell it changes no longer holds what it was computed
    on (typing in other cells is no conflict); `undo` puts the cells back when the rest of
    an all-or-nothing change fails.
    """

    def __init__(self, notebook: SharedNotebook, cells: Mapping[int, tuple[str, str]]) -> None:
        self.notebook = notebook
        self.before = {cell: sources[0] for cell, sources in cells.items()}
        self.after = {cell: sources[1] for cell, sources in cells.items()}

    @property
    def stale(self) -> bool:
        return not self.notebook.holds(self.before)

    def apply(self) -> None:
        self.notebook.set_sources(self.after)

    def undo(self) -> None:
        if self.notebook.holds(self.after):
            self.notebook.set_sources(self.before)


class SharedRewrite:
    """A tool's change to a whole open notebook (apply_patch): computed on the file, so it
    is `stale` when the shared document's cells differ from the file's (the human's unsaved
    typing would be lost); applied cell by cell (by id) in place."""

    def __init__(self, notebook: SharedNotebook, before: Notebook, after: Notebook) -> None:
        self.notebook = notebook
        self.before = before
        self.after = after

    @property
    def stale(self) -> bool:
        return self.notebook.sources() != [cell.source for cell in self.before.cells]

    def apply(self) -> None:
        self.notebook.set_content(self.after.as_nbformat())

    def undo(self) -> None:
        self.notebook.set_content(self.before.as_nbformat())


async def open_shared_changes(server: Any, root: Path,
                              cells: Mapping[Path, Mapping[int, tuple[str, str]]]
                              ) -> dict[Path, SharedChange]:
    """The changes of `cells` (by notebook path under `root`) to notebooks open with
    real-time collaboration; the others are not there (written as files)."""
    opened = {}
    for path, changed in cells.items():
        notebook = await open_shared_notebook(server, path.relative_to(root).as_posix())
        if notebook is not None:
            opened[path] = SharedChange(notebook, changed)
    return opened


Written = TypeVar("Written")


async def write_with_open_notebooks(open_changes: Iterable[SharedChange | SharedRewrite],
                                    write_files: Callable[[], Written]) -> Written:
    """Change the open notebooks, then run `write_files` (the other files' writes) on a
    thread: all or nothing, the notebooks are put back if the files cannot be written.

    Check `stale` before: with no await between the check and the change, no remote update
    comes in between.
    """
    applied = list(open_changes)
    for change in applied:
        change.apply()
    try:
        return await asyncio.to_thread(write_files)
    except BaseException:
        for change in applied:
            change.undo()
        raise


def _int_or_none(value: Any) -> int | None:
    """A version number as the shared document holds it (a float after a Y round trip)."""
    return int(value) if isinstance(value, (int, float)) else None


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _youtput(output: dict[str, Any]) -> Any:
    """An output as the shared document holds it: a stream's text as Y text (it grows)."""
    from pycrdt import Map, Text

    if output.get("output_type") == "stream":
        return Map({**output, "text": Text(str(output.get("text", "")))})
    return Map(output)


def _common_prefix(first: str, second: str) -> int:
    """How many characters `first` and `second` share from their start."""
    return next((index for index, (a, b) in enumerate(zip(first, second, strict=False))
                 if a != b), min(len(first), len(second)))


async def open_shared_notebook(server: Any, path: str) -> SharedNotebook | None:
    """The shared document of the notebook at `path` (relative to the server root) when it
    is open with real-time collaboration; None when it is not, or RTC is not installed."""
    web_app = getattr(server, "web_app", None)
    settings = getattr(web_app, "settings", {})
    collaboration = settings.get(_COLLABORATION_SETTING)
    if collaboration is None or "file_id_manager" not in settings:  # RTC not running here
        return None
    # create=False: a notebook nobody has open has no room, and gets none from us.
    document = await collaboration.get_document(path=path, content_type="notebook",
                                                file_format="json", copy=False)
    return SharedNotebook(document) if document is not None else None
