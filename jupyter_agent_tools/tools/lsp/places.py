"""What the `lsp` actions and `lsp_rename` share: where the agent points (file, cell, line,
symbol) as a server position, and asking a server about it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path

from ...lsp.positions import locate_symbol
from ...lsp.server import LanguageServer
from ...lsp.session import Availability, LspSession, SourceDocument
from ...notebooks import (
    CellEditor,
    FileCells,
    NotebookError,
    is_notebook_path,
    open_shared_notebook,
    read_notebook,
    resolve_cell,
)
from ...runtime import CallContext, ErrorCode, ToolError
from ..notebook_errors import notebook_error
from .args import LspArgs, SymbolAt

NAVIGATION: dict[str, tuple[str, str, type]] = {
    "definition": (types.TEXT_DOCUMENT_DEFINITION, "definition_provider", types.DefinitionParams),
    "type_definition": (types.TEXT_DOCUMENT_TYPE_DEFINITION, "type_definition_provider",
                        types.TypeDefinitionParams),
    "implementation": (types.TEXT_DOCUMENT_IMPLEMENTATION, "implementation_provider",
                       types.ImplementationParams),
    "references": (types.TEXT_DOCUMENT_REFERENCES, "references_provider", types.ReferenceParams),
}


def supports(server: LanguageServer, capability: str, action: str) -> None:
    if not getattr(server.capabilities, capability, None):
        raise ToolError(ErrorCode.UNAVAILABLE,
                        f"{server.spec.name} does not offer {action}. Try definition, "
                        "references or grep instead.")


def check_cell(session: LspSession, path: Path, cell: int | None, action: str, *,
               needs_cell: bool) -> None:
    """`cell` goes with notebooks only, and a notebook needs it where a position is asked."""
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


def cell_span(session: LspSession, document: SourceDocument, cell: int) -> tuple[int, int]:
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


def located(session: LspSession, document: SourceDocument, cell: int | None
            ) -> tuple[str, int, str]:
    """The text in which `line` counts (the file, or the cell), its first document line, and
    how messages name it."""
    if document.notebook is None or cell is None:
        return document.text, 0, "the file"
    first, count = cell_span(session, document, cell)
    return "\n".join(document.lines[first:first + count]), first, f"cell {cell}"


def describe_place(session: LspSession, path: Path, cell: int | None, line: int) -> str:
    """`main.py:4`, or `analysis.ipynb [cell 3] line 4`."""
    rel = session.run.relpath(path)
    return f"{rel} [cell {cell}] line {line}" if cell is not None else f"{rel}:{line}"


async def symbol_position(session: LspSession, args: SymbolAt, action: str
                          ) -> tuple[Path, SourceDocument, LanguageServer, types.Position, str]:
    """file (+ cell) + line + symbol → (path, what the server sees of it, its navigation
    server, LSP position in that, note)."""
    if not args.symbol:
        raise ToolError(ErrorCode.MISSING_SYMBOL,
                        f"{action} needs `symbol`: a name that appears on line {args.line}, e.g. "
                        "the function or variable you are asking about.")
    path = session.run.resolve(args.file)
    check_cell(session, path, args.cell, action, needs_cell=True)
    server = await session.navigation_server(path)
    document = await session.open_document(server, path)
    text, first_line, where = located(session, document, args.cell)
    found = locate_symbol(text, args.line, args.symbol, args.occurrence,
                          first_line=first_line, where=where)
    return path, document, server, found.position, found.note


def locations_of(result: Any) -> list[tuple[str, types.Range]]:
    items = result if isinstance(result, (list, tuple)) else ([] if result is None else [result])
    found = []
    for item in items:
        if isinstance(item, types.LocationLink):
            found.append((item.target_uri, item.target_selection_range))
        elif isinstance(item, types.Location):
            found.append((item.uri, item.range))
    return found


def with_note(text: str, note: str) -> str:
    return f"{text}\n({note})" if note else text


async def navigation_request(server: LanguageServer, action: str, path: Path,
                             position: types.Position) -> list[tuple[str, types.Range]]:
    method, capability, params_type = NAVIGATION[action]
    supports(server, capability, action)
    document = types.TextDocumentIdentifier(from_fs_path(str(path)))
    if action == "references":
        params: Any = types.ReferenceParams(
            text_document=document, position=position,
            context=types.ReferenceContext(include_declaration=True),
        )
    else:
        params = params_type(text_document=document, position=position)
    return locations_of(await server.request(method, params))


async def read_every_source(session: LspSession, server: LanguageServer) -> str | None:
    """A server that indexes only open files (clangd with compile_flags.txt) answers only from
    where it looked: open every source under its root and let it read them first. None when
    done, else what kept it from seeing them all."""
    sources = await session.project_sources(server)
    if sources is None:
        return (f"{session.run.relpath(server.root)} has more than "
                f"{session.limits.max_project_sources} source files to open, and "
                f"{server.spec.name} sees only the files it has read. Add a compile_commands.json "
                "(CMake: -DCMAKE_EXPORT_COMPILE_COMMANDS=ON; make: bear -- make) and raise "
                "LanguageServerSupervisor.max_project_sources")
    reports = await session.diagnostics_many(sources, save=False)
    unread = sorted({session.run.relpath(r.path) for r in reports if not r.complete})
    if unread:
        return (f"{server.spec.name} had not finished reading {', '.join(unread[:10])}; try "
                "again in a moment")
    return None




async def cell_by_id(session: LspSession, ctx: CallContext, args: LspArgs) -> int:
    """The number of the notebook cell whose id `args.cell` is (agents may send a number as
    a string too)."""
    assert isinstance(args.cell, str)
    if args.file is None:
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        "`cell` addresses a cell of a notebook: give `file` too.")
    path = await asyncio.to_thread(ctx.run.resolve, args.file)
    if not is_notebook_path(path.name):
        check_cell(session, path, 1, "", needs_cell=False)  # refuses `cell` on a plain file
    runtime, shown = ctx.runtime, ctx.run.relpath(path)
    editor: CellEditor | None = await open_shared_notebook(
        runtime.parent, path.relative_to(runtime.root_path).as_posix())
    try:
        if editor is None:
            file = await asyncio.to_thread(read_notebook, runtime.root_path, path,
                                           runtime.max_notebook_bytes, shown=shown)
            editor = FileCells(file.notebook)
        return resolve_cell(editor, args.cell)
    except NotebookError as exc:
        raise notebook_error(exc, doing="read", path=shown) from None


def build_config_note(session: LspSession, option: Availability) -> str:
    """What an agent should know when a server guesses how the project builds."""
    assert option.root is not None
    names = " or ".join(option.spec.build_config)
    return (f"{option.spec.name} has no {names} in {session.run.relpath(option.root) or '.'}. "
            f"{option.spec.build_config_hint}")


async def build_config_notes(session: LspSession, path: Path) -> list[str]:
    """The notes of every server of `path` that guesses how its project builds."""
    return [build_config_note(session, option) for option in await session.availability(path)
            if option.ok and option.guesses_build]
