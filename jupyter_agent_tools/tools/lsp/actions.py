"""What `lsp` does with a run's servers, action by action (`lsp_rename` is in `rename`)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from ...lsp.errors import LspRequestError, ProjectCheckError, ServerUnavailable
from ...lsp.journal import FileDiagnostic
from ...lsp.languages import LANGUAGES
from ...lsp.positions import locate_symbol
from ...lsp.project_check import run_project_check
from ...lsp.server import LanguageServer
from ...lsp.session import OUTSIDE_ROOT, LspSession, SourceDocument, describe_location
from ...lsp.specs import ServerSpec
from ...runtime import CallContext, ErrorCode, ToolError, ToolResult
from .args import (
    CodeActions,
    Diagnostics,
    Hover,
    LspCall,
    Navigate,
    Reload,
    Status,
    Symbols,
)
from .places import (
    cell_span,
    check_cell,
    describe_place,
    located,
    navigation_request,
    read_every_source,
    supports,
    symbol_position,
    with_note,
)


async def perform(session: LspSession, ctx: CallContext, action: LspCall) -> ToolResult:
    match action:
        case Navigate():
            return await navigate(session, action)
        case Hover():
            return await hover(session, action)
        case Symbols():
            return await symbols(session, action)
        case CodeActions():
            return await code_actions(session, action)
        case Diagnostics():
            return await diagnostics(session, ctx, action)
        case Status():
            return await status(session, action)
        case Reload():
            return await reload(session, action)


async def navigate(session: LspSession, args: Navigate) -> ToolResult:
    """definition, type_definition, implementation, references."""
    path, document, server, position, note = await symbol_position(session, args, args.action)
    if server.spec.open_project_sources:
        problem = await read_every_source(session, server)
        note = "; ".join(filter(None, [note, problem and f"may be incomplete: {problem}"]))
    language = LANGUAGES.get(server.spec.language_id(path) or "")
    asked = args.action
    if asked == "implementation" and language and not language.separate_implementations:
        asked = "definition"
        note = "; ".join(filter(None, [note, f"{language.name} has no implementations apart "
                                       "from definitions: this is the definition"]))
    found = await navigation_request(server, asked, document.served, position)
    limit = session.limits.max_references if args.action == "references" else len(found)
    locations = await session.locations(found[:limit])
    what = args.action.replace("_", " ")
    if not locations:
        text = f"No {what} found for {args.symbol!r} at {describe_place(session, path, args.cell, args.line)}."
    else:
        lines = [describe_location(loc) for loc in locations]
        text = f"{what.capitalize()} of {args.symbol!r} ({len(found)}):\n" + "\n".join(lines)
        if len(found) > limit:
            text += f"\n[cut: showing {limit} of {len(found)} references]"
    data = {"locations": locations, "total": len(found), "truncated": len(found) > limit,
            "answered_with": asked}
    return ToolResult.success(with_note(text, note), data)


def _hover_text(contents: Any) -> str:
    if isinstance(contents, types.MarkupContent):
        return contents.value
    if isinstance(contents, types.MarkedStringWithLanguage):
        return contents.value
    if isinstance(contents, (list, tuple)):
        return "\n\n".join(_hover_text(part) for part in contents)
    return str(contents or "")


async def hover(session: LspSession, args: Hover) -> ToolResult:
    path, document, server, position, note = await symbol_position(session, args, "hover")
    supports(server, "hover_provider", "hover")
    result = await server.request(types.TEXT_DOCUMENT_HOVER, types.HoverParams(
        text_document=types.TextDocumentIdentifier(from_fs_path(str(document.served))),
        position=position,
    ))
    text = _hover_text(result.contents).strip() if result else ""
    if not text:
        text = f"No hover information for {args.symbol!r} at {describe_place(session, path, args.cell, args.line)}."
    return ToolResult.success(with_note(text, note), {"hover": text})


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


async def symbols(session: LspSession, args: Symbols) -> ToolResult:
    """Document symbols of `file`, or a workspace search for `query`."""
    if args.query:
        return await _workspace_symbols(session, args.query, args.file)
    if not args.file:
        raise ToolError(ErrorCode.INVALID_ARGUMENTS, "lsp symbols needs `file`: a file for its "
                        "outline, or `query` to search the workspace.")
    path = session.run.resolve(args.file)
    check_cell(session, path, args.cell, "symbols", needs_cell=False)
    server = await session.navigation_server(path)
    document = await session.open_document(server, path)
    supports(server, "document_symbol_provider", "symbols")
    result = await server.request(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
                                   types.DocumentSymbolParams(types.TextDocumentIdentifier(
                                       from_fs_path(str(document.served)))))
    found: list[dict[str, Any]] = []
    _flatten(list(result or []), 0, found)
    if document.notebook is not None:
        found = _symbols_by_cell(document, found, args.cell)
    limit = session.limits.max_file_symbols
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


async def _workspace_symbols(session: LspSession, query: str, file: str | None
                             ) -> ToolResult:
    if file:
        servers = [await session.navigation_server(session.run.resolve(file))]
    else:
        servers = [s for s in await _cwd_servers(session) if s.spec.navigation]
    if not servers:
        raise ToolError(ErrorCode.UNAVAILABLE,
                        "No language server serves the run's cwd. Call lsp with action=status to "
                        "see why, or pass `file` to search from that file's project.")
    found: list[dict[str, Any]] = []
    for server in servers:
        # Some servers (tsserver) search only the projects of open files: open one.
        if file:
            await session.open(server, session.run.resolve(file))
        elif not server.has_open_documents and (sample := await _project_file(session, server)):
            await session.open(server, sample)
        await session.start(server)
        supports(server, "workspace_symbol_provider", "symbol search")
        result = await server.request(types.WORKSPACE_SYMBOL,
                                       types.WorkspaceSymbolParams(query=query))
        symbols = list(result or [])
        places = [(s.location.uri, getattr(s.location, "range", None) or types.Range(
            types.Position(0, 0), types.Position(0, 0))) for s in symbols]
        for symbol, entry in zip(symbols, await session.locations(places), strict=True):
            if not entry.get("outside_root"):  # a name is content too: not shown from outside
                entry.update(name=symbol.name, kind=types.SymbolKind(symbol.kind).name.lower(),
                             container=symbol.container_name)
            found.append(entry)
    limit = session.limits.max_workspace_symbols
    shown = found[:limit]
    lines = [f"{s['kind']} {s['name']} {s['path']}:{s['line']}" if "name" in s
             else describe_location(s) for s in shown]
    text = (f"Symbols matching {query!r} ({len(found)}):\n" + "\n".join(lines)
            if found else f"No symbols match {query!r}.")
    if len(found) > limit:
        text += f"\n[cut: showing {limit} of {len(found)} symbols; refine the query]"
    return ToolResult.success(text, {"symbols": shown, "total": len(found),
                                     "truncated": len(found) > limit})


async def _cwd_servers(session: LspSession) -> list[LanguageServer]:
    """Servers for the languages whose root marker is in the run's cwd."""
    servers = []
    for spec in session.pool.specs.values():
        if not spec.enabled or spec.find_root(session.run.cwd, session.run.cwd) is None:
            continue
        binary = await session.pool.binary(spec)
        if binary is not None:
            servers.append(session.server_at(spec, session.run.cwd, binary))
    return servers


