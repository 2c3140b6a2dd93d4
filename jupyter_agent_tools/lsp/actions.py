"""What `lsp` and `lsp_rename` do with a run's servers, action by action."""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from ..files import FilesError, read_text_inside, write_files_atomically
from ..notebooks import DocumentEdit, NotebookError, check_unchanged, is_notebook_path
from ..runtime import CallContext, ErrorCode, ToolError, ToolResult
from .client import LspRequestError
from .journal import FileDiagnostic
from .languages import LANGUAGES
from .positions import char_index, locate_symbol
from .project_check import ProjectCheckError, run_project_check
from .server import LanguageServer, ServerUnavailable
from .session import (
    OUTSIDE_ROOT,
    LspSession,
    SourceDocument,
    describe_location,
    request_failure,
)
from .specs import ServerSpec
from .workspace_edit import PlannedEdit, plan_workspace_edit

NAVIGATION: dict[str, tuple[str, str, type]] = {
    "definition": (types.TEXT_DOCUMENT_DEFINITION, "definition_provider", types.DefinitionParams),
    "type_definition": (types.TEXT_DOCUMENT_TYPE_DEFINITION, "type_definition_provider",
                        types.TypeDefinitionParams),
    "implementation": (types.TEXT_DOCUMENT_IMPLEMENTATION, "implementation_provider",
                       types.ImplementationParams),
    "references": (types.TEXT_DOCUMENT_REFERENCES, "references_provider", types.ReferenceParams),
}


def _require(value: Any, name: str, action: str, hint: str) -> Any:
    if value is None or value == "":
        raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"lsp {action} needs `{name}`: {hint}")
    return value


def _supports(server: LanguageServer, capability: str, action: str) -> None:
    if not getattr(server.capabilities, capability, None):
        raise ToolError(ErrorCode.UNAVAILABLE,
                        f"{server.spec.name} does not offer {action}. Try definition, "
                        "references or grep instead.")


def _check_cell(session: LspSession, path: Path, args: Any, action: str, *,
                needs_cell: bool) -> None:
    """`cell` goes with notebooks only, and a notebook needs it where a position is asked."""
    cell = getattr(args, "cell", None)
    rel = session.run.relpath(path)
    if cell is not None and not is_notebook_path(path.name):
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"`cell` addresses a cell of a notebook, and {rel} is not a notebook "
                        "(.ipynb): drop `cell` and give `line` in the file.")
    if needs_cell and cell is None and is_notebook_path(path.name):
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"{rel} is a notebook: lsp {action} needs `cell` (numbered from 1 over "
                        "every cell, as JupyterLab's status bar counts) beside `line` (1-based "
                        "within the cell). Read the notebook to see its cells.")


def _cell_span(session: LspSession, document: SourceDocument, cell: int) -> tuple[int, int]:
    """(first document line, line count) of a notebook's `cell`; `invalid_arguments` for a
    cell the notebook lacks or one the language server does not see."""
    rel = session.run.relpath(document.path)
    if not 1 <= cell <= document.cell_count:
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"there is no cell {cell}: {rel} has {document.cell_count} cell"
                        f"{'' if document.cell_count == 1 else 's'} (numbered from 1). Read it "
                        "to see them.")
    assert document.notebook is not None
    for span in document.notebook.spans:
        if span.cell == cell:
            return span.first_line, span.line_count
    raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                    f"cell {cell} of {rel} is not {document.notebook.language} code its kernel "
                    "runs (a markdown or raw cell, or a cell magic of another language): the "
                    "language server does not see it. Pick a code cell.")


def _located(session: LspSession, document: SourceDocument, args: Any, action: str
             ) -> tuple[str, int, str]:
    """The text in which `line` counts (the file, or the cell), its first document line, and
    how messages name it."""
    if document.notebook is None:
        return document.text, 0, "the file"
    first, count = _cell_span(session, document, args.cell)
    return "\n".join(document.lines[first:first + count]), first, f"cell {args.cell}"


def _place(session: LspSession, path: Path, args: Any) -> str:
    """`main.py:4`, or `analysis.ipynb [cell 3] line 4`."""
    rel = session.run.relpath(path)
    cell = getattr(args, "cell", None)
    return f"{rel} [cell {cell}] line {args.line}" if cell is not None else f"{rel}:{args.line}"


async def _position(session: LspSession, args: Any, action: str
                    ) -> tuple[Path, SourceDocument, LanguageServer, types.Position, str]:
    """file (+ cell) + line + symbol → (path, what the server sees of it, its navigation
    server, LSP position in that, note)."""
    _require(args.file, "file", action, "the file the symbol is in.")
    _require(args.line, "line", action, "the 1-based line the symbol is on.")
    path = session.run.resolve(args.file)
    _check_cell(session, path, args, action, needs_cell=True)
    server = await session.navigation_server(path)
    document = await session.open_document(server, path)
    text, first_line, where = _located(session, document, args, action)
    located = locate_symbol(text, args.line, args.symbol, args.occurrence, action,
                            first_line=first_line, where=where)
    return path, document, server, located.position, located.note


