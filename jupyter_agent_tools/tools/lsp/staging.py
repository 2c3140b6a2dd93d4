"""A language server's WorkspaceEdit as staged changes (the run's edit store, as `ast_edit`
stages): each file's new bytes with the hash and identity of what they were computed on; a
notebook's only in its cells' sources. Used by `lsp code_actions` and, under review, by
`lsp_rename`."""

from __future__ import annotations

import asyncio
import difflib
import os
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from ...files import identity_inside, read_bytes_inside
from ...files.text import ENCODING_NAMES, DecodedText
from ...lsp.positions import char_index
from ...lsp.session import LspSession, SourceDocument
from ...lsp.workspace_edit import PlannedEdit, plan_workspace_edit
from ...notebooks import DocumentEdit, NotebookError, is_notebook_path
from ...runtime import ErrorCode, ToolError, ToolResult
from ...structural.edits import ABSENT, FileChange, content_hash, unified_diff
from ...structural.session import StructuralSession
from ..structural import staged_edit_answer


def split_notebook_edits(session: LspSession, edit: types.WorkspaceEdit,
                          notebooks: dict[Path, SourceDocument]
                          ) -> tuple[types.WorkspaceEdit, list[tuple[SourceDocument, list[Any]]]]:
    """The part of `edit` for files, and the text edits of each notebook's virtual document
    (blocking: looks at files)."""
    cells: dict[Path, list[Any]] = {}

    def notebook(uri: str) -> Path | None:
        path = Path(to_fs_path(uri) or uri)
        if path in notebooks:
            return path
        other = session.notebook_of(path)
        if other is not None:  # seen by the server earlier, outside what was opened now
            raise ToolError(ErrorCode.UNAVAILABLE, f"The edit reaches "
                            f"{session.run.relpath(other.path)}, outside the language server's "
                            "project; no file was changed.")
        return None

    def read_by_the_server(uri: str) -> bool:
        """An edit of a notebook's file that the server read itself (basedpyright's
        `analysis.ipynb#2`): the same edit as in the virtual document opened, in the file's
        JSON. Never applied."""
        return is_notebook_path(Path(to_fs_path(uri) or uri).name)

    kept: list[Any] = []
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit) and read_by_the_server(
                change.text_document.uri):
            continue
        if isinstance(change, types.TextDocumentEdit) and (
                path := notebook(change.text_document.uri)):
            cells.setdefault(path, []).extend(change.edits)
        elif not isinstance(change, types.TextDocumentEdit) and any(
                notebook(uri) for uri in [getattr(change, name, "") for name in
                                          ("uri", "old_uri", "new_uri")] if uri):
            raise ToolError(ErrorCode.UNAVAILABLE, "The server's edit creates, moves or "
                            "deletes a notebook's cells as a file; no file was changed.")
        else:
            kept.append(change)
    changes = {}
    for uri, edits in (edit.changes or {}).items():
        if read_by_the_server(uri):
            continue
        if path := notebook(uri):
            cells.setdefault(path, []).extend(edits)
        else:
            changes[uri] = edits
    files_edit = types.WorkspaceEdit(changes=changes or None, document_changes=kept or None)
    return files_edit, [(notebooks[path], edits) for path, edits in cells.items()]


def plan_cells(session: LspSession, plan: PlannedEdit, document: SourceDocument,
                edits: list[Any], changed_cells: dict[Path, dict[int, tuple[str, str]]]) -> str:
    """Add a notebook's new bytes (its cells' new sources, nothing else changed) to `plan`,
    and each changed cell's source before and after to `changed_cells`; its diff, cell by
    cell."""
    assert document.notebook is not None and document.file is not None
    lines = document.lines

    def place(position: types.Position) -> tuple[int, int]:
        text = lines[position.line] if position.line < len(lines) else ""
        return position.line, char_index(text, position.character)

    try:
        sources = document.notebook.cell_sources(
            DocumentEdit(place(e.range.start), place(e.range.end), e.new_text) for e in edits)
    except NotebookError as exc:
        raise ToolError(ErrorCode.UNAVAILABLE, f"Cannot change "
                        f"{session.run.relpath(document.path)}: {exc} No file was changed.") from None
    plan.changes[document.path] = document.file.notebook.with_sources(sources).decode("utf-8")
    changed_cells[document.path] = {cell: (document.notebook.sources[cell], source)
                                    for cell, source in sources.items()}
    plan.edit_counts[document.path] = len(edits)
    rel = session.run.relpath(document.path)
    return "".join(
        "".join(difflib.unified_diff(
            document.notebook.sources[cell].splitlines(keepends=True),
            source.splitlines(keepends=True), f"a/{rel} [cell {cell}]", f"b/{rel} [cell {cell}]"))
        for cell, source in sorted(sources.items()))


