"""read, write, edit: the harness file tools (registered when the run has a working directory)."""

from __future__ import annotations

import asyncio
import errno
import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from ..files import (
    DecodedText,
    FileMissing,
    LineBreakText,
    NotText,
    OsRefused,
    TooLarge,
    is_text,
    line_endings,
    read_bytes_inside,
    read_decoded_inside,
    real_root,
    write_files_atomically,
)
from ..files.cached import read_cached_beneath
from ..files.order import bytes_sha256
from ..notebooks import (
    Cell,
    InvalidNotebook,
    Notebook,
    NotebookError,
    NotebookFile,
    StaleNotebook,
    cell_number,
    is_notebook_path,
    open_shared_notebook,
    read_notebook,
    saved_images,
    write_sources,
)
from ..notebooks.current import check_loadable
from ..runtime import CallContext, ErrorCode, Tier, Tool, ToolArgs, ToolError, ToolResult
from .notebook_errors import notebook_error
from .outputs import EditOutput, ReadOutput, WriteOutput

# Where old_string occurs several times, the lines of the first few are named.
MAX_LISTED_OCCURRENCES = 20


# A notebook cell as tools take it: its number (from 1, as JupyterLab shows them) or its id.
CellArg = Annotated[int, Field(ge=1)] | Annotated[str, Field(min_length=1, max_length=256)]


class ReadArgs(ToolArgs):
    path: str = Field(description="File to read, relative to the run's working directory.")
    offset: int | None = Field(
        None, ge=1, description="First line to show (1-based); in a notebook, the first cell.")
    limit: int | None = Field(
        None, ge=1, description="How many lines to show; in a notebook, how many cells.")
    cell: CellArg | None = Field(
        None, description="Notebooks only: show just this cell, named by its number (from 1, "
                          "as JupyterLab shows them) or its nbformat cell id.")
    outputs: bool | Literal["images"] = Field(
        False, description="Notebooks only: true shows the text of cell outputs in full, not "
                           "just a one-line summary of each; \"images\" also returns the "
                           "images they saved (plots) as image blocks, downscaled to fit the "
                           "server's size limit.")


