"""Opening a notebook for a change, and the actions that change its cells (write tier).

An open notebook (real-time collaboration) is changed in its shared document, in place in
every view; a closed one is read, changed and written back in its own style, refused as
`stale_edit` if it changed on disk meanwhile. Every result names each touched cell by its
number after the call and its id, so an agent can go on after inserts and deletes.
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...files.errors import TooLarge
from ...files.order import bytes_sha256
from ...notebooks import (
    CellChange,
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
from ...notebooks.current import check_loadable
from ...notebooks.journal import ChangeKind
from ...runtime import CallContext, ErrorCode, ToolError, ToolResult
from ..notebook_errors import notebook_error
from .args import ClearOutputs, Delete, Insert, Move, Revert, SetSource, SetType

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
    return await _open(ctx, await asyncio.to_thread(ctx.run.resolve, path_arg))


@asynccontextmanager
async def changing(ctx: CallContext, path_arg: str) -> AsyncIterator[OpenedNotebook]:
    """The notebook `path_arg` names, opened for a change: from reading it to writing it, the
    block holds the file's turn in the order every run of the server shares, so no other
    run's change lands in between (and none is lost)."""
    path = await asyncio.to_thread(ctx.run.resolve, path_arg)
    async with ctx.runtime.file_locks.hold([path]):
        yield await _open(ctx, path)


async def _open(ctx: CallContext, path: Path) -> OpenedNotebook:
    runtime = ctx.runtime
    shown = ctx.run.relpath(path)
    if not is_notebook_path(path.name):
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"{shown} is not a notebook (.ipynb). Use edit or write for other "
                        "files.")
    api_path = path.relative_to(runtime.root_path).as_posix()
    shared = await open_shared_notebook(runtime.parent, api_path)
    if shared is not None:
        try:  # one answer for a notebook JupyterLab cannot load, open or not
            await check_loadable(shared, runtime.root_path, path, shown,
                                 runtime.max_notebook_bytes)
        except InvalidNotebook as exc:
            raise notebook_error(exc, doing="edit") from None
        return OpenedNotebook(path, shown, api_path, shared, None, shared.metadata())
    try:
        file = await asyncio.to_thread(read_notebook, runtime.root_path, path,
                                       runtime.max_notebook_bytes, shown=shown)
    except InvalidNotebook as exc:
        raise notebook_error(exc, doing="edit") from None
    except TooLarge as exc:
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"{shown} is over this server's limit for notebooks ({exc.limit:,} "
                        "bytes, c.Runtime.max_notebook_bytes); "
                        "nothing was changed. Clear its outputs in JupyterLab (big plots make "
                        "notebooks big), or ask the user to raise the limit.") from None
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
        file, editor = opened.file, opened.editor
        # Hashed in the thread too: a notebook can be megabytes.
        written = await asyncio.to_thread(
            lambda: bytes_sha256(write_cells(ctx.runtime.root_path, file, editor)))
    except StaleNotebook as exc:
        raise notebook_error(exc) from None
    # What the run saw of the file follows its own change (a later `write` is not stale).
    ctx.run.seen_files.changed_bytes(opened.path, opened.file.snapshot, written)
    if code_changed:
        ctx.wrote(opened.path)


def check_unchanged_since_read(ctx: CallContext, opened: OpenedNotebook, number: int, *,
                               position: bool = False) -> None:
    """stale_edit when the human or another run changed the cell (its type or source; with
    `position`, its number too) since this run last saw it."""
    ids, sources = opened.editor.ids(), opened.editor.sources()
    cell_type = opened.editor.cell_types()[number - 1]
    try:
        ctx.run.notebooks.check(opened.api_path, number, ids[number - 1], cell_type,
                                sources[number - 1], position=position)
    except CellChanged as exc:
        if exc.seen_at is not None:
            raise ToolError(ErrorCode.STALE_EDIT,
                            f"{opened.shown} [cell {number}] is not where you last read it "
                            f"(it was cell {exc.seen_at}: cells were moved, inserted or deleted "
                            "since, by the user or another agent); nothing was changed. Read "
                            "the notebook again and name the cell by its number now or its id.",
                            data={"cell": number, "id": exc.cell_id,
                                  "seen_at": exc.seen_at}) from None
        raise ToolError(ErrorCode.STALE_EDIT,
                        f"{opened.shown} [cell {number}] changed since you last read it (the "
                        "user or another agent changed its type or source); nothing was "
                        "changed. Read the cell again (read with cell) and redo the change on "
                        "what it holds now.",
                        data={"cell": number, "id": exc.cell_id}) from None