async def code_actions(session: LspSession, args: CodeActions) -> ToolResult:
    """Quick fixes and refactorings the servers offer on a line (or a symbol on it)."""
    path = session.run.resolve(args.file)
    check_cell(session, path, args.cell, "code_actions", needs_cell=True)
    servers, reason = await session.servers_for(path)
    if not servers:
        raise ToolError(ErrorCode.UNAVAILABLE, f"No language server for "
                        f"{session.run.relpath(path)}: {reason}. Call lsp with action=status.")
    document = await asyncio.to_thread(session.document_now, path)
    text, first_line, where = located(session, document, args.cell)
    lines = text.splitlines()
    if not 1 <= args.line <= max(len(lines), 1):
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"line {args.line} is outside {where} ({len(lines)} lines).")
    if args.symbol:
        start = locate_symbol(text, args.line, args.symbol, args.occurrence,
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
                                                session.limits.diagnostics_timeout_seconds)
        except (ServerUnavailable, LspRequestError) as exc:
            problems.append(str(exc))
            return []
        if not server.capabilities or not server.capabilities.code_action_provider:
            return []
        on_line = [d for d in snapshot.items
                   if d.range.start.line <= wanted.end.line and d.range.end.line >= start.line]
        result = await server.request(types.TEXT_DOCUMENT_CODE_ACTION,
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
    place = describe_place(session, path, args.cell, args.line)
    lines = [f"Code actions at {place} ({len(offered)}):" if offered
             else f"No code actions at {place}."]
    lines += [f"- {a['title']}" + (f" [{a['kind']}]" if a.get("kind") else "") +
              f" ({a['server']})" for a in offered]
    lines += [f"  {problem}" for problem in problems]
    return ToolResult.success("\n".join(lines), {"actions": offered, "problems": problems})


async def diagnostics(session: LspSession, ctx: CallContext, args: Diagnostics) -> ToolResult:
    """A file's diagnostics (waiting for publication, bounded), or the project check for '*'."""
    if args.file == "*":
        return await project_diagnostics(session, ctx)
    path = session.run.resolve(args.file)
    rel = session.run.relpath(path)
    if not await asyncio.to_thread(path.is_file):
        raise ToolError(ErrorCode.NOT_FOUND, f"{rel} is not a file. Check the path with glob.")
    check_cell(session, path, args.cell, "diagnostics", needs_cell=False)
    cell = args.cell
    if cell is not None:
        cell_span(session, await asyncio.to_thread(session.document_now, path), cell)
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
    limit = session.limits.max_diagnostics
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
    marked = [spec for spec in session.pool.specs.values()
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
                                                session.limits.project_check_timeout_seconds)
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
    limit = session.limits.max_diagnostics
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
    binary = await session.pool.binary(spec)
    if binary is None:
        raise ProjectCheckError(f"{spec.command[0]} not found on PATH or in the Python "
                                "environment's bin folder")
    server = session.server_at(spec, session.run.cwd, binary)
    sources = await session.project_sources(server)
    if sources is None:
        raise ProjectCheckError(f"more than {session.limits.max_project_sources} source files "
                                "to open; raise LanguageServerSupervisor.max_project_sources or "
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
            server = session.pool.existing((option.root, option.spec.name))
            if server is not None:
                entry.update({k: v for k, v in server.status().items()
                              if k in ("running", "pid", "uptime_seconds", "last_error", "restarts")})
        entry.setdefault("running", False)
        entries.append(entry)
    return entries


async def status(session: LspSession, args: Status) -> ToolResult:
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
                                         list(session.pool.specs.values()))
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


async def reload(session: LspSession, args: Reload) -> ToolResult:
    """Restart the servers for a file's root (or every server the run's cwd uses)."""
    if args.file:
        servers, reason = await session.servers_for(session.run.resolve(args.file))
    else:
        servers, reason = await _cwd_servers(session), "no server serves the run's cwd"
        known = {id(s) for s in servers}
        servers += [s for key in session.servers
                    if (s := session.pool.existing(key)) and id(s) not in known]
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