class Read(Tool):
    name = "read"
    tier = Tier.READ
    description = (
        "Read a text file. Lines come numbered (1-based); use offset and limit to page through "
        "long files. Binary files are refused; use bash to inspect them. A notebook (.ipynb) "
        "is shown as its cells, numbered from 1 as in JupyterLab, each with its type, its "
        "source numbered by line within the cell, and a summary of its outputs (outputs=true "
        "shows their text, outputs=\"images\" also the saved images); offset and limit then "
        "count cells, and cell shows one cell (by number or id). The file's encoding and line "
        "endings are kept by edits; read notes a file that is not UTF-8 or has CRLF endings."
    )
    Args = ReadArgs
    Output = ReadOutput
    path_fields = ("path",)

    def label(self, args: ReadArgs) -> str:
        return f"read {args.path}" + (f" [cell {args.cell}]" if args.cell is not None else "")

    def precheck(self, _ctx: CallContext, args: ReadArgs) -> None:
        notebook = is_notebook_path(args.path)
        if not notebook and (args.cell is not None or args.outputs):
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"cell and outputs are for notebooks (.ipynb), and {args.path} is a "
                            "plain file: call read again without them.")
        if args.cell is not None and (args.offset is not None or args.limit is not None):
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            "offset and limit page through a notebook's cells; with cell, "
                            "leave them out (read shows the whole cell).")

    async def call(self, ctx: CallContext, args: ReadArgs) -> ToolResult:
        # A small file the kernel holds in memory is read on the loop, at once; other disk
        # work and formatting a big file stay off it: a plain file is resolved and read in
        # one trip to a thread.
        if ctx.runtime.max_loop_read_bytes > 0 and not is_notebook_path(args.path):
            result = self._read_cached(ctx, args)
            if result is not None:
                return result
        path, result = await asyncio.to_thread(self._read_plain_file, ctx, args)
        if result is not None:
            return result
        # An open notebook (RTC) is read from its shared document, as edit changes it:
        # the human's unsaved cells are there, and the cell numbers are theirs.
        shared = await open_shared_notebook(
            ctx.runtime.parent, path.relative_to(ctx.runtime.root_path).as_posix())
        if shared is not None:
            try:  # one answer for a notebook JupyterLab cannot load, open or not
                await check_loadable(shared, ctx.runtime.root_path, path, ctx.run.relpath(path),
                                     ctx.runtime.max_notebook_bytes)
            except InvalidNotebook as exc:
                raise notebook_error(exc, doing="read") from None
            notebook = Notebook.of_data(shared.content())
            return await asyncio.to_thread(
                _notebook_listing, ctx, args, path, notebook, shared=True)
        return await asyncio.to_thread(self._read, ctx, args, path)

    def _read_cached(self, ctx: CallContext, args: ReadArgs) -> ToolResult | None:
        """The listing of a small text file read from the kernel's caches (`files.cached`),
        or None: then the usual read in a thread answers, and says why a file cannot be read."""
        if args.path.startswith(("/", "~")):
            return None
        runtime = ctx.runtime
        top = real_root(runtime.root_path)
        # Not normalized: `a/../b` is resolved by the kernel, where a link `a` is refused.
        relative = os.path.join(ctx.run.cwd_under_root, args.path)
        data = read_cached_beneath(top, relative,
                                   min(runtime.max_loop_read_bytes, runtime.max_read_bytes))
        if data is None or not is_text(data):
            return None
        # No link was on the way, so the lexical path is the real one.
        path = Path(os.path.normpath(os.path.join(top, relative)))
        if is_notebook_path(path.name):  # an open one is read from its shared document
            return None
        return self._read_text(ctx, args, path, decoded=DecodedText.of(data))

    def _read_plain_file(self, ctx: CallContext, args: ReadArgs) -> tuple[Path, ToolResult | None]:
        """The resolved path, and its listing unless it is a notebook (None: read on the loop's
        side, where its shared document is)."""
        path = ctx.run.resolve(args.path)
        return path, None if is_notebook_path(path.name) else self._read(ctx, args, path)

    def _read(self, ctx: CallContext, args: ReadArgs, path: Path) -> ToolResult:
        runtime = ctx.runtime
        if is_notebook_path(path.name):
            rel = ctx.run.relpath(path)
            try:
                file = read_notebook(runtime.root_path, path, runtime.max_notebook_bytes,
                                     shown=rel)
            except InvalidNotebook as exc:  # shown as text, so that it can be repaired
                if exc.reason == "unloadable":  # one answer, as when it is open
                    raise notebook_error(exc, doing="read") from None
                return self._read_text(ctx, args, path, note=str(exc))
            # A later `write` over the notebook is refused if someone changed it since.
            ctx.run.seen_files.saw_bytes(path, file.snapshot)
            notebook = file.notebook
            return _notebook_listing(ctx, args, path, notebook)
        return self._read_text(ctx, args, path)

    @staticmethod
    def _read_text(ctx: CallContext, args: ReadArgs, path: Path, note: str = "",
                   decoded: DecodedText | None = None) -> ToolResult:
        runtime = ctx.runtime
        rel = ctx.run.relpath(path)
        if decoded is None:
            decoded = read_decoded_inside(runtime.root_path, path, runtime.max_read_bytes,
                                          shown=rel)
        # A later `write` over this file is refused if someone changed it since.
        ctx.run.seen_files.saw(path, decoded.text)
        lines = decoded.text.splitlines()
        endings = line_endings(decoded.text)
        start = (args.offset or 1) - 1
        count = args.limit or runtime.max_read_lines
        shown = lines[start : start + count]
        max_chars = runtime.max_line_chars  # a traitlet: read once, not once a line
        if max(map(len, shown), default=0) > max_chars:
            shown = [_clip(line, max_chars) for line in shown]
        # One format string mapped over the lines: a generator of f-strings cost a visible
        # share of a small read's CPU.
        numbered = f"{{:>{len(str(start + len(shown)))}}}\t{{}}"
        body = "\n".join(map(numbered.format, range(start + 1, start + len(shown) + 1), shown))
        end = start + len(shown)
        broken, note = note, ""
        if end < len(lines):
            note = f"\n[lines {start + 1}-{end} of {len(lines)}; call read with offset={end + 1} for more]"
        elif not lines:
            note = "[empty file]"
        elif start >= len(lines):
            note = f"[offset {start + 1} is past the end: the file has {len(lines)} lines]"
        if broken:  # an .ipynb that is not a valid notebook: its text, to repair it
            note += f"\n[shown as text: {broken}]"
        note += _format_note(decoded.encoding_name if decoded.encoding != "utf-8" else None,
                             endings)
        return ToolResult.success(
            body + note,
            {"path": rel, "start_line": start + 1, "end_line": end,
             "total_lines": len(lines), "encoding": decoded.encoding,
             "line_endings": endings},
        )