def _added_ids_note(opened: OpenedNotebook) -> str:
    if isinstance(opened.editor, FileCells) and opened.editor.ids_added:
        return (" Its cells had no ids (nbformat < 4.5): they now have ids, as JupyterLab "
                "gives them, and the file is nbformat 4.5.")
    return ""


def _changed(ctx: CallContext, opened: OpenedNotebook, what: str,
             numbers: list[int], change: CellChange | None = None, **data: Any) -> ToolResult:
    how = IN_SHARED_DOCUMENT if opened.shared else ""
    cells = opened.cell_refs(*numbers)
    ids = opened.editor.ids()
    sources = opened.editor.sources()
    types = opened.editor.cell_types()
    ctx.run.notebooks.saw(opened.api_path,
                          [(ids[n - 1], types[n - 1], sources[n - 1], n) for n in numbers])
    if change is not None:
        data["change_id"] = change.id
    return ToolResult.success(
        f"{what} in {opened.shown}{how}.{_added_ids_note(opened)}",
        {"path": opened.shown, "cells": cells, "cell_count": len(ids),
         "shared_document": opened.shared, **data})


def _record(ctx: CallContext, opened: OpenedNotebook, kind: ChangeKind, position: int,
            before: dict[str, Any] | None, after_number: int | None) -> CellChange:
    """Keep the change in the run's journal, so that it can be reverted."""
    after = opened.editor.snapshot(after_number) if after_number is not None else None
    cell_id = str((after or before or {}).get("id") or "")
    return ctx.run.notebooks.record(opened.api_path, kind, cell_id, position, before, after)


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
    ctx.run.notebooks.shifted(opened.api_path, "insert", index)
    return index


def inserted(ctx: CallContext, opened: OpenedNotebook, action: Insert, number: int) -> ToolResult:
    ref = opened.cell_refs(number)[0]
    change = _record(ctx, opened, "insert", number, None, number)
    return _changed(ctx, opened, f"Inserted a {action.cell_type} cell as {_describe(ref)}",
                    [number], change)


async def delete(ctx: CallContext, opened: OpenedNotebook, action: Delete) -> ToolResult:
    number = opened.resolve(action.cell)
    check_unchanged_since_read(ctx, opened, number, position=isinstance(action.cell, int))
    _prepare_file(opened)
    ref = opened.cell_refs(number)[0]
    before = opened.editor.snapshot(number)
    opened.editor.delete(number)
    await save(ctx, opened)
    ctx.run.notebooks.shifted(opened.api_path, "delete", number)
    if ref["id"]:
        ctx.run.notebooks.forget(opened.api_path, ref["id"])
    change = _record(ctx, opened, "delete", number, before, None)
    return _changed(ctx, opened, f"Deleted {_describe(ref)}; the cells after it moved up one",
                    [], change, deleted=ref)


async def move(ctx: CallContext, opened: OpenedNotebook, action: Move) -> ToolResult:
    number = opened.resolve(action.cell)
    count = opened.editor.cell_count
    if not 1 <= action.index <= count:
        raise notebook_error(CellOutOfRange(cell=action.index, cell_count=count,
                                            shared=opened.shared), path=opened.shown)
    # Where a cell goes is decided on where the cells were: moved by someone since, stale.
    check_unchanged_since_read(ctx, opened, number, position=True)
    _prepare_file(opened)
    before = opened.editor.snapshot(number)
    opened.editor.move(number, action.index)
    await save(ctx, opened)
    ctx.run.notebooks.shifted(opened.api_path, "move", number, action.index)
    ref = opened.cell_refs(action.index)[0]
    change = _record(ctx, opened, "move", number, before, action.index)
    return _changed(ctx, opened, f"Moved cell {number} to position {action.index}: it is "
                    f"{_describe(ref)}", [action.index], change, moved_from=number)


async def _change_in_place(ctx: CallContext, opened: OpenedNotebook, cell: CellRef,
                           kind: ChangeKind, apply: Callable[[int], None]
                           ) -> tuple[int, dict[str, Any], CellChange]:
    """Change the cell `cell` names with `apply(number)`, refused (stale_edit) when the human
    changed it since the agent saw it; its number, what it was, and the journal's change."""
    number = opened.resolve(cell)
    check_unchanged_since_read(ctx, opened, number, position=isinstance(cell, int))
    _prepare_file(opened)
    before = opened.editor.snapshot(number)
    apply(number)
    await save(ctx, opened)
    return number, before, _record(ctx, opened, kind, number, before, number)


