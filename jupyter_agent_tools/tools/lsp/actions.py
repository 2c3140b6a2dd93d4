"""What `lsp` does with a run's servers, action by action (`diagnostics` is in
`diagnostics`, `lsp_rename` in `rename`)."""

from __future__ import annotations

import asyncio
import html
import re
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path

from ...lsp.errors import ServerUnavailable
from ...lsp.languages import LANGUAGES
from ...lsp.server import LanguageServer
from ...lsp.session import (
    LspSession,
    SourceDocument,
    describe_location,
    unique_locations,
)
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
from .code_actions import code_actions
from .diagnostics import diagnostics
from .errors import failure_text
from .places import (
    build_config_note,
    check_cell,
    describe_place,
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
            return await code_actions(session, ctx, action)
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
    language = LANGUAGES.get(server.spec.language_id(document.served) or "")
    asked = args.action
    if asked == "implementation" and language and not language.separate_implementations:
        asked = "definition"
        note = "; ".join(filter(None, [note, f"{language.name} has no implementations apart "
                                       "from definitions: this is the definition"]))
    found = await navigation_request(server, asked, document.served, position)
    limit = session.limits.max_references if args.action == "references" else len(found)
    located = await session.locations(found[:limit])
    locations = unique_locations(located)
    total = len(found) - (len(located) - len(locations))  # each place counted once
    what = args.action.replace("_", " ")
    if not locations:
        text = f"No {what} found for {args.symbol!r} at {describe_place(session, path, args.cell, args.line)}."
    else:
        lines = [describe_location(loc) for loc in locations]
        text = f"{what.capitalize()} of {args.symbol!r} ({total}):\n" + "\n".join(lines)
        if len(found) > limit:
            text += f"\n[cut: showing {len(locations)} of {total} references]"
    data = {"locations": locations, "total": total, "truncated": len(found) > limit,
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
    text = _plain(_hover_text(result.contents)).strip() if result else ""
    if not text:
        text = f"No hover information for {args.symbol!r} at {describe_place(session, path, args.cell, args.line)}."
        return ToolResult.success(with_note(text, note), {"hover": text})
    brief, omitted = (text, False) if args.full else _brief(text)
    shown = brief if not omitted else (
        f"{brief}\n\n(The documentation goes on: hover with full: true shows all "
        f"{len(text):,} characters.)")
    return ToolResult.success(with_note(shown, note), {"hover": brief, "full": not omitted})


# Hover's default answer: about 300 tokens (a token is about four characters of English).
_HOVER_BRIEF_CHARS = 1_100
_FENCE = re.compile(r"^```[^\n]*\n.*?^```[ \t]*$", re.MULTILINE | re.DOTALL)
_RULE = re.compile(r"^[ \t]*(?:-{3,}|\*{3,}|_{3,})[ \t]*$", re.MULTILINE)


def _plain(markdown: str) -> str:
    """A server's hover Markdown as plain Markdown: HTML entities decoded (`&nbsp;` that
    servers use for indentation becomes a space), hard line-break backslashes dropped."""
    text = html.unescape(markdown).replace("\xa0", " ")
    return re.sub(r"\\\n", "\n", text)


def _brief(text: str) -> tuple[str, bool]:
    """The signature (the code blocks before the documentation) and the documentation's
    first paragraph, within `_HOVER_BRIEF_CHARS`; whether anything was left out."""
    rest = text.lstrip()
    signature = []
    while True:
        fence = _FENCE.match(rest)
        if fence is not None:
            signature.append(fence.group(0))
            rest = rest[fence.end():].lstrip()
            continue
        rule = _RULE.match(rest)
        if rule is not None:
            rest = rest[rule.end():].lstrip()
            continue
        break
    blocks = [block.strip() for block in re.split(r"\n[ \t]*\n", rest)
              if block.strip() and not _RULE.fullmatch(block.strip())]
    paragraph = blocks[0] if blocks else ""
    omitted = len(blocks) > 1
    brief = "\n\n".join(part for part in ["\n".join(signature), paragraph] if part)
    if not brief.strip():
        brief = text
    if len(brief) > _HOVER_BRIEF_CHARS:
        brief, omitted = brief[:_HOVER_BRIEF_CHARS].rstrip() + " …", True
        if brief.count("```") % 2:  # a signature cut inside its block: close it
            brief += "\n```"
    return brief, omitted


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
        # Not in node_modules (a dependency's file is no project file), which searches
        # no longer skip by name.
        walker = session.run.walker(
            skip_dirs=(*session.run.runtime.skip_dirs, "node_modules"))
        for path in walker.files(server.root):
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
        await server.ensure_started()
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
    found = unique_locations(found)
    limit = session.limits.max_workspace_symbols
    shown = found[:limit]
    lines = [f"{s['kind']} {s['name']} {_symbol_place(s)}" if "name" in s
             else describe_location(s) for s in shown]
    text = (f"Symbols matching {query!r} ({len(found)}):\n" + "\n".join(lines)
            if found else f"No symbols match {query!r}.")
    if len(found) > limit:
        text += f"\n[cut: showing {limit} of {len(found)} symbols; refine the query]"
    return ToolResult.success(text, {"symbols": shown, "total": len(found),
                                     "truncated": len(found) > limit})


def _symbol_place(symbol: dict[str, Any]) -> str:
    """`helpers.py:1`, or in a notebook `analysis.ipynb [cell 3] 1:5`."""
    if "cell" in symbol:
        return f"{symbol['path']} [cell {symbol['cell']}] {symbol['line']}:{symbol['column']}"
    return f"{symbol['path']}:{symbol['line']}"


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
        if option.guesses_build:
            entry["build_config"] = build_config_note(session, option)
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
        if e.get("build_config"):
            lines.append(f"    note: {e['build_config']}")
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
            lines.append(f"{server.spec.name}: failed to start: {failure_text(exc)}")
        entries.append({k: v for k, v in server.status().items() if k != "binary"})
    return ToolResult.success("Reloaded:\n" + "\n".join(lines), {"servers": entries})