def _format_note(encoding: str | None, endings: str | None) -> str:
    """What read says of a file that is not UTF-8 with LF line breaks, for edits to come."""
    notes = []
    if encoding is not None:
        notes.append(f"[encoding: {encoding}, not UTF-8; edits write it back in {encoding}, "
                     "and refuse characters it cannot hold]")
    if endings == "crlf":
        notes.append("[line endings: CRLF (\\r\\n), shown without \\r; edit matches old_string "
                     "written with \\n and writes new lines with \\r\\n]")
    elif endings == "mixed":
        notes.append("[line endings: mixed CRLF and LF, shown without \\r; edit matches "
                     "old_string written with \\n, and new lines take the line ending of the "
                     "text they replace]")
    return "".join("\n" + note for note in notes)


class WriteArgs(ToolArgs):
    path: str = Field(description="File to create or overwrite.")
    content: str = Field(description="The whole new content of the file.")


class Write(Tool):
    name = "write"
    tier = Tier.WRITE
    description = (
        "Create or overwrite a file with the given content (parent folders are created). "
        "A file you read (or wrote) that someone else changed since is not overwritten "
        "(stale_edit): read it again. "
        "New diagnostics from the language server, if one serves the file, are attached."
    )
    Args = WriteArgs
    Output = WriteOutput
    path_fields = ("path",)

    def label(self, args: WriteArgs) -> str:
        return f"write {args.path}"

    async def call(self, ctx: CallContext, args: WriteArgs) -> ToolResult:
        path = await asyncio.to_thread(ctx.run.resolve, args.path)
        # In the file's order across every run: read, compare, write, nobody in between.
        async with ctx.runtime.file_locks.hold([path]):
            return await self._write_locked(ctx, args, path)

    async def _write_locked(self, ctx: CallContext, args: WriteArgs, path: Path) -> ToolResult:
        rel = ctx.run.relpath(path)
        size = len(args.content.encode())
        if is_notebook_path(path.name):
            notebook = await asyncio.to_thread(_valid_notebook, rel, args.content)
            # An open notebook (RTC) takes the new content in its shared document: cells
            # are updated one by one (by id), the human's view in place.
            shared = await open_shared_notebook(
                ctx.runtime.parent, path.relative_to(ctx.runtime.root_path).as_posix())
            if shared is not None:
                shared.set_content(notebook.as_nbformat())
                ctx.wrote(path)
                return ToolResult.success(
                    f"Overwrote {rel} in the open notebook's shared document ({size} bytes); "
                    "the collaboration server saves it.",
                    {"path": rel, "created": False, "bytes": size, "shared_document": True})
        created = await asyncio.to_thread(self._write, ctx, path, args.content)
        ctx.wrote(path, created=created)
        verb = "Created" if created else "Overwrote"
        return ToolResult.success(
            f"{verb} {rel} ({size} bytes).",
            {"path": rel, "created": bool(created), "bytes": size},
        )

    @staticmethod
    def _write(ctx: CallContext, path: Path, content: str) -> list[Path]:
        """Write `content` over what the file holds now, if the run saw that (or never read
        the file); stale_edit if the file changed since the run read or wrote it, or changes
        between this read and the write."""
        root, rel = ctx.runtime.root_path, ctx.run.relpath(path)
        based_on: dict[Path, str | None] = {}
        changed = False
        try:
            data = read_bytes_inside(root, path, ctx.runtime.max_read_bytes, shown=rel)
        except (FileMissing, OsRefused) as exc:
            if isinstance(exc, OsRefused) and exc.error.errno != errno.ENOENT:
                raise  # a missing folder is created; what else the OS refuses, it refuses
            based_on[path] = None  # created only if nobody creates it meanwhile
        except TooLarge:
            pass  # too large to read (for the agent too): replaced, as an unread file
        else:
            based_on[path] = bytes_sha256(data)
            changed = ctx.run.seen_files.matches(path, data) is False
        if changed:
            raise ToolError(ErrorCode.STALE_EDIT,
                            f"{rel} changed since you last read or wrote it (another run or "
                            "the user wrote it); nothing was written. Read it again and write "
                            "it on what it holds now, or change it with edit.")
        created = write_files_atomically({path: content}, root=root, based_on=based_on,
                                         relpath=ctx.run.relpath)
        ctx.run.seen_files.saw(path, content)
        return created


