"""`lsp code_actions`: list what the servers offer on a line, numbered; apply one by staging
its edit exactly as `ast_edit` stages a rewrite (the run's edit store: diff, card, panel,
`resolve`). A command's edits, which the server sends back through `workspace/applyEdit`
while it runs, are staged the same way."""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from ...files import identity_inside, read_bytes_inside
from ...files.text import ENCODING_NAMES, DecodedText
from ...lsp.errors import LspRequestError, ServerUnavailable
from ...lsp.positions import locate_symbol
from ...lsp.server import LanguageServer
from ...lsp.session import OUTSIDE_ROOT, LspSession, OfferedActions, SourceDocument
from ...lsp.workspace_edit import plan_workspace_edit
from ...runtime import CallContext, ErrorCode, Resource, ToolError, ToolResult
from ...runtime.limits import bound_text
from ...structural.edits import ABSENT, FileChange, content_hash, unified_diff
from ...structural.session import StructuralSession
from .args import CodeActions
from .errors import failure_text, request_failure
from .places import check_cell, describe_place, located
from .rename import plan_cells, split_notebook_edits

_DIFF_TEXT_CHARS = 12_000
Offered = tuple[LanguageServer, types.CodeAction | types.Command]


async def code_actions(session: LspSession, ctx: CallContext, args: CodeActions) -> ToolResult:
    """List the quick fixes and refactorings offered on a line (or a symbol on it), or stage
    the one `apply` names."""
    path = session.run.resolve(args.file)
    check_cell(session, path, args.cell, "code_actions", needs_cell=True)
    servers, reason = await session.servers_for(path)
    if not servers:
        raise ToolError(ErrorCode.UNAVAILABLE, f"No language server for "
                        f"{session.run.relpath(path)}: {reason}. Call lsp with action=status.")
    document = await asyncio.to_thread(session.document_now, path)
    wanted = _wanted_range(session, document, args)
    text_hash = hashlib.sha256(document.text.encode("utf-8")).hexdigest()
    place_key = (path, args.cell, args.line, args.symbol, args.occurrence, args.kind)
    place = describe_place(session, path, args.cell, args.line)
    if args.apply is not None:
        listed = session.offered_actions.get(place_key)
        if listed is not None and listed.text_hash != text_hash:
            session.offered_actions.pop(place_key, None)
            raise ToolError(ErrorCode.STALE_EDIT, f"{session.run.relpath(path)} changed since "
                            f"the code actions at {place} were listed; nothing was staged. "
                            "List them again (without `apply`) and apply from the new list.")
        if listed is None:  # never listed here: the list is what the servers offer now
            offered, _ = await _offered(session, servers, document, wanted, args.kind)
        else:
            offered = listed.actions
        server, action = _chosen(offered, args.apply, place)
        return await _stage(session, ctx, server, action, document)

    offered, problems = await _offered(session, servers, document, wanted, args.kind)
    session.remember_actions(place_key, OfferedActions(text_hash, offered))
    entries = [_describe(session, document, path, number, server, action)
               for number, (server, action) in enumerate(offered, 1)]
    lines = [f"Code actions at {place} ({len(entries)}):" if entries
             else f"No code actions at {place}" + (f" of kind {args.kind!r}." if args.kind
                                                   else ".")]
    for entry in entries:
        marks = ", ".join(filter(None, [entry.get("kind"), "preferred" if entry.get("preferred")
                                        else "", f"disabled: {entry['disabled']}"
                                        if entry.get("disabled") else ""]))
        lines.append(f"{entry['number']}. {entry['title']}" + (f" [{marks}]" if marks else "")
                     + f" ({entry['server']})")
    if entries:
        lines.append("Apply one with the same call and `apply`: its number or exact title "
                     "(it is staged: a diff and an edit_id for resolve).")
    lines += [f"  {problem}" for problem in problems]
    return ToolResult.success("\n".join(lines), {"actions": entries, "problems": problems})


