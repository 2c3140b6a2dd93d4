"""What `lsp_rename` does: check the new name, ask the server, and apply its edit inside the
root, every file or none."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from ...files import (
    DecodedText,
    FilesError,
    NotText,
    is_text,
    read_bytes_inside,
    write_files_atomically,
)
from ...files.order import bytes_sha256
from ...lsp.errors import LspError, LspRequestError, ServerUnavailable
from ...lsp.languages import LANGUAGES
from ...lsp.server import LanguageServer
from ...lsp.session import LspSession, SourceDocument
from ...lsp.workspace_edit import PlannedEdit, plan_workspace_edit
from ...notebooks import (
    NotebookError,
    StaleNotebook,
    check_unchanged,
    open_shared_changes,
    write_with_open_notebooks,
)
from ...runtime import CallContext, ErrorCode, Resource, ToolError, ToolResult
from ..notebook_errors import notebook_error
from .args import LspRenameArgs
from .errors import failure_text, request_failure
from .places import (
    check_cell,
    navigation_request,
    read_every_source,
    supports,
    symbol_position,
    with_note,
)
from .staging import plan_cells, split_notebook_edits, stage_changes


async def rename(session: LspSession, ctx: CallContext, args: LspRenameArgs) -> ToolResult:
    """Check the new name, prepareRename, rename, then apply the WorkspaceEdit atomically
    inside the root: every file changes, or the call is an error saying why none did."""
    target = session.run.resolve(args.file)
    check_cell(session, target, args.cell, "rename", needs_cell=True)
    # Checked before any server starts.
    _check_new_name(await session.navigation_server(target), target, args)
    _, source, server, position, note = await symbol_position(session, args, "rename")
    supports(server, "rename_provider", "rename")
    document = types.TextDocumentIdentifier(from_fs_path(str(source.served)))
    provider = server.capabilities.rename_provider if server.capabilities else None
    if isinstance(provider, types.RenameOptions) and provider.prepare_provider:
        prepared = await _ask_rename(server, types.TEXT_DOCUMENT_PREPARE_RENAME,
                                     types.PrepareRenameParams(document, position), args)
        if prepared is None:
            raise ToolError(ErrorCode.SYMBOL_NOT_FOUND,
                            f"{args.symbol!r} on line {args.line} cannot be renamed: "
                            f"{server.spec.name} sees no symbol there that the project owns (a "
                            "builtin's or a library's name, or no name at all). No file was "
                            "changed; point at a name the project defines, or at its definition.")
    await _refuse_outside_definitions(session, server, source.served, position, args)
    if server.spec.open_project_sources:
        await _open_every_source(session, server, args)
    notebooks, unreadable = await _open_every_notebook(session, server, args)
    if unreadable:
        note = "; ".join(filter(None, [note, "not valid notebooks, left unchanged: "
                                       + ", ".join(unreadable)]))
    if source.notebook is not None:
        notebooks[source.served] = source
    edit = await _ask_rename(server, types.TEXT_DOCUMENT_RENAME, types.RenameParams(
        text_document=document, position=position, new_name=args.new_name), args)
    if edit is None:
        raise ToolError(ErrorCode.SYMBOL_NOT_FOUND,
                        f"Renaming {args.symbol!r} changes nothing: {server.spec.name} returned no "
                        "edit (it sees no renameable symbol there). Check the line and symbol "
                        "with read, or point at the definition.")

    store = ctx.run.resources.get(Resource.PARSER)
    if ctx.run.approvals == "ask" and store is not None:
        # The run wants changes reviewed: staged as ast_edit stages, written by resolve.
        language = server.spec.language_id(source.served) or server.spec.name
        staged = await stage_changes(session, store, edit, notebooks,
                                     f"lsp_rename ({server.spec.name})",
                                     f"{args.symbol} -> {args.new_name}", language, note)
        if staged is None:
            raise ToolError(ErrorCode.SYMBOL_NOT_FOUND,
                            f"Renaming {args.symbol!r} to {args.new_name!r} changes nothing: "
                            f"{server.spec.name}'s edit leaves every file as it is. No edit was "
                            "staged.")
        return staged

    changed_cells: dict[Path, dict[int, tuple[str, str]]] = {}
    # The bytes each file's change was computed on: written only over those (stale_edit else).
    based_on: dict[Path, str | None] = {}

    def read_text(path: Path) -> str:
        runtime = session.run.runtime
        shown = session.run.relpath(path)
        data = read_bytes_inside(runtime.root_path, path, runtime.max_read_bytes, shown=shown)
        if not is_text(data):
            raise NotText(shown)
        based_on[path] = bytes_sha256(data)
        return DecodedText.of(data).text

    def plan_now() -> tuple[PlannedEdit, str]:
        files_edit, cells = split_notebook_edits(session, edit, notebooks)
        plan = plan_workspace_edit(files_edit, session.contained, session.run.relpath,
                                   read_text)
        diff = plan.diff(session.run.relpath)
        for document, edits in cells:
            diff += plan_cells(session, plan, document, edits, changed_cells)
        return plan, diff

    plan, diff = await asyncio.to_thread(plan_now)
    if not plan.changes:
        raise ToolError(ErrorCode.SYMBOL_NOT_FOUND,
                        f"Renaming {args.symbol!r} to {args.new_name!r} changes nothing: "
                        f"{server.spec.name}'s edit leaves every file as it is (a name it does "
                        "not own, e.g. a builtin or a library's). No file was changed.")
    expected = {d.path: d.file.identity for d in notebooks.values() if d.file is not None}
    root = session.run.runtime.root_path
    based_on.update({d.path: d.file.snapshot for d in notebooks.values() if d.file is not None})

    async def apply_now() -> tuple[list[Path], set[Path]]:
        """The files created, and those written on disk."""
        # A notebook open with real-time collaboration changes in its shared document: its
        # clients see the rename in place, and the collaboration server saves it.
        shared = await open_shared_changes(session.run.runtime.parent, root, changed_cells)
        on_disk = {path: content for path, content in plan.changes.items()
                   if path not in shared}

        def write_now() -> list[Path]:
            for document in notebooks.values():  # saved meanwhile: nothing is written
                if document.path in on_disk and document.file is not None:
                    check_unchanged(root, document.file)
            return write_files_atomically(
                on_disk, root=root, expected=expected, relpath=session.run.relpath,
                based_on={path: base for path, base in based_on.items() if path in on_disk})

        # Open notebooks are checked and changed with no await between; put back if the
        # files cannot be written (all or nothing).
        for path, change in shared.items():
            if change.stale:
                raise notebook_error(StaleNotebook(session.run.relpath(path)))
        try:
            return await write_with_open_notebooks(shared.values(), write_now), set(on_disk)
        except NotebookError as exc:
            raise notebook_error(exc) from None

    # In each file's order across every run: a file another run changed since the plan read
    # it is refused (stale_edit), never overwritten.
    async with session.run.runtime.file_locks.hold(plan.changes):
        created, on_disk = await apply_now()
    ctx.wrote(*plan.changes, created=created)
    upgraded = [session.run.relpath(d.path) for d in notebooks.values()
                if d.path in on_disk and d.file is not None and d.file.notebook.upgraded_from]
    if upgraded:
        note = "; ".join(filter(None, [note, "old notebooks (nbformat 3) saved as nbformat 4.5, "
                                       "as JupyterLab saves them: " + ", ".join(upgraded)]))
    files = [{"path": session.run.relpath(p), "edits": plan.edit_counts.get(p, 0),
              "deleted": content is None} for p, content in plan.changes.items()]
    total = sum(plan.edit_counts.get(p, 0) for p in plan.changes)
    listing = "\n".join(f"  {f['path']}: {f['edits']} edit(s)" for f in files)
    text = with_note(f"Renamed {args.symbol!r} to {args.new_name!r}: {total} edit(s) in "
                      f"{len(files)} file(s):\n{listing}", note)
    return ToolResult.success(text, {"files": files, "edits": total, "diff": diff},
                              blocks=[{"type": "text", "text": text}, {"type": "diff", "diff": diff}])


async def _open_every_notebook(session: LspSession, server: LanguageServer, args: LspRenameArgs
                               ) -> tuple[dict[Path, SourceDocument], list[str]]:
    """A server renames only in what it sees: the notebooks of its language under its root
    are opened first, by their virtual documents' names. Also: those that are not valid
    notebooks (left as they are)."""
    paths = await session.notebooks_served_by(server)
    if paths is None:
        raise ToolError(ErrorCode.UNAVAILABLE, f"Cannot rename {args.symbol!r} completely: "
                        f"{session.run.relpath(server.root)} holds more than "
                        f"{session.limits.max_project_sources} notebooks to open. No file "
                        "was changed; raise LanguageServerSupervisor.max_project_sources.")
    opened, unreadable = {}, []
    for path in paths:
        try:
            document = await asyncio.to_thread(session.document_now, path)
        except (FilesError, LspError):  # not a notebook it can parse: nothing in it can be renamed
            unreadable.append(session.run.relpath(path))
            continue
        if server.spec.serves(document.served):
            opened[document.served] = await session.open_document(server, path)
    return opened, unreadable


def _check_new_name(server: LanguageServer, path: Path, args: LspRenameArgs) -> None:
    """A name the file's language accepts, and a different one: else nothing is asked."""
    if args.new_name == args.symbol:
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"new_name is {args.symbol!r}'s current name: the rename would change "
                        "nothing. Pass the name you want instead.")
    language = LANGUAGES.get(server.spec.language_id(path) or "")
    problem = language.name_problem(args.new_name, args.symbol) if language else None
    if problem:
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"Cannot rename {args.symbol!r} to {args.new_name!r}: {problem}. No file "
                        "was changed; pick a name the language accepts.")