def _valid_notebook(rel: str, content: str) -> Notebook:
    try:
        return Notebook.from_text(content, name=rel)
    except InvalidNotebook as exc:
        raise notebook_error(exc, doing="write") from None


class EditArgs(ToolArgs):
    path: str = Field(description="File to edit.")
    cell: CellArg | None = Field(
        None, description="Notebooks (.ipynb) only, and required there: the cell to edit, "
                          "numbered from 1 over all cells as JupyterLab shows them, or its "
                          "nbformat cell id.")
    old_string: str = Field(min_length=1, description="Exact text to replace.")
    new_string: str = Field(description="Replacement text.")
    replace_all: bool = Field(False, description="Replace every occurrence, not just one.")


class Edit(Tool):
    name = "edit"
    tier = Tier.WRITE
    description = (
        "Replace exact text in a file. old_string must occur exactly once unless replace_all "
        "is true; include enough surrounding lines to make it unique. New diagnostics are "
        "attached. The file keeps its encoding and line endings: \\n in old_string also "
        "matches \\r\\n, and new lines take the file's line break. In a notebook (.ipynb), "
        "name the cell (number or id): only that cell's source changes; outputs, metadata "
        "and the file's formatting stay as they were."
    )
    Args = EditArgs
    Output = EditOutput
    path_fields = ("path",)

    def label(self, args: EditArgs) -> str:
        return f"edit {args.path}" + (f" [cell {args.cell}]" if args.cell is not None else "")

    def precheck(self, _ctx: CallContext, args: EditArgs) -> None:
        notebook = is_notebook_path(args.path)
        if notebook and args.cell is None:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"{args.path} is a notebook: name the cell to edit (cell, numbered "
                            "from 1 as JupyterLab shows them; read the notebook to see them).")
        if not notebook and args.cell is not None:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"cell is only for notebooks (.ipynb), and {args.path} is a plain "
                            "file: call edit again without cell.")

    async def call(self, ctx: CallContext, args: EditArgs) -> ToolResult:
        if args.old_string == args.new_string:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            "old_string and new_string are the same; there is nothing to change.")
        path = await asyncio.to_thread(ctx.run.resolve, args.path)
        # In the file's order across every run: the edit is computed on the bytes it
        # replaces, and lands only if nobody else wrote them meanwhile.
        async with ctx.runtime.file_locks.hold([path]):
            if args.cell is not None:
                return await self._edit_notebook(ctx, args, path)
            count, kept = await asyncio.to_thread(self._edit, ctx, args, path)
        ctx.wrote(path)
        return ToolResult.success(
            f"Replaced {count} occurrence{'s' if count > 1 else ''} in "
            f"{ctx.run.relpath(path)}{kept}.",
            {"path": ctx.run.relpath(path), "replacements": count},
        )

    @staticmethod
    def _edit(ctx: CallContext, args: EditArgs, path: Path) -> tuple[int, str]:
        """The replacements made, and how the file was kept (a note)."""
        root = ctx.runtime.root_path
        data = read_bytes_inside(root, path, ctx.runtime.max_read_bytes,
                                 shown=ctx.run.relpath(path))
        if not is_text(data):
            raise NotText(ctx.run.relpath(path))
        decoded = DecodedText.of(data)
        # CRLF and LF are the same line break to old_string: read shows lines without \r.
        text = LineBreakText(decoded.text)
        starts = text.starts(args.old_string)
        count = len(starts)
        rel = ctx.run.relpath(path)
        if count == 0:
            raise ToolError(ErrorCode.NOT_FOUND,
                            f"old_string was not found in {rel}. Read the file and copy the text "
                            "exactly, including whitespace.")
        if count > 1 and not args.replace_all:
            lines = _line_numbers(text.plain, starts[:MAX_LISTED_OCCURRENCES])
            raise ToolError(
                ErrorCode.INVALID_ARGUMENTS,
                f"old_string occurs {count} times in {rel} ({_listed(lines, count)}). "
                "Add surrounding context to make it unique, or set replace_all.",
                data={"occurrences": count, "lines": lines},
            )
        new_text = text.replaced(args.old_string, args.new_string, starts)
        # The writer keeps the file's encoding (or refuses text it cannot hold), and writes
        # only over the bytes read here.
        write_files_atomically({path: new_text}, root=root, relpath=ctx.run.relpath,
                               based_on={path: bytes_sha256(data)})
        ctx.run.seen_files.changed(path, decoded.text, new_text, bytes_sha256(data))
        kept = [f"{decoded.encoding_name} encoding"] if decoded.encoding != "utf-8" else []
        if text.endings in ("crlf", "mixed") and "\n" in args.new_string.replace("\r\n", "\n"):
            kept.append("CRLF line endings" if text.endings == "crlf"
                        else "the line endings of the replaced text")
        return count, f" (kept its {' and '.join(kept)})" if kept else ""

    async def _edit_notebook(self, ctx: CallContext, args: EditArgs, path: Path) -> ToolResult:
        assert args.cell is not None
        rel = ctx.run.relpath(path)
        # An open notebook (RTC) changes in its shared document: the human's view updates in
        # place and the collaboration server saves it; otherwise the file is written.
        shared = await open_shared_notebook(
            ctx.runtime.parent, path.relative_to(ctx.runtime.root_path).as_posix())
        formatting_kept = True
        saved: dict[str, str] = {}
        if shared is not None:
            try:  # one answer for a notebook JupyterLab cannot load, open or not
                await check_loadable(shared, ctx.runtime.root_path, path, rel,
                                     ctx.runtime.max_notebook_bytes)
            except InvalidNotebook as exc:
                raise notebook_error(exc) from None
            number = _cell_number(rel, args.cell, shared.ids(), shared=True)
            spans, source = _cell_spans(rel, shared.sources(), args, number)
            shared.replace(number, spans, args.new_string)
            ctx.run.notebooks.edited(
                path.relative_to(ctx.runtime.root_path).as_posix(),
                (shared.ids()[number - 1], shared.cell_types()[number - 1],
                 shared.sources()[number - 1], number), source)
            how = " (in the open notebook's shared document)"
        else:
            spans, source, notebook, number = await asyncio.to_thread(
                self._edit_file, ctx, args, path)
            cell = notebook.cells[number - 1]  # as it was read
            ctx.run.notebooks.edited(
                path.relative_to(ctx.runtime.root_path).as_posix(),
                (cell.id, cell.cell_type, source.replace(args.old_string, args.new_string),
                 number), source)
            formatting_kept = notebook.style.exact
            saved = {"nbformat": notebook.saved_format}
            if notebook.upgraded_from:
                saved["upgraded_from"] = notebook.upgraded_from
                how = (f" (saved as nbformat {notebook.saved_format}: the file was nbformat "
                       f"{notebook.upgraded_from}, upgraded as Jupyter does when it saves an "
                       "old notebook; its cells now have ids)")
            elif not formatting_kept:
                how = (" (the file's JSON had spacing no standard style reproduces; it is now "
                       "written as nbformat writes it)")
            else:
                how = ""
        ctx.wrote(path)
        before = source[: spans[0][0]]
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1) + 1
        return ToolResult.success(
            f"Replaced {len(spans)} occurrence{'s' if len(spans) > 1 else ''} in {rel} "
            f"[cell {number}] {line}:{column}{how}.",
            {"path": rel, "cell": number, "line": line, "column": column,
             "replacements": len(spans), "shared_document": shared is not None,
             "formatting_kept": formatting_kept, **saved},
        )

    @staticmethod
    def _edit_file(ctx: CallContext, args: EditArgs,
                   path: Path) -> tuple[list[tuple[int, int]], str, Notebook, int]:
        """Where old_string was, the cell's source before, the notebook, the cell's number."""
        assert args.cell is not None
        file = _read_notebook(ctx, path)
        cells = file.notebook.cells
        number = _cell_number(file.shown, args.cell, [cell.id for cell in cells])
        spans, source = _cell_spans(file.shown, [cell.source for cell in cells], args, number)
        try:
            written = write_sources(ctx.runtime.root_path, file,
                                    {number: source.replace(args.old_string, args.new_string)})
        except StaleNotebook as exc:
            raise notebook_error(exc) from None
        ctx.run.seen_files.changed_bytes(path, file.snapshot, bytes_sha256(written))
        return spans, source, file.notebook, number