async def set_type(ctx: CallContext, opened: OpenedNotebook, action: SetType) -> ToolResult:
    number, before, change = await _change_in_place(
        ctx, opened, action.cell, "set_type",
        lambda number: opened.editor.set_type(number, action.cell_type))
    was = before["cell_type"]
    dropped = " (its outputs are gone)" if was == "code" and action.cell_type != "code" else ""
    return _changed(ctx, opened, f"Changed {_describe(opened.cell_refs(number)[0])} from {was} "
                    f"to {action.cell_type}{dropped}", [number], change)


async def set_source(ctx: CallContext, opened: OpenedNotebook, action: SetSource) -> ToolResult:
    number, _, change = await _change_in_place(
        ctx, opened, action.cell, "set_source",
        lambda number: opened.editor.set_source(number, action.source))
    return _changed(ctx, opened, f"Replaced the source of {_describe(opened.cell_refs(number)[0])}",
                    [number], change)


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


_UNDONE = {"insert": "removed the cell it inserted", "delete": "put the deleted cell back",
           "move": "moved the cell back", "set_type": "gave the cell its type back",
           "set_source": "gave the cell its source back"}


async def revert(ctx: CallContext, action: Revert) -> ToolResult:
    """Undo one change of the agent's, if the cell still holds what the agent left; else
    stale_edit saying what changed since (a revert never overwrites the human's work)."""
    change = ctx.run.notebooks.change(action.change_id)
    if change is None:
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"This run has no change {action.change_id!r} to revert: each change "
                        "can be reverted once, and only the run's last 500 are kept. Change "
                        "the cell with set_source instead.")
    async with ctx.runtime.file_locks.hold([ctx.runtime.root_path / change.notebook]):
        return await _revert(ctx, change)


async def _revert(ctx: CallContext, change: CellChange) -> ToolResult:
    opened = await _open(ctx, ctx.runtime.root_path / change.notebook)
    _prepare_file(opened)
    number = opened.editor.number_of(change.cell_id) if change.cell_id else None
    count = opened.editor.cell_count
    if change.kind == "delete":
        assert change.before is not None
        position = min(change.position, count + 1)
        back = dict(change.before)
        if number is not None:  # the id is taken again: the cell comes back with a new one
            back.pop("id", None)
        opened.editor.restore(position, back)
        numbers = [position]
    else:
        if number is None:
            raise ToolError(ErrorCode.NOT_FOUND,
                            f"The cell of change {change.id} (id {change.cell_id}) is no longer "
                            f"in {opened.shown}; nothing was reverted.")
        if change.kind != "move":
            _check_holds(opened, change, number)
        numbers = [number]
        if change.kind == "insert":
            opened.editor.delete(number)
            numbers = []
        elif change.kind == "move":
            opened.editor.move(number, min(change.position, count))
            numbers = [min(change.position, count)]
        elif change.kind == "set_type":
            assert change.before is not None
            opened.editor.set_type(number, change.before["cell_type"])
        else:
            assert change.before is not None
            opened.editor.set_source(number, change.before["source"])
    await save(ctx, opened)
    if change.kind == "delete":
        ctx.run.notebooks.shifted(opened.api_path, "insert", numbers[0])
    elif change.kind == "insert" and number is not None:
        ctx.run.notebooks.shifted(opened.api_path, "delete", number)
    elif change.kind == "move" and number is not None:
        ctx.run.notebooks.shifted(opened.api_path, "move", number, numbers[0])
    ctx.run.notebooks.reverted(change.id)
    return _changed(ctx, opened, f"Reverted change {change.id} ({change.kind}): "
                    f"{_UNDONE[change.kind]}", numbers, reverted=change.id)


def _check_holds(opened: OpenedNotebook, change: CellChange, number: int) -> None:
    """stale_edit, saying what changed, unless cell `number` is as the change left it."""
    assert change.after is not None
    now = opened.editor.snapshot(number)
    if (now["source"], now["cell_type"]) == (change.after["source"], change.after["cell_type"]):
        return
    if now["cell_type"] != change.after["cell_type"]:
        since = f"its type is now {now['cell_type']}"
    else:
        diff = list(difflib.unified_diff(change.after["source"].splitlines(),
                                         now["source"].splitlines(), "as the agent left it",
                                         "now", lineterm="", n=1))
        since = "its source changed:\n" + "\n".join(diff[:40])
    raise ToolError(ErrorCode.STALE_EDIT,
                    f"{opened.shown} [cell {number}] changed since change {change.id}, so it "
                    f"was not reverted ({since}). Change it with set_source if it should "
                    "still change.", data={"cell": number, "id": change.cell_id})
