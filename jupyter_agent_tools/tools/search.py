"""glob and grep: find files and lines (registered when the run has a working directory)."""

from __future__ import annotations

import re

import pathspec
from pydantic import Field

from ..files import read_text
from ..runtime import CallContext, ErrorCode, Tier, Tool, ToolArgs, ToolError, ToolResult


def _glob_spec(pattern: str) -> pathspec.PathSpec:
    # gitignore-style globs: "*.py" matches at any depth, "src/**/*.ts" is anchored.
    return pathspec.GitIgnoreSpec.from_lines([pattern])


class GlobArgs(ToolArgs):
    pattern: str = Field(min_length=1, description='A glob such as "**/*.py" or "src/*.ts".')
    path: str | None = Field(None, description="Folder to search (default: the working directory).")


class Glob(Tool):
    name = "glob"
    tier = Tier.READ
    description = (
        "List files matching a glob (gitignore syntax: '*.py' matches at any depth). "
        ".gitignored files are skipped."
    )
    Args = GlobArgs

    def label(self, args: GlobArgs) -> str:
        return f"glob {args.pattern}"

    async def call(self, ctx: CallContext, args: GlobArgs) -> ToolResult:
        base = ctx.run.resolve(args.path or ".")
        if not base.is_dir():
            raise ToolError(ErrorCode.NOT_FOUND, f"{args.path} is not a folder.")
        spec = _glob_spec(args.pattern)
        walker = ctx.run.walker(skip_binary=False, max_file_bytes=2**62)
        limit = ctx.runtime.glob_max_results
        found: list[str] = []
        total = 0
        for path in walker.files(base):
            if spec.match_file(path.relative_to(base).as_posix()):
                total += 1
                if len(found) < limit:
                    found.append(ctx.run.relpath(path))
        text = "\n".join(found) if found else f"No files match {args.pattern!r}."
        if total > limit:
            text += f"\n[{total - limit} more not shown; narrow the pattern]"
        return ToolResult.success(text, {"files": found, "total": total,
                                         "skipped": walker.stats.to_json()})


class GrepArgs(ToolArgs):
    pattern: str = Field(min_length=1, description="A Python regular expression.")
    path: str | None = Field(None, description="File or folder (default: the working directory).")
    glob: str | None = Field(None, description='Only files matching this glob, e.g. "*.py".')


class Grep(Tool):
    name = "grep"
    tier = Tier.READ
    description = (
        "Search file contents with a regular expression; answers file:line: text. Binary, "
        "oversized and .gitignored files are skipped. For code structure prefer ast_grep."
    )
    Args = GrepArgs

    def label(self, args: GrepArgs) -> str:
        return f"grep {args.pattern}"

    async def call(self, ctx: CallContext, args: GrepArgs) -> ToolResult:
        try:
            regex = re.compile(args.pattern)
        except re.error as exc:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"pattern is not a valid regular expression ({exc}). Escape special "
                            "characters such as ( [ . * with a backslash.") from None
        base = ctx.run.resolve(args.path or ".")
        if not base.exists():
            raise ToolError(ErrorCode.NOT_FOUND, f"{args.path} does not exist.")
        spec = _glob_spec(args.glob) if args.glob else None
        walker = ctx.run.walker()
        runtime = ctx.runtime
        limit = runtime.grep_max_results
        matches: list[dict] = []
        total = 0
        for path in walker.files(base):
            if spec and base.is_dir() and not spec.match_file(path.relative_to(base).as_posix()):
                continue
            try:
                text = read_text(path, runtime.read_max_bytes)
            except ToolError:
                continue
            for number, line in enumerate(text.splitlines(), 1):
                if regex.search(line):
                    total += 1
                    if len(matches) < limit:
                        matches.append({"file": ctx.run.relpath(path), "line": number,
                                        "text": line[: runtime.max_line_chars]})
        lines = [f"{m['file']}:{m['line']}: {m['text']}" for m in matches]
        text = "\n".join(lines) if lines else f"No matches for {args.pattern!r}."
        if total > limit:
            text += f"\n[{total - limit} more matches not shown; narrow the pattern or path]"
        skipped = walker.stats.describe()
        if skipped:
            text += f"\n[{skipped}]"
        return ToolResult.success(text, {"matches": matches, "total": total,
                                         "skipped": walker.stats.to_json()})