def _cell_number(rel: str, ref: int | str, ids: list[str | None], *,
                 shared: bool = False) -> int:
    """The number of the cell `ref` names (by number or id); invalid_arguments if none."""
    try:
        return cell_number(ref, ids, shared=shared)
    except NotebookError as exc:
        raise notebook_error(exc, path=rel) from None


def _cell_spans(rel: str, sources: list[str], args: EditArgs,
                number: int) -> tuple[list[tuple[int, int]], str]:
    """Where old_string is in the source of cell `number` (character spans), and that source.

    Refuses text the cell does not hold (saying which cells do), and several occurrences
    without replace_all.
    """
    source, needle = sources[number - 1], args.old_string
    starts, index = [], source.find(needle)
    while index != -1:
        starts.append(index)
        index = source.find(needle, index + len(needle))
    if not starts:
        elsewhere = [number for number, other in enumerate(sources, 1) if needle in other]
        hint = (f" It occurs in cell{'s' if len(elsewhere) > 1 else ''} "
                f"{', '.join(map(str, elsewhere))}: edit that cell." if elsewhere else
                " Read the notebook and copy the text exactly, including whitespace.")
        raise ToolError(ErrorCode.NOT_FOUND,
                        f"old_string was not found in {rel} [cell {number}].{hint}",
                        data={"cell": number, "cells": elsewhere})
    if len(starts) > 1 and not args.replace_all:
        lines = _line_numbers(source, starts[:MAX_LISTED_OCCURRENCES])
        raise ToolError(
            ErrorCode.INVALID_ARGUMENTS,
            f"old_string occurs {len(starts)} times in {rel} [cell {number}] "
            f"({_listed(lines, len(starts))} of the cell). Add surrounding context to make it "
            "unique, or set replace_all.",
            data={"occurrences": len(starts), "cell": number, "lines": lines},
        )
    return [(start, start + len(needle)) for start in starts], source


