"""read, write, edit: the harness file tools (registered when the run has a working directory)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import Field

from ..files import read_text_inside, write_files_atomically
from ..runtime import CallContext, ErrorCode, Tier, Tool, ToolArgs, ToolError, ToolResult


class ReadArgs(ToolArgs):
    path: str = Field(description="File to read, relative to the run's working directory.")
    offset: int | None = Field(None, ge=1, description="First line to show (1-based).")
    limit: int | None = Field(None, ge=1, description="How many lines to show.")


class Read(Tool):
    name = "read"
    tier = Tier.READ
    description = (
        "Read a text file. Lines come numbered (1-based); use offset and limit to page through "
        "long files. Binary files are refused; use bash to inspect them."
    )
    Args = ReadArgs
    path_fields = ("path",)

    def label(self, args: ReadArgs) -> str:
        return f"read {args.path}"

    async def call(self, ctx: CallContext, args: ReadArgs) -> ToolResult:
        # Disk work and formatting a big file stay off the server's event loop.
        return await asyncio.to_thread(self._read, ctx, args)

    def _read(self, ctx: CallContext, args: ReadArgs) -> ToolResult:
        runtime = ctx.runtime
        path = ctx.run.resolve(args.path)
        lines = read_text_inside(runtime.root_path, path, runtime.read_max_bytes,
                                 shown=ctx.run.relpath(path)).splitlines()
        start = (args.offset or 1) - 1
        count = args.limit or runtime.read_max_lines
        shown = lines[start : start + count]
        width = len(str(start + len(shown)))
        body = "\n".join(
            f"{number:>{width}}\t{_clip(line, runtime.max_line_chars)}"
            for number, line in enumerate(shown, start + 1)
        )
        end = start + len(shown)
        note = ""
        if end < len(lines):
            note = f"\n[lines {start + 1}-{end} of {len(lines)}; call read with offset={end + 1} for more]"
        elif not lines:
            note = "[empty file]"
        elif start >= len(lines):
            note = f"[offset {start + 1} is past the end: the file has {len(lines)} lines]"
        return ToolResult.success(
            body + note,
            {"path": ctx.run.relpath(path), "start_line": start + 1, "end_line": end,
             "total_lines": len(lines)},
        )


class WriteArgs(ToolArgs):
    path: str = Field(description="File to create or overwrite.")
    content: str = Field(description="The whole new content of the file.")


class Write(Tool):
    name = "write"
    tier = Tier.WRITE
    description = (
        "Create or overwrite a file with the given content (parent folders are created). "
        "New diagnostics from the language server, if one serves the file, are attached."
    )
    Args = WriteArgs
    path_fields = ("path",)

    def label(self, args: WriteArgs) -> str:
        return f"write {args.path}"

    async def call(self, ctx: CallContext, args: WriteArgs) -> ToolResult:
        path, created = await asyncio.to_thread(self._write, ctx, args)
        ctx.wrote(path, created=created)
        verb = "Created" if created else "Overwrote"
        rel = ctx.run.relpath(path)
        return ToolResult.success(
            f"{verb} {rel} ({len(args.content.encode())} bytes).",
            {"path": rel, "created": bool(created), "bytes": len(args.content.encode())},
        )


    @staticmethod
    def _write(ctx: CallContext, args: WriteArgs) -> tuple[Path, list[Path]]:
        path = ctx.run.resolve(args.path)
        return path, write_files_atomically({path: args.content}, root=ctx.runtime.root_path,
                                            relpath=ctx.run.relpath)


class EditArgs(ToolArgs):
    path: str = Field(description="File to edit.")
    old_string: str = Field(min_length=1, description="Exact text to replace.")
    new_string: str = Field(description="Replacement text.")
    replace_all: bool = Field(False, description="Replace every occurrence, not just one.")


class Edit(Tool):
    name = "edit"
    tier = Tier.WRITE
    description = (
        "Replace exact text in a file. old_string must occur exactly once unless replace_all "
        "is true; include enough surrounding lines to make it unique. New diagnostics are "
        "attached."
    )
    Args = EditArgs
    path_fields = ("path",)

    def label(self, args: EditArgs) -> str:
        return f"edit {args.path}"

    async def call(self, ctx: CallContext, args: EditArgs) -> ToolResult:
        if args.old_string == args.new_string:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            "old_string and new_string are the same; there is nothing to change.")
        path, count = await asyncio.to_thread(self._edit, ctx, args)
        ctx.wrote(path)
        return ToolResult.success(
            f"Replaced {count} occurrence{'s' if count > 1 else ''} in {ctx.run.relpath(path)}.",
            {"path": ctx.run.relpath(path), "replacements": count},
        )

    @staticmethod
    def _edit(ctx: CallContext, args: EditArgs) -> tuple[Path, int]:
        root = ctx.runtime.root_path
        path = ctx.run.resolve(args.path)
        text = read_text_inside(root, path, ctx.runtime.read_max_bytes,
                                shown=ctx.run.relpath(path))
        count = text.count(args.old_string)
        rel = ctx.run.relpath(path)
        if count == 0:
            raise ToolError(ErrorCode.NOT_FOUND,
                            f"old_string was not found in {rel}. Read the file and copy the text "
                            "exactly, including whitespace.")
        if count > 1 and not args.replace_all:
            lines = _occurrence_lines(text, args.old_string)
            raise ToolError(
                ErrorCode.INVALID_ARGUMENTS,
                f"old_string occurs {count} times in {rel} (lines {', '.join(map(str, lines))}). "
                "Add surrounding context to make it unique, or set replace_all.",
                data={"occurrences": count, "lines": lines},
            )
        new_text = text.replace(args.old_string, args.new_string)
        write_files_atomically({path: new_text}, root=root, relpath=ctx.run.relpath)
        return path, count


def _occurrence_lines(text: str, needle: str) -> list[int]:
    lines, index = [], text.find(needle)
    while index != -1:
        lines.append(text.count("\n", 0, index) + 1)
        index = text.find(needle, index + 1)
    return lines


def _clip(line: str, max_chars: int) -> str:
    return line if len(line) <= max_chars else line[:max_chars] + " [line cut]"
