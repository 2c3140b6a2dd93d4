"""A run's parser handle: structural search, staging rewrites, resolving them.

This is the machinery behind ast_grep, ast_edit and resolve. It raises ToolError with
a message that says what to do next; it knows nothing of HTTP.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..runtime import ErrorCode, ToolError
from .edits import EditStatus, EditStore, FileChange, StagedEdit, content_hash, unified_diff
from .languages import GRAMMAR_IDS, close_ids, extensions_for, language_for_path
from .pattern import Pattern, PatternError, compile_pattern
from .rewrite import Replacement, apply
from .worker import SearchJob

if TYPE_CHECKING:
    from ..runtime import Run
    from .provider import ParserProvider


@dataclass
class SearchOutcome:
    """What a structural search found, with paths still absolute."""

    pattern: Pattern
    files_searched: int
    answer: dict[str, Any]
    skipped: dict[str, int]


class StructuralSession:
    """The per-run handle of the parser resource."""

    def __init__(self, provider: ParserProvider, run: Run) -> None:
        self.provider = provider
        self.run = run
        self.edits = EditStore(run.id, provider.max_staged_edits)

    # -- search -----------------------------------------------------------------------

    def _language(self, base: Path, language: str | None) -> str:
        if language:
            if language not in GRAMMAR_IDS:
                close = close_ids(language)
                hint = f" Close ids: {', '.join(close)}." if close else ""
                raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                                f"Unknown language {language!r}.{hint} Use a grammar id of "
                                "tree-sitter-language-pack, e.g. python, javascript, typescript, "
                                "tsx, rust, go, c, cpp, java, dart.")
            return language
        if base.is_file():
            inferred = language_for_path(base)
            if inferred is None:
                raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                                f"Cannot infer the language of {base.name!r} from its extension; "
                                "pass `language` (e.g. python, javascript, typescript, rust).")
            return inferred
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        "`language` is required when `path` is a folder (e.g. python, "
                        "javascript, typescript, tsx, rust, go, c, cpp, java, dart); or pass "
                        "a file path to infer it from the extension.")

    def compile(self, pattern: str, language: str) -> Pattern:
        """The compiled pattern; ToolError(unparseable_pattern) naming the contexts tried."""
        try:
            return compile_pattern(pattern, language)
        except PatternError as exc:
            tried = ", ".join(exc.contexts) or "none"
            raise ToolError(
                ErrorCode.UNPARSEABLE_PATTERN,
                f"The pattern does not parse as {language} ({exc}); contexts tried: {tried}. "
                f"Write it as valid {language} code with $NAME / $$$NAME where code varies, "
                "and check brackets and quotes are balanced.",
                data={"contexts_tried": exc.contexts, "language": language},
            ) from None

    def _files(self, base: Path, language: str) -> tuple[list[tuple[str, int]], dict[str, int]]:
        walker = self.run.walker(skip_binary=False)
        extensions = extensions_for(language)
        files: list[tuple[str, int]] = []
        for path in walker.files(base):
            if base.is_dir() and path.suffix not in extensions:
                continue
            try:
                files.append((str(path), path.stat().st_size))
            except OSError:
                continue
        return files, walker.stats.to_json()

    async def search(self, pattern: str, path: str | None, language: str | None, *,
                     limit: int, with_ranges: bool = False) -> SearchOutcome:
        """Every match of `pattern` under `path` (default: the run's cwd), `limit` in full."""
        base = self.run.resolve(path or ".")
        if not base.exists():
            raise ToolError(ErrorCode.NOT_FOUND,
                            f"{path} does not exist. Check the path with glob.")
        language = self._language(base, language)
        if base.is_dir() and not extensions_for(language):
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"No file extensions are known for {language!r}; pass a file path.")
        compiled = self.compile(pattern, language)
        # A big tree takes a while to walk: not on the server's event loop.
        files, skipped = await asyncio.to_thread(self._files, base, language)
        job = SearchJob(pattern=pattern, language=language, files=[], limit=limit,
                        max_text=self.provider.max_match_chars, with_ranges=with_ranges)
        answer = await self.provider.search(job, files)
        skipped["binary"] = answer["counts"].get("binary", 0)
        return SearchOutcome(compiled, len(files), answer, skipped)

    # -- staged edits ---------------------------------------------------------------------

    async def stage(self, pattern: str, rewrite: str, path: str | None,
                    language: str | None) -> StagedEdit:
        """Compute the rewrite of every match and keep it, unwritten, as this run's edit."""
        limit = self.provider.max_edit_replacements
        outcome = await self.search(pattern, path, language, limit=limit, with_ranges=True)
        answer = outcome.answer
        if answer["total"] > limit:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"The pattern matches {answer['total']} places, over the "
                            f"{limit}-replacement limit of one edit. Narrow `path` or the pattern.")
        by_file: dict[str, list[Replacement]] = {}
        for match in answer["matches"]:
            by_file.setdefault(match["file"], []).append(
                Replacement(match["range"][0], match["range"][1],
                            {k: tuple(v) if v else None
                             for k, v in match["capture_ranges"].items()}))
        changes: list[FileChange] = []
        for file, replacements in by_file.items():
            target = Path(file)
            before = target.read_bytes()
            if content_hash(before) != answer["hashes"][file]:
                raise ToolError(ErrorCode.STALE_EDIT,
                                f"{self.run.relpath(target)} changed while the edit was being "
                                "computed. Call ast_edit again.")
            after, count = apply(rewrite, before, replacements)
            if after == before:
                continue
            relpath = self.run.relpath(target)
            changes.append(FileChange(target, relpath, content_hash(before), after, count,
                                      unified_diff(relpath, before, after)))
        edit = self.edits.stage(pattern, rewrite, outcome.pattern.language, changes)
        self.run.events.publish("edit_staged", run_id=self.run.id, edit_id=edit.id,
                                files=[c.relpath for c in changes], counts=edit.counts(),
                                replacements=edit.replacements)
        return edit

    def staged(self, edit_id: str) -> StagedEdit:
        """This run's edit `edit_id` if it still waits; ToolError(unknown_edit) otherwise."""
        edit = self.edits.get(edit_id)
        if edit is None:
            raise ToolError(ErrorCode.UNKNOWN_EDIT,
                            f"This run has no staged edit {edit_id!r}. Use the edit_id that "
                            "ast_edit returned in this run, or stage the change again.")
        if edit.status is not EditStatus.STAGED:
            raise ToolError(ErrorCode.UNKNOWN_EDIT,
                            f"{edit_id} was already resolved ({edit.status.value}); an edit "
                            "resolves once. Call ast_edit again to stage a new change.")
        return edit

    def resolve(self, edit_id: str, accept: bool) -> tuple[StagedEdit, list[Path]]:
        """Accept (write all files, or none) or discard a staged edit."""
        edit = self.staged(edit_id)
        if not accept:
            edit.status = EditStatus.DISCARDED
            self._announce(edit)
            return edit, []
        stale = edit.stale_files(self.run.runtime.root_path)
        if stale:
            edit.status = EditStatus.STALE
            self._announce(edit)
            raise ToolError(ErrorCode.STALE_EDIT,
                            f"{', '.join(stale)} changed since {edit_id} was staged; nothing was "
                            "written. Call ast_edit again to stage the change on the current "
                            "content.", data={"edit_id": edit_id, "stale_files": stale})
        edit.write(self.run.runtime.root_path)
        edit.status = EditStatus.ACCEPTED
        self._announce(edit)
        return edit, [change.path for change in edit.files]

    def _announce(self, edit: StagedEdit) -> None:
        self.run.events.publish("edit_resolved", run_id=self.run.id, edit_id=edit.id,
                                action=edit.status.value, files=[c.relpath for c in edit.files],
                                counts=edit.counts(), replacements=edit.replacements)

