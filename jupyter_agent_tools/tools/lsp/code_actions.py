"""`lsp code_actions`: list what the servers offer on a line, numbered; apply one by staging
its edit exactly as `ast_edit` stages a rewrite (the run's edit store: diff, card, panel,
`resolve`). A command's edits, which the server sends back through `workspace/applyEdit`
while it runs, are staged the same way."""

from __future__ import annotations

import asyncio
import hashlib
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from ...files import FilesError
from ...lsp.errors import LspRequestError, ServerUnavailable
from ...lsp.positions import locate_symbol
from ...lsp.server import LanguageServer
from ...lsp.session import OUTSIDE_ROOT, LspSession, OfferedActions, SourceDocument
from ...runtime import CallContext, ErrorCode, Resource, ToolError, ToolResult
from ...structural.edits import FileChange
from ...structural.session import StructuralSession
from .args import CodeActions
from .errors import failure_text, request_failure
from .places import check_cell, describe_place, located
from .staging import changes_of, remove_made_while_running, staged_answer

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
    document = await session.document(path)  # an open notebook: its shared document
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
    if "resolve" not in ctx.run.tool_names():
        raise ToolError(ErrorCode.PERMISSION_DENIED, "Applying a code action stages an edit that "
                        "only resolve writes, and this run's surface (plan or readonly) has no "
                        "resolve. List the actions only, or ask the user for a full run.")
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
        changes = await asyncio.to_thread(changes_of, session, edits[0], notebooks)
        if command is not None:
            note = (f"the action also has a command ({command.title or command.command}), "
                    "which was not run: its edits would build on this one before it is "
                    "written")
    elif command is not None:
        changes = await _changes_of_command(session, server, command, notebooks)
    if not changes:
        return ToolResult.success(f"{action.title!r} changes nothing here; nothing was staged.",
                                  {"edit_id": None, "action": action.title, "files": {},
                                   "diff": ""})
    language = server.spec.language_id(document.served) or server.spec.name
    result = staged_answer(store, changes, f"code action ({server.spec.name})", action.title,
                           language, note)
    result.data["server"] = server.spec.name
    return result


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
            changes = await asyncio.to_thread(changes_of, session, edit, notebooks)
        except ToolError as exc:
            problems.append(exc.message)
            return exc.message
        except FilesError as exc:  # a file it names cannot be read (gone, a link, too large)
            problems.append(str(exc))
            return str(exc)
        if {c.path for c in changes} & {c.path for c in taken}:
            problems.append("it sent two edits of the same file")
            return "one edit per file per command is staged"
        taken.extend(changes)
        return None

    started = time.time_ns()
    try:
        await server.execute_command(command, take)
    except LspRequestError as exc:
        raise request_failure(exc) from None
    finally:
        await asyncio.to_thread(remove_made_while_running, session, taken, started)
    if problems:
        raise ToolError(ErrorCode.FAILED, f"The command {command.command!r} sent an edit that "
                        f"cannot be staged: {'; '.join(problems)}. Nothing was staged or "
                        "written.")
    return taken
