"""apply_patch: a unified diff over one or many files, applied all-or-nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import Field, PrivateAttr
from typing_extensions import override
from unidiff import PatchedFile, PatchSet
from unidiff.errors import UnidiffParseError

from ..files import read_text_inside, write_files_atomically
from ..notebooks import InvalidNotebook, Notebook, is_notebook_path
from ..runtime import CallContext, ErrorCode, Tier, Tool, ToolArgs, ToolError, ToolResult
from .notebook_errors import notebook_error

# How far (in lines) a hunk may have drifted from the line numbers in its header.
_MAX_DRIFT = 200


class ApplyPatchArgs(ToolArgs):
    patch: str = Field(min_length=1, description="A unified diff (git diff or diff -u format).")
    # The parsed patch (ApplyPatch.prepare): parsed once, off the event loop.
    _parsed: PatchSet | None = PrivateAttr(None)

    @property
    def parsed(self) -> PatchSet:
        if self._parsed is None:
            raise RuntimeError("apply_patch arguments used before ApplyPatch.prepare")
        return self._parsed


def parse_patch(text: str) -> PatchSet:
    """`text` as a patch set; invalid_arguments when it is not a unified diff or changes nothing."""
    try:
        patch = PatchSet(text if text.endswith("\n") else text + "\n")
    except UnidiffParseError as exc:
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"patch is not a unified diff ({exc}). Use `--- a/file`, "
                        "`+++ b/file` headers and `@@ -l,n +l,n @@` hunks.") from None
    if not patch:
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        "patch holds no file changes. Include ---/+++ headers and hunks.")
    return patch


class ApplyPatch(Tool):
    name = "apply_patch"
    tier = Tier.WRITE
    description = (
        "Apply a unified diff touching one or many files (create with --- /dev/null, delete "
        "with +++ /dev/null). All or nothing: if any hunk does not apply, no file changes and "
        "the error names the hunk. New diagnostics are attached."
    )
    Args = ApplyPatchArgs

    @override
    async def prepare(self, ctx: CallContext, args: ApplyPatchArgs) -> None:
        # A 4 MB patch takes seconds to parse: never on the loop. An unparseable one is
        # refused here, before anyone is asked to approve it.
        args._parsed = await asyncio.to_thread(parse_patch, args.patch)

    def paths(self, args: ApplyPatchArgs) -> list[str]:
        """The files the patch names."""
        return [patched.path for patched in args.parsed]

    async def call(self, ctx: CallContext, args: ApplyPatchArgs) -> ToolResult:
        # Parsing, matching hunks and the disk work stay off the server's event loop.
        changes, created, summary = await asyncio.to_thread(self._apply, ctx, args)
        ctx.wrote(*changes, created=created)
        return ToolResult.success(
            "Applied patch: " + "; ".join(summary) + ".",
            {"files": [ctx.run.relpath(path) for path in changes]},
        )

    @staticmethod
    def _apply(ctx: CallContext,
               args: ApplyPatchArgs) -> tuple[list[Path], list[Path], list[str]]:
        root = ctx.runtime.root_path
        patch = args.parsed
        changes: dict[Path, str | None] = {}
        summary = []
        for patched in patch:
            target = ctx.run.resolve(patched.path)
            if patched.is_removed_file:
                changes[target] = None
                summary.append(f"deleted {ctx.run.relpath(target)}")
                continue
            original = ("" if patched.is_added_file
                        else read_text_inside(root, target, ctx.runtime.max_read_bytes,
                                              shown=ctx.run.relpath(target)))
            changes[target] = _apply_hunks(ctx.run.relpath(target), original, patched)
            if is_notebook_path(target.name):  # a notebook stays valid nbformat, as with write
                try:
                    Notebook.from_text(changes[target] or "", name=ctx.run.relpath(target))
                except InvalidNotebook as exc:
                    raise notebook_error(exc, doing="write") from None
            verb = "created" if patched.is_added_file else "modified"
            summary.append(f"{verb} {ctx.run.relpath(target)} (+{patched.added} -{patched.removed})")
        created = write_files_atomically(changes, root=root, relpath=ctx.run.relpath)
        return list(changes), created, summary


def _apply_hunks(name: str, original: str, patched: PatchedFile) -> str:
    lines = original.splitlines(keepends=True)
    offset = 0
    for number, hunk in enumerate(patched, 1):
        old = [line.value for line in hunk if line.is_context or line.is_removed]
        new = [line.value for line in hunk if line.is_context or line.is_added]
        expected = max(hunk.source_start - 1, 0) + offset
        at = _locate(lines, old, expected)
        if at is None:
            raise ToolError(
                ErrorCode.FAILED,
                f"Hunk {number} of {name} (@@ -{hunk.source_start},{hunk.source_length} @@) does "
                "not match the file; no file was changed. Read the file and regenerate the diff.",
            )
        lines[at : at + len(old)] = new
        offset += len(new) - len(old)
    return "".join(lines)


def _locate(lines: list[str], old: list[str], expected: int) -> int | None:
    """Where `old` occurs, trying the expected line first, then nearby, nearest first."""

    def matches(at: int) -> bool:
        window = lines[at : at + len(old)]
        return len(window) == len(old) and all(
            a.rstrip("\r\n") == b.rstrip("\r\n") for a, b in zip(window, old, strict=True)
        )

    if not old:
        return min(expected, len(lines))
    for drift in range(_MAX_DRIFT + 1):
        for at in (expected - drift, expected + drift) if drift else (expected,):
            if 0 <= at <= len(lines) - len(old) and matches(at):
                return at
    return None