def _locations(result: Any) -> list[tuple[str, types.Range]]:
    items = result if isinstance(result, (list, tuple)) else ([] if result is None else [result])
    found = []
    for item in items:
        if isinstance(item, types.LocationLink):
            found.append((item.target_uri, item.target_selection_range))
        elif isinstance(item, types.Location):
            found.append((item.uri, item.range))
    return found


def _with_note(text: str, note: str) -> str:
    return f"{text}\n({note})" if note else text


async def navigate(session: LspSession, args: Any) -> ToolResult:
    """definition, type_definition, implementation, references."""
    path, document, server, position, note = await _position(session, args, args.action)
    if server.spec.open_project_sources:
        problem = await _read_every_source(session, server)
        note = "; ".join(filter(None, [note, problem and f"may be incomplete: {problem}"]))
    language = LANGUAGES.get(server.spec.language_id(path) or "")
    asked = args.action
    if asked == "implementation" and language and not language.separate_implementations:
        asked = "definition"
        note = "; ".join(filter(None, [note, f"{language.name} has no implementations apart "
                                       "from definitions: this is the definition"]))
    found = await _navigation_request(session, server, asked, document.served, position)
    limit = session.supervisor.references_max if args.action == "references" else len(found)
    locations = await session.locations(found[:limit])
    what = args.action.replace("_", " ")
    if not locations:
        text = f"No {what} found for {args.symbol!r} at {_place(session, path, args)}."
    else:
        lines = [describe_location(loc) for loc in locations]
        text = f"{what.capitalize()} of {args.symbol!r} ({len(found)}):\n" + "\n".join(lines)
        if len(found) > limit:
            text += f"\n[cut: showing {limit} of {len(found)} references]"
    data = {"locations": locations, "total": len(found), "truncated": len(found) > limit,
            "answered_with": asked}
    return ToolResult.success(_with_note(text, note), data)


async def _navigation_request(session: LspSession, server: LanguageServer, action: str,
                              path: Path, position: types.Position) -> list[tuple[str, types.Range]]:
    method, capability, params_type = NAVIGATION[action]
    _supports(server, capability, action)
    document = types.TextDocumentIdentifier(from_fs_path(str(path)))
    if action == "references":
        params: Any = types.ReferenceParams(
            text_document=document, position=position,
            context=types.ReferenceContext(include_declaration=True),
        )
    else:
        params = params_type(text_document=document, position=position)
    return _locations(await session.request(server, method, params))


def _hover_text(contents: Any) -> str:
    if isinstance(contents, types.MarkupContent):
        return contents.value
    if isinstance(contents, types.MarkedStringWithLanguage):
        return contents.value
    if isinstance(contents, (list, tuple)):
        return "\n\n".join(_hover_text(part) for part in contents)
    return str(contents or "")


async def hover(session: LspSession, args: Any) -> ToolResult:
    path, document, server, position, note = await _position(session, args, "hover")
    _supports(server, "hover_provider", "hover")
    result = await session.request(server, types.TEXT_DOCUMENT_HOVER, types.HoverParams(
        text_document=types.TextDocumentIdentifier(from_fs_path(str(document.served))),
        position=position,
    ))
    text = _hover_text(result.contents).strip() if result else ""
    if not text:
        text = f"No hover information for {args.symbol!r} at {_place(session, path, args)}."
    return ToolResult.success(_with_note(text, note), {"hover": text})


def _flatten(symbols: list[Any], depth: int, out: list[dict[str, Any]]) -> None:
    for symbol in symbols:
        if isinstance(symbol, types.DocumentSymbol):
            out.append({"name": symbol.name, "kind": types.SymbolKind(symbol.kind).name.lower(),
                        "line": symbol.selection_range.start.line + 1, "depth": depth})
            _flatten(list(symbol.children or []), depth + 1, out)
        else:
            out.append({"name": symbol.name, "kind": types.SymbolKind(symbol.kind).name.lower(),
                        "line": symbol.location.range.start.line + 1,
                        "container": symbol.container_name, "depth": depth})


def _symbols_by_cell(document: SourceDocument, found: list[dict[str, Any]],
                     cell: int | None) -> list[dict[str, Any]]:
    """A notebook's symbols addressed by cell (only `cell`'s when given)."""
    assert document.notebook is not None
    by_cell = []
    for symbol in found:
        place = document.notebook.cell_position(symbol["line"] - 1)
        if place is not None and cell in (None, place.cell):
            by_cell.append({**symbol, "cell": place.cell, "line": place.line + 1})
    return by_cell