def _read_notebook(ctx: CallContext, path: Path) -> NotebookFile:
    rel = ctx.run.relpath(path)
    try:
        return read_notebook(ctx.runtime.root_path, path, ctx.runtime.max_notebook_bytes,
                             shown=rel)
    except InvalidNotebook as exc:
        raise notebook_error(exc) from None


def _notebook_listing(ctx: CallContext, args: ReadArgs, path: Path, notebook: Notebook, *,
                      shared: bool = False) -> ToolResult:
    """A notebook as read shows it: its cells, numbered, with line-numbered sources."""
    runtime = ctx.runtime
    rel = ctx.run.relpath(path)
    cells = notebook.cells
    if args.cell is not None:
        try:
            chosen = notebook.find_cell(args.cell)
        except NotebookError as exc:
            raise notebook_error(exc, doing="read", path=rel) from None
        start, selected = chosen.number - 1, [chosen]
    else:
        start = (args.offset or 1) - 1
        selected = cells[start:]
    parts = [f"{rel}: {notebook.language} notebook, {len(cells)} "
             f"cell{'' if len(cells) == 1 else 's'}"]
    shown: list[dict] = []
    images = _ImageBudget(runtime.max_read_image_bytes, runtime.max_read_images,
                          enabled=args.outputs == "images")
    lines_shown = 0
    for cell in selected:
        # Without a limit, whole cells are shown until the line budget is spent.
        if args.limit is not None and len(shown) >= args.limit:
            break
        if args.limit is None and shown and lines_shown + len(cell.lines) > runtime.max_read_lines:
            break
        pictures = images.of(cell.number, notebook.data["cells"][cell.number - 1])
        parts.append(_cell_text(cell, runtime.max_line_chars, full_outputs=bool(args.outputs),
                                pictures=pictures))
        shown.append(_cell_data(cell, full_outputs=bool(args.outputs), pictures=pictures))
        lines_shown += len(cell.lines)
    end = start + len(shown)
    paged = args.cell is None  # one cell asked for is shown whole: nothing more to page to
    if paged and end < len(cells):
        parts.append(f"[cells {start + 1}-{end} of {len(cells)}; call read with "
                     f"offset={end + 1} for more]")
    elif paged and start >= len(cells):
        parts.append(f"[offset {start + 1} is past the end: the notebook has {len(cells)} cells]")
    parts += images.notes()
    if shared:
        parts.append("[read from the open notebook's shared document, unsaved changes included]")
    elif notebook.upgraded_from:
        parts.append(f"[nbformat {notebook.upgraded_from}, shown upgraded to nbformat 4 as "
                     "Jupyter opens it (its cells have no ids yet); a change saves it as "
                     f"nbformat {notebook.saved_format}, as JupyterLab does]")
    # A later change to a cell shown here is refused if the human changes it meanwhile.
    ctx.run.notebooks.saw(path.relative_to(runtime.root_path).as_posix(),
                          [(cell.id, cell.cell_type, cell.source, cell.number)
                           for cell in cells[start:end]])
    return ToolResult.success(
        "\n".join(parts),
        {"path": rel, "notebook": True, "shared_document": shared,
         "language": notebook.language, "nbformat": notebook.format,
         "total_cells": len(cells), "start_cell": start + 1, "end_cell": end, "cells": shown},
        blocks=images.blocks,
    )