def _wanted_range(session: LspSession, document: SourceDocument, args: CodeActions
                  ) -> types.Range:
    text, first_line, where = located(session, document, args.cell)
    lines = text.splitlines()
    if not 1 <= args.line <= max(len(lines), 1):
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"line {args.line} is outside {where} ({len(lines)} lines).")
    if args.symbol:
        start = locate_symbol(text, args.line, args.symbol, args.occurrence,
                              first_line=first_line, where=where).position
        end = types.Position(start.line,
                             start.character + len(args.symbol.encode("utf-16-le")) // 2)
        return types.Range(start, end)
    return types.Range(types.Position(first_line + args.line - 1, 0),
                       types.Position(first_line + args.line, 0))


async def _offered(session: LspSession, servers: list[LanguageServer], document: SourceDocument,
                   wanted: types.Range, kind: str | None) -> tuple[list[Offered], list[str]]:
    """Every server's actions over `wanted`, in the servers' order; and why a server gave
    none."""
    problems: list[str] = []

    async def ask(server: LanguageServer) -> list[Offered]:
        try:
            uri, version, changed = await server.sync(document.served, document.text)
            snapshot = await server.diagnostics(uri, version, changed,
                                                session.limits.diagnostics_timeout_seconds)
            if not server.capabilities or not server.capabilities.code_action_provider:
                return []
            on_line = [d for d in snapshot.items if d.range.start.line <= wanted.end.line
                       and d.range.end.line >= wanted.start.line]
            result = await server.request(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri), range=wanted,
                context=types.CodeActionContext(diagnostics=on_line,
                                                only=[kind] if kind else None)))
        except (ServerUnavailable, LspRequestError) as exc:
            problems.append(failure_text(exc))
            return []
        # Servers may ignore `only`: a kind matches itself and its sub-kinds.
        return [(server, action) for action in result or []
                if not kind or _kind_of(action) == kind
                or _kind_of(action).startswith(kind + ".")]

    offered = [a for group in await asyncio.gather(*(ask(s) for s in servers)) for a in group]
    return offered, problems


def _kind_of(action: types.CodeAction | types.Command) -> str:
    kind = getattr(action, "kind", None)
    return str(getattr(kind, "value", kind) or "")


def _describe(session: LspSession, document: SourceDocument, path: Path, number: int,
              server: LanguageServer, action: types.CodeAction | types.Command
              ) -> dict[str, Any]:
    entry: dict[str, Any] = {"number": number, "title": action.title,
                             "server": server.spec.name, "kind": _kind_of(action)}
    if isinstance(action, types.CodeAction):
        entry["preferred"] = bool(action.is_preferred)
        if action.disabled is not None:
            entry["disabled"] = action.disabled.reason
        if action.edit is not None:
            uris = list((action.edit.changes or {}).keys()) + [
                c.text_document.uri for c in action.edit.document_changes or []
                if isinstance(c, types.TextDocumentEdit)]
            paths = {path if p == document.served else p
                     for u in uris for p in [Path(to_fs_path(u) or u)]}
            entry["files"] = sorted(session.run.relpath(p) + (
                "" if session.contained(p) else f" ({OUTSIDE_ROOT})") for p in paths)
    entry["command"] = isinstance(action, types.Command) or action.command is not None
    return entry


def _chosen(offered: list[Offered], wanted: int | str, place: str) -> Offered:
    """The action `apply` names: its number in the list, or its exact title."""
    if isinstance(wanted, int):
        if not offered:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"No code actions are offered at "
                            f"{place}, so there is no action {wanted} to apply. Try another "
                            "line, a symbol on it, or another `kind`.")
        if wanted > len(offered):
            raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"apply is {wanted}, but the code "
                            f"actions at {place} are numbered 1 to {len(offered)}. List them "
                            "(without `apply`) and pass one of those numbers.",
                            data={"valid": [1, len(offered)]})
        return offered[wanted - 1]
    for server, action in offered:
        if action.title == wanted:
            return server, action
    titles = "; ".join(repr(action.title) for _, action in offered[:20]) or "none"
    raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"No code action at {place} is titled "
                    f"{wanted!r}. Offered: {titles}. Pass a number or one of these exact titles.")


def _parser(ctx: CallContext) -> StructuralSession:
    store: StructuralSession | None = ctx.run.resources.get(Resource.PARSER)
    if store is None:
        raise ToolError(ErrorCode.UNAVAILABLE, "Applying a code action stages its edit for "
                        "resolve, and this run has no parser resource, which keeps staged edits. "
                        "Start a run with the parser (the default), or make the change with "
                        "edit.")
    return store