async def symbols(session: LspSession, args: Any) -> ToolResult:
    """Document symbols of `file`, or a workspace search for `query`."""
    if args.query:
        return await _workspace_symbols(session, args)
    _require(args.file, "file", "symbols", "a file for its outline, or `query` to search the "
             "workspace.")
    path = session.run.resolve(args.file)
    _check_cell(session, path, args, "symbols", needs_cell=False)
    server = await session.navigation_server(path)
    document = await session.open_document(server, path)
    _supports(server, "document_symbol_provider", "symbols")
    result = await session.request(server, types.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
                                   types.DocumentSymbolParams(types.TextDocumentIdentifier(
                                       from_fs_path(str(document.served)))))
    found: list[dict[str, Any]] = []
    _flatten(list(result or []), 0, found)
    if document.notebook is not None:
        found = _symbols_by_cell(document, found, getattr(args, "cell", None))
    limit = session.supervisor.symbols_file_max
    shown = found[:limit]
    rel = session.run.relpath(path)
    lines = [f"{'  ' * s['depth']}{s['kind']} {s['name']} ("
             + (f"cell {s['cell']} " if "cell" in s else "") + f"line {s['line']})"
             for s in shown]
    text = f"Symbols in {rel} ({len(found)}):\n" + "\n".join(lines) if found else f"No symbols in {rel}."
    if len(found) > limit:
        text += f"\n[cut: showing {limit} of {len(found)} symbols]"
    return ToolResult.success(text, {"path": rel, "symbols": shown, "total": len(found),
                                     "truncated": len(found) > limit})


async def _project_file(session: LspSession, server: LanguageServer) -> Path | None:
    """A file of the server's language under its root, so servers that index on open can search."""
    def first() -> Path | None:
        for path in session.run.walker().files(server.root):
            if server.spec.serves(path) and session.contained(path):
                return path
        return None

    return await asyncio.to_thread(first)


async def _workspace_symbols(session: LspSession, args: Any) -> ToolResult:
    if args.file:
        servers = [await session.navigation_server(session.run.resolve(args.file))]
    else:
        servers = [s for s in await _cwd_servers(session) if s.spec.navigation]
    if not servers:
        raise ToolError(ErrorCode.UNAVAILABLE,
                        "No language server serves the run's cwd. Call lsp with action=status to "
                        "see why, or pass `file` to search from that file's project.")
    found: list[dict[str, Any]] = []
    for server in servers:
        # Some servers (tsserver) search only the projects of open files: open one.
        if args.file:
            await session.open(server, session.run.resolve(args.file))
        elif not server.has_open_documents and (sample := await _project_file(session, server)):
            await session.open(server, sample)
        await session.start(server)
        _supports(server, "workspace_symbol_provider", "symbol search")
        result = await session.request(server, types.WORKSPACE_SYMBOL,
                                       types.WorkspaceSymbolParams(query=args.query))
        symbols = list(result or [])
        places = [(s.location.uri, getattr(s.location, "range", None) or types.Range(
            types.Position(0, 0), types.Position(0, 0))) for s in symbols]
        for symbol, entry in zip(symbols, await session.locations(places), strict=True):
            if not entry.get("outside_root"):  # a name is content too: not shown from outside
                entry.update(name=symbol.name, kind=types.SymbolKind(symbol.kind).name.lower(),
                             container=symbol.container_name)
            found.append(entry)
    limit = session.supervisor.symbols_query_max
    shown = found[:limit]
    lines = [f"{s['kind']} {s['name']} {s['path']}:{s['line']}" if "name" in s
             else describe_location(s) for s in shown]
    text = (f"Symbols matching {args.query!r} ({len(found)}):\n" + "\n".join(lines)
            if found else f"No symbols match {args.query!r}.")
    if len(found) > limit:
        text += f"\n[cut: showing {limit} of {len(found)} symbols; refine the query]"
    return ToolResult.success(text, {"symbols": shown, "total": len(found),
                                     "truncated": len(found) > limit})


async def _cwd_servers(session: LspSession) -> list[LanguageServer]:
    """Servers for the languages whose root marker is in the run's cwd."""
    servers = []
    for spec in session.supervisor.specs.values():
        if not spec.enabled or spec.find_root(session.run.cwd, session.run.cwd) is None:
            continue
        binary = await session.supervisor.binary(spec)
        if binary is not None:
            servers.append(session.server_at(spec, session.run.cwd, binary))
    return servers