class _ImageBudget:
    """The images one read returns: each within max_bytes, at most max_count of them."""

    def __init__(self, max_bytes: int, max_count: int, *, enabled: bool) -> None:
        self.max_bytes = max_bytes
        self.max_count = max_count
        self.enabled = enabled
        self.blocks: list[dict[str, Any]] = []
        self.left_out: list[int] = []  # cells with images past max_count
        self.omitted = 0  # images over max_bytes even downscaled

    def of(self, number: int, raw_cell: dict[str, Any]) -> dict[int, str]:
        """What the cell's text says of each image output (by output number, from 1); the
        images that fit become blocks."""
        if not self.enabled or raw_cell.get("cell_type") != "code":
            return {}
        said: dict[int, str] = {}
        for image in saved_images(raw_cell.get("outputs", ()), self.max_bytes):
            if image.data is None:
                self.omitted += 1
                said[image.output] = image.line()
            elif len(self.blocks) >= self.max_count:
                if number not in self.left_out:
                    self.left_out.append(number)
                said[image.output] = (f"{image.mime_type}: not shown, past the "
                                      f"{self.max_count} images of one read (max_read_images)")
            else:
                self.blocks.append(image.block())
                said[image.output] = f"image {len(self.blocks)}: {image.line()}"
        return said

    def notes(self) -> list[str]:
        notes = []
        if self.omitted:
            notes.append(f"[{self.omitted} image{'s' if self.omitted > 1 else ''} left out: "
                         f"over the {self.max_bytes:,}-byte limit of one image "
                         "(max_read_image_bytes) or not decodable]")
        if self.left_out:
            cells = ", ".join(map(str, self.left_out))
            notes.append(f"[images of cell{'s' if len(self.left_out) > 1 else ''} {cells} not "
                         f"returned: at most {self.max_count} per read; read one cell "
                         "with cell and outputs=\"images\" for them]")
        return notes