def remove_made_while_running(session: LspSession, changes: list[FileChange],
                               started: int) -> None:
    """typescript-language-server creates the files a refactoring moves code to, empty,
    before it sends the edit: nothing is on disk before resolve accepts, so each is removed
    again (if it is still that empty file) and staged as a file the edit creates."""
    root = session.run.runtime.root_path
    empty = content_hash(b"")
    for change in changes:
        if change.snapshot != empty or change.identity is None:
            continue
        try:
            made = os.lstat(change.path)
        except OSError:
            continue
        if (made.st_size == 0 and made.st_ctime_ns >= started
                and identity_inside(root, change.path) == change.identity):
            os.unlink(change.path)
            change.snapshot, change.identity = ABSENT, None


def changes_of(session: LspSession, edit: types.WorkspaceEdit,
                notebooks: dict[Path, SourceDocument]) -> list[FileChange]:
    """`edit` as the staged changes of its files (blocking: reads them), each with the hash
    and identity of what it was computed on; a notebook's only in its cells' sources."""
    runtime = session.run.runtime
    root = runtime.root_path
    relpath = session.run.relpath
    files_edit, cells = split_notebook_edits(session, edit, notebooks)
    read: dict[Path, tuple[bytes, str, Any]] = {}

    def text_of(path: Path) -> str:
        identity = identity_inside(root, path)
        data = read_bytes_inside(root, path, runtime.max_read_bytes, shown=relpath(path))
        decoded = DecodedText.of(data)
        read[path] = (data, decoded.encoding, identity)
        return decoded.text

    plan = plan_workspace_edit(files_edit, session.contained, relpath, text_of)
    changed_cells: dict[Path, dict[int, tuple[str, str]]] = {}
    cell_diffs = {document.path: plan_cells(session, plan, document, edits, changed_cells)
                  for document, edits in cells}
    by_path = {document.path: document for document in notebooks.values()}
    changes = []
    for path, new in plan.changes.items():
        rel, count = relpath(path), plan.edit_counts.get(path, 0)
        if new is None:
            raise ToolError(ErrorCode.UNAVAILABLE, f"The action deletes or moves {rel}; staged "
                            "edits change and create files only. Nothing was staged; make "
                            "that change with bash.")
        if path in changed_cells:
            file = by_path[path].file
            assert file is not None
            changes.append(FileChange(path, rel, file.snapshot, new.encode("utf-8"), count,
                                      cell_diffs[path], file.identity, changed_cells[path],
                                      upgraded_from=file.notebook.upgraded_from))
        elif path in read:
            data, encoding, identity = read[path]
            try:
                after = new.encode(encoding)
            except UnicodeEncodeError:
                raise ToolError(ErrorCode.FAILED, f"{rel} is {ENCODING_NAMES[encoding]} text "
                                "and the action puts characters there it cannot hold; nothing "
                                "was staged.") from None
            changes.append(FileChange(path, rel, content_hash(data), after, count,
                                      unified_diff(rel, data, after, encoding), identity))
        else:  # a file the action creates
            after = new.encode("utf-8")
            changes.append(FileChange(path, rel, ABSENT, after, count,
                                      unified_diff(rel, b"", after), None))
    return changes


async def stage_changes(session: LspSession, store: StructuralSession, edit: types.WorkspaceEdit,
                        notebooks: dict[Path, SourceDocument], pattern: str, title: str,
                        language: str, note: str = "") -> ToolResult | None:
    """Stage `edit` in the run's edit store and answer as ast_edit does (None: it changes
    nothing)."""
    changes = await asyncio.to_thread(changes_of, session, edit, notebooks)
    return staged_answer(store, changes, pattern, title, language, note) if changes else None


def staged_answer(store: StructuralSession, changes: list[FileChange], pattern: str, title: str,
                  language: str, note: str = "") -> ToolResult:
    """Keep `changes` as one staged edit; the answer carries its edit_id and diff."""
    edit = store.stage_changes(pattern, title, language, changes, origin="lsp")
    return staged_edit_answer(
        edit, f"{title} [{pattern}]: {edit.replacements} edit(s) in {len(edit.counts())} file(s)",
        {"action": title, "edits": edit.replacements}, f"\n[{note}]" if note else "")
