"""apply_patch: a unified diff over one or many files, applied all-or-nothing."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pydantic import Field, PrivateAttr
from typing_extensions import override
from unidiff import Hunk, PatchedFile, PatchSet
from unidiff.errors import UnidiffParseError

from ..files import DecodedText, NotText, is_text, read_bytes_inside, write_files_atomically
from ..files.order import bytes_sha256
from ..notebooks import (
    InvalidNotebook,
    Notebook,
    SharedRewrite,
    is_notebook_path,
    open_shared_notebook,
    write_with_open_notebooks,
)
from ..runtime import CallContext, ErrorCode, Tier, Tool, ToolArgs, ToolError, ToolResult
from .notebook_errors import notebook_error
from .outputs import ApplyPatchOutput

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
    Output = ApplyPatchOutput

    @override
    async def prepare(self, ctx: CallContext, args: ApplyPatchArgs) -> None:
        # A 4 MB patch takes seconds to parse: never on the loop. An unparseable one is
        # refused here, before anyone is asked to approve it.
        args._parsed = await asyncio.to_thread(parse_patch, args.patch)

    def paths(self, args: ApplyPatchArgs) -> list[str]:
        """The files the patch names."""
        return [patched.path for patched in args.parsed]

    async def call(self, ctx: CallContext, args: ApplyPatchArgs) -> ToolResult:
        targets = await asyncio.to_thread(
            lambda: [ctx.run.resolve(patched.path) for patched in args.parsed])
        # In each file's order across every run (all its files locked, in sorted order): the
        # hunks are matched on the bytes they replace, which nobody writes meanwhile.
        async with ctx.runtime.file_locks.hold(targets):
            return await self._apply(ctx, args)

    async def _apply(self, ctx: CallContext, args: ApplyPatchArgs) -> ToolResult:
        # Parsing, matching hunks and the disk work stay off the server's event loop.
        changes, summary, notebooks, based_on, originals = await asyncio.to_thread(
            self._plan, ctx, args)
        root = ctx.runtime.root_path
        # A notebook open with real-time collaboration changes in its shared document (its
        # clients see the change in place; the collaboration server saves it), checked and
        # changed with no await between; put back if the files cannot be written.
        shared = {}
        for path, (before, after) in notebooks.items():
            notebook = await open_shared_notebook(ctx.runtime.parent,
                                                  path.relative_to(root).as_posix())
            if notebook is not None:
                shared[path] = SharedRewrite(notebook, before, after)
        for path, change in shared.items():
            if change.stale:
                raise ToolError(ErrorCode.STALE_EDIT, f"{ctx.run.relpath(path)} is open in "
                                "JupyterLab with cells that differ from the file the patch was "
                                "made against (unsaved typing); nothing was written. Read it "
                                "again (read shows the open notebook) and change its cells with "
                                "edit {path, cell, old_string, new_string}.")
        on_disk = {path: text for path, text in changes.items() if path not in shared}

        def write() -> list[Path]:
            created = write_files_atomically(
                on_disk, root=root, relpath=ctx.run.relpath,
                based_on={path: base for path, base in based_on.items() if path in on_disk})
            # What the run saw follows its change (hashing texts: in this thread, not the loop).
            for path, original in originals.items():
                base, text = based_on[path], changes[path]
                if base is not None:
                    ctx.run.seen_files.changed(path, original, text, base)
                elif text is not None:  # created whole by this patch
                    ctx.run.seen_files.saw(path, text)
            return created

        created = await write_with_open_notebooks(shared.values(), write)
        ctx.wrote(*changes, created=created)
        return ToolResult.success(
            "Applied patch: " + "; ".join(summary) + ".",
            {"files": [ctx.run.relpath(path) for path in changes]},
        )

    @staticmethod
    def _plan(ctx: CallContext, args: ApplyPatchArgs
              ) -> tuple[dict[Path, str | None], list[str], dict[Path, tuple[Notebook, Notebook]],
                         dict[Path, str | None], dict[Path, str]]:
        """Each file's new text (None: deleted), what changes in words, each valid
        notebook modified (as it was and as it becomes), and the hash of each file's bytes the
        change was computed on (None: a file the patch creates, which must not exist), and the
        text of each file changed as it was."""
        root = ctx.runtime.root_path
        patch = args.parsed
        changes: dict[Path, str | None] = {}
        based_on: dict[Path, str | None] = {}
        originals: dict[Path, str] = {}
        notebooks: dict[Path, tuple[Notebook, Notebook]] = {}
        summary = []
        for patched in patch:
            target = ctx.run.resolve(patched.path)
            rel = ctx.run.relpath(target)
            if patched.is_removed_file:
                changes[target] = None
                summary.append(f"deleted {rel}")
                continue
            if patched.is_added_file:
                if os.path.lexists(target):
                    raise ToolError(ErrorCode.STALE_EDIT,
                                    f"{rel} exists, and the patch creates it (--- /dev/null); "
                                    "no file was changed. Read it and make the patch against "
                                    "what it holds, or write it whole with write.")
                original, based_on[target] = "", None
            else:
                data = read_bytes_inside(root, target, ctx.runtime.max_read_bytes, shown=rel)
                if not is_text(data):
                    raise NotText(rel)
                original, based_on[target] = DecodedText.of(data).text, bytes_sha256(data)
            text = changes[target] = _apply_hunks(rel, original, patched)
            originals[target] = original
            if is_notebook_path(target.name):  # a notebook stays valid nbformat, as with write
                try:
                    after = Notebook.from_text(text, name=rel)
                except InvalidNotebook as exc:
                    raise notebook_error(exc, doing="write") from None
                try:
                    notebooks[target] = (Notebook.from_text(original, name=rel), after)
                except InvalidNotebook:  # repaired by the patch: nobody has it open as one
                    pass
            verb = "created" if patched.is_added_file else "modified"
            summary.append(f"{verb} {rel} (+{patched.added} -{patched.removed})")
        return changes, summary, notebooks, based_on, originals


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
        lines[at : at + len(old)] = _with_file_endings(hunk, lines[at : at + len(old)])
        offset += len(new) - len(old)
    return "".join(lines)


def _with_file_endings(hunk: Hunk, matched: list[str]) -> list[str]:
    """The hunk's new lines as the file writes lines: context lines as they are in the file
    (`matched`), added lines with the line break of the file's line before them (a patch
    made with LF changes a CRLF file in CRLF)."""
    out: list[str] = []
    kept = iter(matched)
    ending = "\r\n" if matched and matched[0].endswith("\r\n") else None
    for line in hunk:
        if line.is_removed or line.is_context:
            own = next(kept)
            ending = "\r\n" if own.endswith("\r\n") else "\n" if own.endswith("\n") else ending
            if line.is_context:
                out.append(own)
        elif line.is_added:
            value = line.value
            if ending == "\r\n" and value.endswith("\n") and not value.endswith("\r\n"):
                value = value[:-1] + "\r\n"
            out.append(value)
    return out


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