async def code_actions(session: LspSession, args: Any) -> ToolResult:
    """Quick fixes and refactorings the servers offer on a line (or a symbol on it)."""
    _require(args.file, "file", "code_actions", "the file to look at.")
    _require(args.line, "line", "code_actions", "the 1-based line to fix.")
    path = session.run.resolve(args.file)
    _check_cell(session, path, args, "code_actions", needs_cell=True)
    servers, reason = await session.servers_for(path)
    if not servers:
        raise ToolError(ErrorCode.UNAVAILABLE, f"No language server for "
                        f"{session.run.relpath(path)}: {reason}. Call lsp with action=status.")
    document = await asyncio.to_thread(session.document_now, path)
    text, first_line, where = _located(session, document, args, "code_actions")
    lines = text.splitlines()
    if not 1 <= args.line <= max(len(lines), 1):
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"line {args.line} is outside {where} ({len(lines)} lines).")
    if args.symbol:
        start = locate_symbol(text, args.line, args.symbol, args.occurrence, "code_actions",
                              first_line=first_line, where=where).position
        end = types.Position(start.line, start.character + len(args.symbol.encode("utf-16-le")) // 2)
    else:
        start = types.Position(first_line + args.line - 1, 0)
        end = types.Position(first_line + args.line, 0)
    wanted = types.Range(start, end)
    text = document.text

    problems: list[str] = []

    async def ask(server: LanguageServer) -> list[dict[str, Any]]:
        try:
            uri, version, changed = await server.sync(document.served, text)
            snapshot = await server.diagnostics(uri, version, changed,
                                                session.supervisor.diagnostics_timeout)
        except (ServerUnavailable, LspRequestError) as exc:
            problems.append(str(exc))
            return []
        if not server.capabilities or not server.capabilities.code_action_provider:
            return []
        on_line = [d for d in snapshot.items
                   if d.range.start.line <= wanted.end.line and d.range.end.line >= start.line]
        result = await session.request(server, types.TEXT_DOCUMENT_CODE_ACTION,
                                       types.CodeActionParams(
                                           text_document=types.TextDocumentIdentifier(uri),
                                           range=wanted,
                                           context=types.CodeActionContext(diagnostics=on_line)))
        offered = []
        for action in result or []:
            entry: dict[str, Any] = {"title": action.title, "server": server.spec.name}
            if isinstance(action, types.CodeAction):
                entry["kind"] = str(getattr(action.kind, "value", action.kind) or "")
                entry["preferred"] = bool(action.is_preferred)
                if action.edit is not None:
                    uris = list((action.edit.changes or {}).keys()) + [
                        c.text_document.uri for c in action.edit.document_changes or []
                        if isinstance(c, types.TextDocumentEdit)]
                    paths = {path if p == document.served else p
                             for u in uris for p in [Path(to_fs_path(u) or u)]}
                    entry["files"] = sorted(
                        session.run.relpath(p) + ("" if session.contained(p) else
                                                  f" ({OUTSIDE_ROOT})") for p in paths)
            offered.append(entry)
        return offered

    offered = [a for group in await asyncio.gather(*(ask(s) for s in servers)) for a in group]
    place = _place(session, path, args)
    lines = [f"Code actions at {place} ({len(offered)}):" if offered
             else f"No code actions at {place}."]
    lines += [f"- {a['title']}" + (f" [{a['kind']}]" if a.get("kind") else "") +
              f" ({a['server']})" for a in offered]
    lines += [f"  {problem}" for problem in problems]
    return ToolResult.success("\n".join(lines), {"actions": offered, "problems": problems})


async def diagnostics(session: LspSession, ctx: CallContext, args: Any) -> ToolResult:
    """A file's diagnostics (waiting for publication, bounded), or the project check for '*'."""
    _require(args.file, "file", "diagnostics", "a file, or \"*\" for the whole project.")
    if args.file == "*":
        return await project_diagnostics(session, ctx)
    path = session.run.resolve(args.file)
    rel = session.run.relpath(path)
    if not await asyncio.to_thread(path.is_file):
        raise ToolError(ErrorCode.NOT_FOUND, f"{rel} is not a file. Check the path with glob.")
    _check_cell(session, path, args, "diagnostics", needs_cell=False)
    cell = getattr(args, "cell", None)
    if cell is not None:
        _cell_span(session, await asyncio.to_thread(session.document_now, path), cell)
    report = await session.diagnostics(path, save=False)
    if not report.available:
        raise ToolError(ErrorCode.UNAVAILABLE, f"No language server for {rel}: "
                        f"{'; '.join(report.problems)}. Call lsp with action=status for details.")
    shown = rel
    if cell is None:
        session.journal.observe(rel, report.items)
    else:  # the whole notebook is checked, one cell shown: the others are not "seen" yet
        report.items = [d for d in report.items if d.cell == cell]
        shown = f"{rel} [cell {cell}]"
    limit = session.supervisor.diagnostics_max
    status = "pending" if report.pending else "clean" if not report.items else "reported"
    answered = ", ".join(report.answered)
    failed = f" {', '.join(report.failed)} failed (below)." if report.failed else ""
    if not report.answered and report.failed:
        head = f"No diagnostics received for {shown}: {', '.join(report.failed)} failed."
        status = "failed"
    elif status == "pending":
        head = (f"Diagnostics for {shown} are pending: {', '.join(report.pending)} did not report "
                f"in time. What has arrived so far is below; call again shortly.{failed}")
    elif status == "clean":
        head = f"No diagnostics in {shown} from {answered}: clean.{failed}"
    else:
        head = f"Diagnostics in {shown} ({len(report.items)}) from {answered}:{failed}"
    lines = [head, *(f"  {d.describe()}" for d in report.items[:limit])]
    if len(report.items) > limit:
        lines.append(f"  [cut: showing {limit} of {len(report.items)}]")
    lines.extend(f"  {problem}" for problem in report.problems)
    return ToolResult.success("\n".join(lines), {
        **({"cell": cell} if cell is not None else {}), "path": rel, "status": status,
        "diagnostics": [d.to_json() for d in report.items[:limit]],
        "total": len(report.items), "truncated": len(report.items) > limit,
        "pending": report.pending, "problems": report.problems, "servers": report.answered,
        "failed": report.failed,
    })


async def project_diagnostics(session: LspSession, ctx: CallContext) -> ToolResult:
    """Each language's own checker over the run's cwd, summarized and bounded."""
    run = session.run
    marked = [spec for spec in session.supervisor.specs.values()
              if spec.enabled and spec.find_root(run.cwd, run.cwd)]
    checks = [spec for spec in marked if spec.project_check or spec.open_project_sources]
    if not checks and marked:
        raise ToolError(ErrorCode.UNAVAILABLE,
                        f"No project check exists for {', '.join(s.name for s in marked)}: it has "
                        "no whole-project checker here. Pass a file instead of '*' (diagnostics "
                        "are per file).")
    if not checks:
        raise ToolError(ErrorCode.UNAVAILABLE,
                        "No project check applies: the run's cwd has no root marker of a language "
                        "with a checker (pyproject.toml, package.json, tsconfig.json, "
                        "compile_flags.txt, ...). Pass a file instead of '*'.")
    found: list[FileDiagnostic] = []
    summary: dict[str, Any] = {}
    for index, spec in enumerate(checks, 1):
        name = spec.project_check[0] if spec.project_check else spec.name
        run.events.publish("lsp_progress", run_id=run.id, call_id=ctx.call_id,
                           check=name, step=index, of=len(checks), state="started")
        started = time.perf_counter()
        try:
            if spec.project_check:
                items = await run_project_check(spec, run.cwd, run.relpath,
                                                session.supervisor.project_check_timeout)
                items = await asyncio.to_thread(_without_outside_content, session, items)
            else:
                items = await _check_through_server(session, spec)
        except ProjectCheckError as exc:
            summary[name] = {"error": str(exc)}
        else:
            found.extend(items)
            summary[name] = {
                "errors": sum(d.severity == "error" for d in items),
                "warnings": sum(d.severity == "warning" for d in items),
                "seconds": round(time.perf_counter() - started, 2),
            }
        run.events.publish("lsp_progress", run_id=run.id, call_id=ctx.call_id,
                           check=name, step=index, of=len(checks), state="done")
    limit = session.supervisor.diagnostics_max
    found.sort(key=lambda d: (d.severity != "error", d.path, d.line))
    by_file: dict[str, int] = {}
    for item in found:
        by_file[item.path] = by_file.get(item.path, 0) + 1
    head = ["Project check: " + "; ".join(
        f"{name}: {s['error']}" if "error" in s else
        f"{name}: {s['errors']} errors, {s['warnings']} warnings"
        for name, s in summary.items())]
    head += [f"  {d.describe()}" for d in found[:limit]]
    if len(found) > limit:
        head.append(f"  [cut: showing {limit} of {len(found)}; files with most: " + ", ".join(
            f"{p} ({n})" for p, n in sorted(by_file.items(), key=lambda kv: -kv[1])[:10]) + "]")
    return ToolResult.success("\n".join(head), {
        "checks": summary, "diagnostics": [d.to_json() for d in found[:limit]],
        "total": len(found), "by_file": by_file, "truncated": len(found) > limit,
    })


def _without_outside_content(session: LspSession, items: list[FileDiagnostic]
                             ) -> list[FileDiagnostic]:
    """A checker may follow a symlinked folder out of the root: such files keep their place in
    the list, not their messages (which quote code)."""
    inside: dict[str, bool] = {}
    kept = []
    for item in items:
        if item.path not in inside:
            inside[item.path] = session.contained(session.run.cwd / item.path) is not None
        kept.append(item if inside[item.path] else dataclasses.replace(
            item, code="", message=f"({OUTSIDE_ROOT}: not shown)"))
    return kept


async def _check_through_server(session: LspSession, spec: ServerSpec) -> list[FileDiagnostic]:
    """A language without a checker of its own (C/C++): its server over every source under
    the cwd, bounded in files by `project_sources_max` and in time by `diagnostics_timeout`."""
    binary = await session.supervisor.binary(spec)
    if binary is None:
        raise ProjectCheckError(f"{spec.command[0]} not found on PATH or in the Python "
                                "environment's bin folder")
    server = session.server_at(spec, session.run.cwd, binary)
    sources = await session.project_sources(server)
    if sources is None:
        raise ProjectCheckError(f"more than {session.supervisor.project_sources_max} source files "
                                "to open; raise LanguageServerSupervisor.project_sources_max or "
                                "pass files one at a time")
    reports = await session.diagnostics_many(sources, save=False)
    unread = [session.run.relpath(r.path) for r in reports if r.pending or r.problems]
    if unread:
        raise ProjectCheckError(f"{spec.name} did not finish {', '.join(unread[:10])} in time; "
                                "call again shortly")
    return [item for report in reports for item in report.items]


async def _describe_availability(session: LspSession, path: Path,
                           specs: list[ServerSpec] | None = None) -> list[dict[str, Any]]:
    entries = []
    for option in await session.availability(path, specs):
        entry: dict[str, Any] = {
            "server": option.spec.name,
            "languages": option.spec.languages,
            "root_marker": (f"{session.run.relpath(option.root / option.marker)}"
                            if option.root and option.marker else None),
            "binary": option.binary,
            "available": option.ok,
        }
        if not option.ok:
            entry["why_not"] = option.reason()
        if option.root is not None:
            server = session.supervisor.existing((option.root, option.spec.name))
            if server is not None:
                entry.update({k: v for k, v in server.status().items()
                              if k in ("running", "pid", "uptime_seconds", "last_error", "restarts")})
        entry.setdefault("running", False)
        entries.append(entry)
    return entries


async def status(session: LspSession, args: Any) -> ToolResult:
    """Per server: root marker found?, binary path, running?, pid, uptime, last error."""
    if args.file:
        path = session.run.resolve(args.file)
        entries = await _describe_availability(session, path)
        where = session.run.relpath(path)
        if not entries:
            suffix = path.suffix or "extension-less"
            return ToolResult.success(f"No language server handles {suffix} files ({where}).",
                                      {"servers": []})
    else:
        # Markers in the cwd itself: `find_root` looks from a file's folder, here the cwd.
        entries = await _describe_availability(session, session.run.cwd / "_",
                                         list(session.supervisor.specs.values()))
        where = "the run's cwd"
    lines = [f"Language servers for {where}:"]
    for e in entries:
        state = (f"running (pid {e['pid']}, up {e['uptime_seconds']}s)" if e.get("running")
                 else "available, not started" if e["available"] else "unavailable")
        lines.append(f"- {e['server']} ({', '.join(e['languages'])}): {state}; marker: "
                     f"{e['root_marker'] or 'none'}; binary: {e['binary'] or 'not found'}")
        if e.get("why_not"):
            lines.append(f"    why: {e['why_not']}")
        if e.get("last_error"):
            lines.append(f"    last error: {e['last_error']}")
    return ToolResult.success("\n".join(lines), {"servers": entries})


async def reload(session: LspSession, args: Any) -> ToolResult:
    """Restart the servers for a file's root (or every server the run's cwd uses)."""
    if args.file:
        servers, reason = await session.servers_for(session.run.resolve(args.file))
    else:
        servers, reason = await _cwd_servers(session), "no server serves the run's cwd"
        known = {id(s) for s in servers}
        servers += [s for key in session.servers
                    if (s := session.supervisor.existing(key)) and id(s) not in known]
    if not servers:
        raise ToolError(ErrorCode.UNAVAILABLE,
                        f"Nothing to reload: {reason}. Call lsp with action=status for details.")
    lines, entries = [], []
    for server in servers:
        try:
            await server.reload()
            lines.append(f"{server.spec.name}: restarted (pid {server.connection.pid if server.connection else '?'})")
        except ServerUnavailable as exc:
            lines.append(f"{server.spec.name}: failed to start: {exc}")
        entries.append({k: v for k, v in server.status().items() if k != "binary"})
    return ToolResult.success("Reloaded:\n" + "\n".join(lines), {"servers": entries})


async def rename(session: LspSession, ctx: CallContext, args: Any) -> ToolResult:
    """Check the new name, prepareRename, rename, then apply the WorkspaceEdit atomically
    inside the root: every file changes, or the call is an error saying why none did."""
    target = session.run.resolve(args.file)
    _check_cell(session, target, args, "rename", needs_cell=True)
    # Checked before any server starts.
    _check_new_name(await session.navigation_server(target), target, args)
    path, source, server, position, note = await _position(session, args, "rename")
    _supports(server, "rename_provider", "rename")
    document = types.TextDocumentIdentifier(from_fs_path(str(source.served)))
    provider = server.capabilities.rename_provider if server.capabilities else None
    if isinstance(provider, types.RenameOptions) and provider.prepare_provider:
        prepared = await _ask_rename(server, types.TEXT_DOCUMENT_PREPARE_RENAME,
                                     types.PrepareRenameParams(document, position), args)
        if prepared is None:
            raise ToolError(ErrorCode.SYMBOL_NOT_FOUND,
                            f"{args.symbol!r} on line {args.line} cannot be renamed (the server "
                            "sees no renameable symbol there). Point at its definition or a use.")
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

    def plan_now() -> tuple[PlannedEdit, str]:
        files_edit, cells = _split_notebook_edits(session, edit, notebooks)
        runtime = session.run.runtime
        plan = plan_workspace_edit(
            files_edit, session.contained, session.run.relpath,
            lambda path: read_text_inside(runtime.root_path, path, runtime.max_read_bytes,
                                          shown=session.run.relpath(path)))
        diff = plan.diff(session.run.relpath)
        for document, edits in cells:
            diff += _plan_cells(session, plan, document, edits)
        return plan, diff

    plan, diff = await asyncio.to_thread(plan_now)
    if not plan.changes:
        raise ToolError(ErrorCode.SYMBOL_NOT_FOUND,
                        f"Renaming {args.symbol!r} to {args.new_name!r} changes nothing: "
                        f"{server.spec.name}'s edit leaves every file as it is (a name it does "
                        "not own, e.g. a builtin or a library's). No file was changed.")
    expected = {d.path: d.file.identity for d in notebooks.values() if d.file is not None}

    def write_now() -> list[Path]:
        for document in notebooks.values():  # saved meanwhile: nothing is written
            if document.path in plan.changes and document.file is not None:
                check_unchanged(session.run.runtime.root_path, document.file)
        return write_files_atomically(plan.changes, root=session.run.runtime.root_path,
                                      expected=expected, relpath=session.run.relpath)

    try:
        created = await asyncio.to_thread(write_now)
    except NotebookError as exc:
        raise ToolError(ErrorCode.STALE_EDIT, str(exc)) from None
    ctx.wrote(*plan.changes, created=created)
    files = [{"path": session.run.relpath(p), "edits": plan.edit_counts.get(p, 0),
              "deleted": content is None} for p, content in plan.changes.items()]
    total = sum(f["edits"] for f in files)
    listing = "\n".join(f"  {f['path']}: {f['edits']} edit(s)" for f in files)
    text = _with_note(f"Renamed {args.symbol!r} to {args.new_name!r}: {total} edit(s) in "
                      f"{len(files)} file(s):\n{listing}", note)
    return ToolResult.success(text, {"files": files, "edits": total, "diff": diff},
                              blocks=[{"type": "text", "text": text}, {"type": "diff", "diff": diff}])


async def _open_every_notebook(session: LspSession, server: LanguageServer, args: Any
                               ) -> tuple[dict[Path, SourceDocument], list[str]]:
    """A server renames only in what it sees: the notebooks of its language under its root
    are opened first, by their virtual documents' names. Also: those that are not valid
    notebooks (left as they are)."""
    paths = await session.notebooks_served_by(server)
    if paths is None:
        raise ToolError(ErrorCode.UNAVAILABLE, f"Cannot rename {args.symbol!r} completely: "
                        f"{session.run.relpath(server.root)} holds more than "
                        f"{session.supervisor.project_sources_max} notebooks to open. No file "
                        "was changed; raise LanguageServerSupervisor.project_sources_max.")
    opened, unreadable = {}, []
    for path in paths:
        try:
            document = await asyncio.to_thread(session.document_now, path)
        except (ToolError, FilesError):  # not a notebook it can parse: nothing in it can be renamed
            unreadable.append(session.run.relpath(path))
            continue
        if server.spec.serves(document.served):
            opened[document.served] = await session.open_document(server, path)
    return opened, unreadable


def _split_notebook_edits(session: LspSession, edit: types.WorkspaceEdit,
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
            raise ToolError(ErrorCode.UNAVAILABLE, f"The rename reaches "
                            f"{session.run.relpath(other.path)}, outside the language server's "
                            "project; no file was changed.")
        return None

    kept: list[Any] = []
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit) and (
                path := notebook(change.text_document.uri)):
            cells.setdefault(path, []).extend(change.edits)
        elif not isinstance(change, types.TextDocumentEdit) and any(
                notebook(uri) for uri in [getattr(change, name, "") for name in
                                          ("uri", "old_uri", "new_uri")] if uri):
            raise ToolError(ErrorCode.UNAVAILABLE, "The server's rename creates, moves or "
                            "deletes a notebook's cells as a file; no file was changed.")
        else:
            kept.append(change)
    changes = {}
    for uri, edits in (edit.changes or {}).items():
        if path := notebook(uri):
            cells.setdefault(path, []).extend(edits)
        else:
            changes[uri] = edits
    files_edit = types.WorkspaceEdit(changes=changes or None, document_changes=kept or None)
    return files_edit, [(notebooks[path], edits) for path, edits in cells.items()]


def _plan_cells(session: LspSession, plan: PlannedEdit, document: SourceDocument,
                edits: list[Any]) -> str:
    """Add a notebook's new bytes (its cells' new sources, nothing else changed) to `plan`;
    its diff, cell by cell."""
    assert document.notebook is not None and document.file is not None
    lines = document.lines

    def place(position: types.Position) -> tuple[int, int]:
        text = lines[position.line] if position.line < len(lines) else ""
        return position.line, char_index(text, position.character)

    try:
        sources = document.notebook.cell_sources(
            DocumentEdit(place(e.range.start), place(e.range.end), e.new_text) for e in edits)
    except NotebookError as exc:
        raise ToolError(ErrorCode.UNAVAILABLE, f"Cannot rename in "
                        f"{session.run.relpath(document.path)}: {exc} No file was changed.") from None
    plan.changes[document.path] = document.file.notebook.with_sources(sources).decode("utf-8")
    plan.edit_counts[document.path] = len(edits)
    rel = session.run.relpath(document.path)
    return "".join(
        "".join(difflib.unified_diff(
            document.notebook.sources[cell].splitlines(keepends=True),
            source.splitlines(keepends=True), f"a/{rel} [cell {cell}]", f"b/{rel} [cell {cell}]"))
        for cell, source in sorted(sources.items()))


def _check_new_name(server: LanguageServer, path: Path, args: Any) -> None:
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


async def _ask_rename(server: LanguageServer, method: str, params: Any, args: Any) -> Any:
    """prepareRename or rename; a refusal by the server is the caller's to fix, said as such."""
    try:
        return await server.request(method, params)
    except ServerUnavailable as exc:
        raise ToolError(ErrorCode.UNAVAILABLE, str(exc)) from None
    except LspRequestError as exc:
        if exc.timed_out or not (server.connection and server.connection.alive):
            raise request_failure(exc) from None
        raise ToolError(ErrorCode.SYMBOL_NOT_FOUND,
                        f"{server.spec.name} refused to rename {args.symbol!r} on line "
                        f"{args.line} ({exc}). No file was changed.") from None


async def _refuse_outside_definitions(session: LspSession, server: LanguageServer, path: Path,
                                      position: types.Position, args: Any) -> None:
    """A symbol defined outside the root cannot be renamed whole: servers then rename only the
    uses (clangd: the code no longer compiles) or alias the import (tsserver)."""
    if not getattr(server.capabilities, "definition_provider", None):
        return
    found = await _navigation_request(session, server, "definition", path, position)
    places = [Path(to_fs_path(uri) or uri) for uri, _ in found]
    outside = await asyncio.to_thread(lambda: [p for p in places if session.contained(p) is None])
    if outside:
        raise ToolError(ErrorCode.PATH_OUTSIDE_ROOT,
                        f"Cannot rename {args.symbol!r}: it is defined in "
                        f"{', '.join(session.run.relpath(p) for p in outside)}, outside the "
                        "server's root, which no tool may change. No file was changed.")


async def _read_every_source(session: LspSession, server: LanguageServer) -> str | None:
    """A server that indexes only open files (clangd with compile_flags.txt) answers only from
    where it looked: open every source under its root and let it read them first. None when
    done, else what kept it from seeing them all."""
    sources = await session.project_sources(server)
    if sources is None:
        return (f"{session.run.relpath(server.root)} has more than "
                f"{session.supervisor.project_sources_max} source files to open, and "
                f"{server.spec.name} sees only the files it has read. Add a compile_commands.json "
                "(CMake: -DCMAKE_EXPORT_COMPILE_COMMANDS=ON; make: bear -- make) and raise "
                "LanguageServerSupervisor.project_sources_max")
    reports = await session.diagnostics_many(sources, save=False)
    unread = sorted({session.run.relpath(r.path) for r in reports if r.pending or r.problems})
    if unread:
        return (f"{server.spec.name} had not finished reading {', '.join(unread[:10])}; try "
                "again in a moment")
    return None


async def _open_every_source(session: LspSession, server: LanguageServer, args: Any) -> None:
    """A rename is complete or refused: every source read first, or nothing changed."""
    problem = await _read_every_source(session, server)
    if problem:
        raise ToolError(ErrorCode.UNAVAILABLE, f"Cannot rename {args.symbol!r} completely: "
                        f"{problem}. No file was changed; rename with ast_edit meanwhile.")