def _cell_text(cell: Cell, max_chars: int, *, full_outputs: bool,
               pictures: dict[int, str]) -> str:
    kind = cell.cell_type
    if cell.cell_type == "code":
        language = cell.language.name or "not code the tools know"
        kind += f", {language}" + (f" (%%{cell.language.magic})" if cell.language.magic else "")
        if cell.execution_count is not None:
            kind += f", run [{cell.execution_count}]"
    lines = cell.lines
    width = len(str(len(lines)))
    text = [f"[cell {cell.number}{f', id {cell.id}' if cell.id else ''}] {kind}"]
    text += [f"{number:>{width}}\t{_clip(line, max_chars)}" for number, line in
             enumerate(lines, 1)] or ["  (empty)"]
    if cell.attachments:
        text.append(f"  attachments: {', '.join(cell.attachments)}")
    if cell.outputs and not full_outputs:
        text.append("  outputs: " + "; ".join(output.line() for output in cell.outputs))
    elif cell.outputs:
        for index, output in enumerate(cell.outputs, 1):
            text.append(f"  output {index}: {output.line()}")
            text += [f"  | {_clip(line, max_chars)}" for line in (output.text or "").splitlines()]
            if index in pictures:
                text.append(f"  | [{pictures[index]}]")
    return "\n".join(text)


def _cell_data(cell: Cell, *, full_outputs: bool, pictures: dict[int, str]) -> dict:
    outputs = []
    for index, output in enumerate(cell.outputs, 1):
        entry: dict[str, Any] = {"output_type": output.output_type, "kinds": list(output.kinds),
                                 "size": output.size}
        if full_outputs and output.text is not None:
            entry["text"] = output.text
        if index in pictures:
            entry["image"] = pictures[index]
        outputs.append(entry)
    return {"cell": cell.number, "cell_type": cell.cell_type, "language": cell.language.name,
            "magic": cell.language.magic, "id": cell.id, "lines": len(cell.lines),
            "execution_count": cell.execution_count, "outputs": outputs,
            "attachments": list(cell.attachments)}


def _line_numbers(text: str, starts: list[int]) -> list[int]:
    """The line (from 1) of each offset of `starts` (ascending), in one pass over `text`."""
    lines: list[int] = []
    line, counted_to = 1, 0
    for start in starts:
        line += text.count("\n", counted_to, start)
        counted_to = start
        lines.append(line)
    return lines


def _listed(lines: list[int], count: int) -> str:
    shown = ", ".join(map(str, lines))
    return f"lines {shown}" if len(lines) == count else f"first at lines {shown}"


def _clip(line: str, max_chars: int) -> str:
    return line if len(line) <= max_chars else line[:max_chars] + " [line cut]"