async def _ask_rename(server: LanguageServer, method: str, params: Any, args: LspRenameArgs) -> Any:
    """prepareRename or rename; a refusal by the server is the caller's to fix, said as such."""
    try:
        return await server.request(method, params)
    except ServerUnavailable as exc:
        raise ToolError(ErrorCode.UNAVAILABLE, failure_text(exc)) from None
    except LspRequestError as exc:
        if exc.timed_out or not (server.connection and server.connection.alive):
            raise request_failure(exc) from None
        raise ToolError(ErrorCode.SYMBOL_NOT_FOUND,
                        f"{server.spec.name} refused to rename {args.symbol!r} on line "
                        f"{args.line} ({exc}). No file was changed.") from None


async def _refuse_outside_definitions(session: LspSession, server: LanguageServer, path: Path,
                                      position: types.Position, args: LspRenameArgs) -> None:
    """A symbol defined outside the root cannot be renamed whole: servers then rename only the
    uses (clangd: the code no longer compiles) or alias the import (tsserver)."""
    if not getattr(server.capabilities, "definition_provider", None):
        return
    found = await navigation_request(server, "definition", path, position)
    places = list(dict.fromkeys(Path(to_fs_path(uri) or uri) for uri, _ in found))  # once each
    outside = await asyncio.to_thread(lambda: [p for p in places if session.contained(p) is None])
    if outside:
        raise ToolError(ErrorCode.PATH_OUTSIDE_ROOT,
                        f"Cannot rename {args.symbol!r}: it is defined in "
                        f"{', '.join(session.run.relpath(p) for p in outside)}, outside the "
                        "server's root, which no tool may change. No file was changed.")


async def _open_every_source(session: LspSession, server: LanguageServer, args: LspRenameArgs) -> None:
    """A rename is complete or refused: every source read first, or nothing changed."""
    problem = await read_every_source(session, server)
    if problem:
        raise ToolError(ErrorCode.UNAVAILABLE, f"Cannot rename {args.symbol!r} completely: "
                        f"{problem}. No file was changed; rename with ast_edit meanwhile.")
