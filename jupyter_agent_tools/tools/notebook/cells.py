"""Opening a notebook for a change, and the actions that change its cells (write tier).

An open notebook (real-time collaboration) is changed in its shared document, in place in
every view; a closed one is read, changed and written back in its own style, refused as
`stale_edit` if it changed on disk meanwhile. Every result names each touched cell by its
number after the call and its id, so an agent can go on after inserts and deletes.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...notebooks import (
    CellChanged,
    CellEditor,
    CellOutOfRange,
    CellRef,
    FileCells,
    InvalidNotebook,
    NotebookError,
    NotebookFile,
    StaleNotebook,
    is_notebook_path,
    open_shared_notebook,
    read_notebook,
    resolve_cell,
    write_cells,
)
from ...runtime import CallContext, ErrorCode, ToolError, ToolResult
from ..notebook_errors import notebook_error
from .args import ClearOutputs, Delete, Insert, Move, SetSource, SetType

IN_SHARED_DOCUMENT = " (in the open notebook's shared document: the change shows in place)"


@dataclass
class OpenedNotebook:
    """A notebook being changed: its shared document when open, else its parsed file."""

    path: Path
    shown: str  # as results name it (relative to the run's cwd)
    api_path: str  # relative to the server root, as Jupyter names it
    editor: CellEditor
    file: NotebookFile | None  # closed: what was read, checked unchanged when written
    metadata: dict[str, Any]

    @property
    def shared(self) -> bool:
        return self.file is None

    @property
    def kernel_name(self) -> str | None:
        spec = self.metadata.get("kernelspec") or {}
        return str(spec["name"]) if spec.get("name") else None

    def cell_refs(self, *numbers: int) -> list[dict[str, Any]]:
        """`[{cell, id}]` for the cells numbered `numbers` now."""
        ids = self.editor.ids()
        return [{"cell": number, "id": ids[number - 1]} for number in numbers]

    def resolve(self, ref: CellRef) -> int:
        try:
            return resolve_cell(self.editor, ref)
        except NotebookError as exc:
            raise notebook_error(exc, path=self.shown) from None


async def open_notebook(ctx: CallContext, path_arg: str) -> OpenedNotebook:
    """The notebook `path_arg` names, through its shared document when it is open."""
    runtime = ctx.runtime
    path = await asyncio.to_thread(ctx.run.resolve, path_arg)
    shown = ctx.run.relpath(path)
    if not is_notebook_path(path.name):
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"{shown} is not a notebook (.ipynb). Use edit or write for other "
                        "files.")
    api_path = path.relative_to(runtime.root_path).as_posix()
    shared = await open_shared_notebook(runtime.parent, api_path)
    if shared is not None:
        return OpenedNotebook(path, shown, api_path, shared, None, shared.metadata())
    try:
        file = await asyncio.to_thread(read_notebook, runtime.root_path, path,
                                       runtime.max_notebook_bytes, shown=shown)
    except InvalidNotebook as exc:
        raise notebook_error(exc, doing="edit") from None
    editor = FileCells(file.notebook)
    return OpenedNotebook(path, shown, api_path, editor, file,
                          dict(file.notebook.data.get("metadata") or {}))


async def save(ctx: CallContext, opened: OpenedNotebook, *, code_changed: bool = True) -> None:
    """Write a closed notebook's changed cells (an open one's collaboration server saves
    it). Refused, nothing written, when the file changed or the notebook was opened in
    JupyterLab meanwhile: a disk write must never land under an open document.
    `code_changed`: whether the language servers' diagnostics should look again."""
    if opened.file is None:
        return
    assert isinstance(opened.editor, FileCells)
    if await open_shared_notebook(ctx.runtime.parent, opened.api_path) is not None:
        raise ToolError(ErrorCode.STALE_EDIT,
                        f"{opened.shown} was opened in JupyterLab while the change was made; "
                        "nothing was written. Call again: the change then goes through the "
                        "open notebook.")
    try:
        await asyncio.to_thread(write_cells, ctx.runtime.root_path, opened.file, opened.editor)
    except StaleNotebook as exc:
        raise notebook_error(exc) from None
    if code_changed:
        ctx.wrote(opened.path)


def check_unchanged_since_read(ctx: CallContext, opened: OpenedNotebook, number: int) -> None:
    """stale_edit when the human changed the cell since the agent last saw it."""
    ids, sources = opened.editor.ids(), opened.editor.sources()
    try:
        ctx.run.seen_cells.check(opened.api_path, number, ids[number - 1], sources[number - 1])
    except CellChanged as exc:
        raise ToolError(ErrorCode.STALE_EDIT,
                        f"{opened.shown} [cell {number}] changed since you last read it (the "
                        "user may be editing it); nothing was changed. Read the cell again "
                        "(read with cell) and redo the change on what it holds now.",
                        data={"cell": number, "id": exc.cell_id}) from None


def _added_ids_note(opened: OpenedNotebook) -> str:
    if isinstance(opened.editor, FileCells) and opened.editor.ids_added:
        return (" Its cells had no ids (nbformat < 4.5): they now have ids, as JupyterLab "
                "gives them, and the file is nbformat 4.5.")
    return ""