async def _stage(session: LspSession, ctx: CallContext, server: LanguageServer,
                 action: types.CodeAction | types.Command, document: SourceDocument
                 ) -> ToolResult:
    """Resolve the action if the server needs it, take its edit (or run its command and take
    the edits it sends back) and stage every file's change as one edit."""
    store = _parser(ctx)
    notebooks = {document.served: document} if document.notebook is not None else {}
    if isinstance(action, types.CodeAction):
        if action.disabled is not None:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"{action.title!r} is disabled "
                            f"({action.disabled.reason}); nothing was staged. Pick another "
                            "action.")
        resolved: types.CodeAction = action
        if action.edit is None and _resolves(server):
            try:
                resolved = await server.request(types.CODE_ACTION_RESOLVE, action)
            except LspRequestError as exc:
                raise request_failure(exc) from None
        command = resolved.command
        edits = [resolved.edit] if resolved.edit is not None else []
    else:
        command, edits = action, []
    changes: list[FileChange] = []
    note = ""
    if edits:
        changes = await asyncio.to_thread(_changes_of, session, edits[0], notebooks)
        if command is not None:
            note = (f"\n[the action also has a command ({command.title or command.command}), "
                    "which was not run: its edits would build on this one before it is "
                    "written]")
    elif command is not None:
        changes = await _changes_of_command(session, server, command, notebooks)
    if not changes:
        return ToolResult.success(f"{action.title!r} changes nothing here; nothing was staged.",
                                  {"edit_id": None, "action": action.title, "files": {},
                                   "diff": ""})
    language = server.spec.language_id(document.served) or server.spec.name
    edit = store.stage_changes(f"code action ({server.spec.name})", action.title, language,
                               changes, origin="lsp")
    counts = edit.counts()
    diff = edit.diff
    shown, _ = bound_text(diff, _DIFF_TEXT_CHARS, what="diff")
    text = (f"(proposed) {action.title!r} ({server.spec.name}): {edit.replacements} edit(s) in "
            f"{len(counts)} file(s) … call resolve with edit_id \"{edit.id}\" (action accept "
            "or discard); nothing is written until then.\n"
            + "\n".join(f"  {rel}: {n}" for rel, n in counts.items()) + note + "\n\n" + shown)
    return ToolResult.success(
        text, {"edit_id": edit.id, "action": action.title, "server": server.spec.name,
               "edits": edit.replacements, "files": counts, "diff": diff},
        blocks=[{"type": "text", "text": text},
                {"type": "diff", "edit_id": edit.id, "diff": diff}])


def _resolves(server: LanguageServer) -> bool:
    provider = server.capabilities.code_action_provider if server.capabilities else None
    return isinstance(provider, types.CodeActionOptions) and bool(provider.resolve_provider)


async def _changes_of_command(session: LspSession, server: LanguageServer,
                              command: types.Command, notebooks: dict[Path, SourceDocument]
                              ) -> list[FileChange]:
    """Run the command; each edit the server sends meanwhile is checked and kept (the server
    hears `applied: true` only then), and the call stages them together."""
    taken: list[FileChange] = []
    problems: list[str] = []

    async def take(edit: types.WorkspaceEdit) -> str | None:
        try:
            changes = await asyncio.to_thread(_changes_of, session, edit, notebooks)
        except ToolError as exc:
            problems.append(exc.message)
            return exc.message
        if {c.path for c in changes} & {c.path for c in taken}:
            problems.append("the command sent two edits of the same file")
            return "one edit per file per command: the first is staged, this one is not"
        taken.extend(changes)
        return None

    started = time.time_ns()
    try:
        await server.execute_command(command, take)
    except LspRequestError as exc:
        raise request_failure(exc) from None
    finally:
        await asyncio.to_thread(_remove_made_while_running, session, taken, started)
    if problems:
        raise ToolError(ErrorCode.FAILED, f"The command {command.command!r} sent an edit that "
                        f"cannot be staged: {'; '.join(problems)}. Nothing was staged or "
                        "written.")
    return taken


def _remove_made_while_running(session: LspSession, changes: list[FileChange],
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


def _changes_of(session: LspSession, edit: types.WorkspaceEdit,
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