def _changed(ctx: CallContext, opened: OpenedNotebook, what: str,
             numbers: list[int], **data: Any) -> ToolResult:
    how = IN_SHARED_DOCUMENT if opened.shared else ""
    cells = opened.cell_refs(*numbers)
    ids = opened.editor.ids()
    sources = opened.editor.sources()
    ctx.run.seen_cells.saw(opened.api_path, [(ids[n - 1], sources[n - 1]) for n in numbers])
    return ToolResult.success(
        f"{what} in {opened.shown}{how}.{_added_ids_note(opened)}",
        {"path": opened.shown, "cells": cells, "cell_count": len(ids),
         "shared_document": opened.shared, **data})


def _describe(ref: dict[str, Any]) -> str:
    return f"cell {ref['cell']} (id {ref['id']})" if ref["id"] else f"cell {ref['cell']}"


def _prepare_file(opened: OpenedNotebook) -> None:
    """A closed notebook's cells get ids before any change, as JupyterLab gives them."""
    if isinstance(opened.editor, FileCells):
        opened.editor.ensure_ids()


async def insert(ctx: CallContext, opened: OpenedNotebook, action: Insert) -> int:
    """Insert the new cell; its number. Saved at once (a run that follows finds it)."""
    _prepare_file(opened)
    count = opened.editor.cell_count
    if action.cell is not None:
        index = opened.resolve(action.cell) + 1
    else:
        index = action.index or count + 1
        if index > count + 1:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"index {index} is past the end of {opened.shown}: it has {count} "
                            f"cell{'' if count == 1 else 's'}, so a new cell can take positions "
                            f"1 to {count + 1}. Leave index out to add it at the end.",
                            data={"cell_count": count})
    opened.editor.insert(index, action.cell_type, action.source)
    await save(ctx, opened)
    return index


def inserted(ctx: CallContext, opened: OpenedNotebook, action: Insert, number: int) -> ToolResult:
    ref = opened.cell_refs(number)[0]
    return _changed(ctx, opened, f"Inserted a {action.cell_type} cell as {_describe(ref)}",
                    [number])


async def delete(ctx: CallContext, opened: OpenedNotebook, action: Delete) -> ToolResult:
    number = opened.resolve(action.cell)
    check_unchanged_since_read(ctx, opened, number)
    _prepare_file(opened)
    ref = opened.cell_refs(number)[0]
    opened.editor.delete(number)
    await save(ctx, opened)
    if ref["id"]:
        ctx.run.seen_cells.forget(opened.api_path, ref["id"])
    return _changed(ctx, opened, f"Deleted {_describe(ref)}; the cells after it moved up one",
                    [], deleted=ref)


async def move(ctx: CallContext, opened: OpenedNotebook, action: Move) -> ToolResult:
    number = opened.resolve(action.cell)
    count = opened.editor.cell_count
    if not 1 <= action.index <= count:
        raise notebook_error(CellOutOfRange(cell=action.index, cell_count=count,
                                            shared=opened.shared), path=opened.shown)
    _prepare_file(opened)
    opened.editor.move(number, action.index)
    await save(ctx, opened)
    ref = opened.cell_refs(action.index)[0]
    return _changed(ctx, opened, f"Moved cell {number} to position {action.index}: it is "
                    f"{_describe(ref)}", [action.index], moved_from=number)


async def set_type(ctx: CallContext, opened: OpenedNotebook, action: SetType) -> ToolResult:
    number = opened.resolve(action.cell)
    check_unchanged_since_read(ctx, opened, number)
    _prepare_file(opened)
    before = opened.editor.cell_types()[number - 1]
    opened.editor.set_type(number, action.cell_type)
    await save(ctx, opened)
    ref = opened.cell_refs(number)[0]
    dropped = " (its outputs are gone)" if before == "code" and action.cell_type != "code" else ""
    return _changed(ctx, opened, f"Changed {_describe(ref)} from {before} to "
                    f"{action.cell_type}{dropped}", [number])


async def set_source(ctx: CallContext, opened: OpenedNotebook, action: SetSource) -> ToolResult:
    number = opened.resolve(action.cell)
    check_unchanged_since_read(ctx, opened, number)
    _prepare_file(opened)
    opened.editor.set_source(number, action.source)
    await save(ctx, opened)
    ref = opened.cell_refs(number)[0]
    return _changed(ctx, opened, f"Replaced the source of {_describe(ref)}", [number])


async def clear_outputs(ctx: CallContext, opened: OpenedNotebook,
                        action: ClearOutputs) -> ToolResult:
    types = opened.editor.cell_types()
    if action.cell is not None:
        numbers = [opened.resolve(action.cell)]
    else:
        numbers = [n for n, cell_type in enumerate(types, 1) if cell_type == "code"]
    _prepare_file(opened)
    for number in numbers:
        opened.editor.clear_outputs(number)
    await save(ctx, opened)
    what = (f"Cleared the outputs of {_describe(opened.cell_refs(numbers[0])[0])}"
            if action.cell is not None else f"Cleared the outputs of {len(numbers)} code cells")
    return _changed(ctx, opened, what, numbers)
