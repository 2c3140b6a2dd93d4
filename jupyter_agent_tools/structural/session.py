"""A run's parser handle: structural search, staging rewrites, resolving them.

This is the machinery behind ast_grep, ast_edit and resolve. It raises ToolError with
a message that says what to do next; it knows nothing of HTTP.
"""

from __future__ import annotations

import asyncio
import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..files import FilesError, identity_inside, read_bytes_inside
from ..notebooks import (
    DocumentEdit,
    NotebookError,
    VirtualDocument,
    is_notebook_path,
    notebook_language,
    read_notebook,
)
from ..runtime import ErrorCode, ToolError
from .edits import EditStatus, EditStore, FileChange, StagedEdit, content_hash, unified_diff
from .languages import GRAMMAR_IDS, close_ids, extensions_for, language_for_path
from .notebooks import DocumentText
from .pattern import PatternError, PatternSummary, metavariable_names
from .rewrite import Replacement, apply, fill, non_overlapping, unbound_metavariables
from .worker import SearchJob, SyntaxCheckJob

if TYPE_CHECKING:
    from ..runtime import Run
    from .provider import ParserProvider


@dataclass
class SearchOutcome:
    """What a structural search found, with paths still absolute."""

    pattern: PatternSummary
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
        if base.is_file() and is_notebook_path(base.name):
            own = self._notebook_language(base)
            if language and language != own:
                raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                                f"{self.run.relpath(base)} is a {own} notebook (its kernelspec "
                                f"says so), not {language}: omit `language`, or pass {own}.")
            return own
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

    def _notebook_language(self, path: Path) -> str:
        """The language of a notebook's kernel, from its metadata."""
        relpath = self.run.relpath(path)
        try:
            data = json.loads(read_bytes_inside(self.run.runtime.root_path, path, shown=relpath))
            language = notebook_language(data.get("metadata") or {})
        except (ValueError, AttributeError):
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"{relpath} is not a notebook (not nbformat JSON); read it to see "
                            "what it holds.") from None
        if language not in GRAMMAR_IDS:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"{relpath} is a {language} notebook and there is no {language} "
                            "grammar; structural search does not cover it. Use grep.")
        return language

    def _check_size(self, what: str, text: str, limit: int) -> None:
        if len(text) > limit:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"The {what} is {len(text)} characters, over the {limit}-character "
                            f"limit (c.ParserProvider.max_{what}_chars). Write a shorter {what}: "
                            "$$$NAME stands for any run of code.")

    async def compile(self, pattern: str, language: str) -> PatternSummary:
        """The compiled pattern (on a worker); ToolError(unparseable_pattern) naming the
        contexts tried."""
        self._check_size("pattern", pattern, self.provider.max_pattern_chars)
        try:
            return await self.provider.compile(pattern, language)
        except PatternError as exc:
            tried = ", ".join(exc.contexts) or "none"
            shown = pattern.strip() if len(pattern) <= 200 else pattern.strip()[:200] + "…"
            raise ToolError(
                ErrorCode.UNPARSEABLE_PATTERN,
                f"The pattern {shown!r} does not parse as {language} ({exc.reason}); contexts "
                f"tried: {tried}. Write it as valid {language} code with $NAME / $$$NAME where "
                "code varies, and check brackets and quotes are balanced.",
                data={"contexts_tried": exc.contexts, "language": language},
            ) from None

    def _files(self, base: Path, language: str) -> tuple[list[tuple[str, int]], dict[str, int]]:
        walker = self.run.walker(skip_binary=False)
        extensions = extensions_for(language)
        files: list[tuple[str, int]] = []
        vanished = 0
        for path in walker.files(base):
            # Notebooks are kept whatever their language: a worker searches those in `language`.
            if base.is_dir() and path.suffix not in extensions \
                    and not is_notebook_path(path.name):
                continue
            try:
                files.append((str(path), path.stat().st_size))
            except OSError:  # gone since it was listed (another writer's temporary file)
                vanished += 1
        skipped = walker.stats.to_json()
        return files, _add_vanished(skipped, vanished)

    async def search(self, pattern: str, path: str | None, language: str | None, *,
                     limit: int, with_ranges: bool = False) -> SearchOutcome:
        """Every match of `pattern` under `path` (default: the run's cwd), `limit` in full."""
        base = self.run.resolve(path or ".")
        if not base.exists():
            raise ToolError(ErrorCode.NOT_FOUND,
                            f"{path} does not exist. Check the path with glob.")
        language = await asyncio.to_thread(self._language, base, language)
        if base.is_dir() and not extensions_for(language):
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"No file extensions are known for {language!r}; pass a file path.")
        compiled = await self.compile(pattern, language)
        # A big tree takes a while to walk: not on the server's event loop.
        files, skipped = await asyncio.to_thread(self._files, base, language)
        job = SearchJob(pattern=pattern, language=language, files=[], limit=limit,
                        max_text=self.provider.max_match_chars, with_ranges=with_ranges)
        answer = await self.provider.search(job, files)
        counts = answer["counts"]
        skipped["binary"] = counts.get("binary", 0)
        if counts.get("invalid_notebook"):
            skipped["invalid_notebook"] = counts["invalid_notebook"]
        vanished = counts.get("vanished", 0)
        searched = len(files) - vanished - counts.get("invalid_notebook", 0) \
            - counts.get("other_language", 0)
        return SearchOutcome(compiled, searched, answer, _add_vanished(skipped, vanished))

    # -- staged edits ---------------------------------------------------------------------

    async def stage(self, pattern: str, rewrite: str, path: str | None,
                    language: str | None) -> StagedEdit:
        """Compute the rewrite of every match and keep it, unwritten, as this run's edit."""
        self._check_size("pattern", pattern, self.provider.max_pattern_chars)
        self._check_size("rewrite", rewrite, self.provider.max_rewrite_chars)
        bound = metavariable_names(pattern)
        unbound = unbound_metavariables(rewrite, bound)
        if unbound:
            binds = f"it binds {', '.join('$' + name for name in bound)}" if bound \
                else "it binds none"
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"The rewrite uses {', '.join(unbound)}, which the pattern does not "
                            f"bind ({binds}); nothing was staged. Use only the pattern's "
                            "metavariables in the rewrite, or name them in the pattern.",
                            data={"unbound": unbound, "bound": bound})
        limit = self.provider.max_edit_replacements
        outcome = await self.search(pattern, path, language, limit=limit, with_ranges=True)
        answer = outcome.answer
        if answer["total"] > limit:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"The pattern matches {answer['total']} places, over the "
                            f"{limit}-replacement limit of one edit. Narrow `path` or the pattern.")
        # Reading, rewriting and diffing many files is disk and CPU work: off the loop.
        rewritten = await asyncio.to_thread(self._rewrite_files, rewrite, answer)
        await self._refuse_broken_syntax(outcome.pattern.language, rewritten)
        changes = [change for change, _, _, _ in rewritten]
        edit = self.edits.stage(pattern, rewrite, outcome.pattern.language, changes)
        self.run.events.publish("edit_staged", run_id=self.run.id, edit_id=edit.id,
                                files=[c.relpath for c in changes], counts=edit.counts(),
                                replacements=edit.replacements)
        return edit

    def _rewrite_files(self, rewrite: str, answer: dict[str, Any]) -> list[_Rewritten]:
        """Each changed file, its code before and after, and where the replacements landed."""
        root = self.run.runtime.root_path
        by_file: dict[str, list[Replacement]] = {}
        for match in answer["matches"]:
            by_file.setdefault(match["file"], []).append(
                Replacement(match["range"][0], match["range"][1],
                            {k: tuple(v) if v else None
                             for k, v in match["capture_ranges"].items()}))
        rewritten = []
        for file, replacements in by_file.items():
            target = Path(file)
            if is_notebook_path(target.name):
                notebook = self._rewrite_notebook(target, rewrite, replacements,
                                                  answer["hashes"][file])
                if notebook is not None:
                    rewritten.append(notebook)
                continue
            before = _read(root, target)
            if before is None or content_hash(before) != answer["hashes"][file]:
                raise ToolError(ErrorCode.STALE_EDIT,
                                f"{self.run.relpath(target)} changed while the edit was being "
                                "computed. Call ast_edit again.")
            after, spans = apply(rewrite, before, replacements)
            if after == before:
                continue
            relpath = self.run.relpath(target)
            rewritten.append((FileChange(target, relpath, content_hash(before), after,
                                         len(spans), unified_diff(relpath, before, after),
                                         identity_inside(root, target)),
                              before, after, spans))
        return rewritten

    def _rewrite_notebook(self, target: Path, rewrite: str, replacements: list[Replacement],
                          snapshot: str) -> _Rewritten | None:
        """A notebook's change: only the sources of the cells rewritten, all else kept.

        The rewrite is computed on the virtual document the search matched in (rebuilt
        from the same bytes), then written into the cells as their new sources.
        """
        root = self.run.runtime.root_path
        relpath = self.run.relpath(target)
        try:
            file = read_notebook(root, target, shown=relpath)
        except (NotebookError, ToolError):
            file = None
        if file is None or file.snapshot != snapshot:
            raise ToolError(ErrorCode.STALE_EDIT,
                            f"{relpath} changed while the edit was being computed (or is no "
                            "longer a valid notebook). Call ast_edit again.")
        document = VirtualDocument.of(file.notebook)
        before = document.text.encode("utf-8")
        positions = DocumentText(before)
        chosen = non_overlapping(replacements)
        edits = [DocumentEdit(positions.position(r.start), positions.position(r.end),
                              fill(rewrite, before, r)) for r in chosen]
        try:
            sources = document.cell_sources(edits)
        except NotebookError as exc:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"In {relpath}: {exc} Nothing was staged; narrow the pattern so it "
                            "matches code around the magics, or edit that cell with `edit`."
                            ) from None
        sources = {cell: source for cell, source in sources.items()
                   if source != document.sources[cell]}
        if not sources:
            return None
        after, spans = apply(rewrite, before, chosen)
        diff = "".join(_cell_diff(relpath, cell, document.sources[cell], source)
                       for cell, source in sorted(sources.items()))
        change = FileChange(target, relpath, file.snapshot, file.notebook.with_sources(sources),
                            len(chosen), diff, file.identity)
        return change, before, after, spans

    async def _refuse_broken_syntax(self, language: str, rewritten: list[_Rewritten]) -> None:
        """ToolError naming file and line when the rewrite adds syntax errors to any file."""
        if not rewritten:
            return
        job = SyntaxCheckJob(language, [(change.relpath, before, after, spans)
                                        for change, before, after, spans in rewritten])
        broken = [{"file": result["path"], "line": result["line"],
                   "syntax_errors_before": result["errors_before"],
                   "syntax_errors_after": result["errors_after"]}
                  for result in await self.provider.check_syntax(job)
                  if result["errors_after"] > result["errors_before"]]
        if broken:
            first = broken[0]
            more = f" (and {len(broken) - 1} more files)" if len(broken) > 1 else ""
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"The rewrite breaks the {language} syntax of {first['file']} at line "
                            f"{first['line']}{more}; nothing was staged. Check the rewrite's "
                            "brackets and quotes, and that it is valid code where each match "
                            "stands.", data={"broken_files": broken})

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

    async def resolve(self, edit_id: str, accept: bool) -> tuple[StagedEdit, list[Path]]:
        """Accept (write all files, or none) or discard a staged edit."""
        edit = self.staged(edit_id)
        if not accept:
            edit.status = EditStatus.DISCARDED
            self._announce(edit)
            return edit, []
        root = self.run.runtime.root_path
        stale = await asyncio.to_thread(edit.stale_files, root)
        if stale:
            edit.status = EditStatus.STALE
            self._announce(edit)
            raise ToolError(ErrorCode.STALE_EDIT,
                            f"{', '.join(stale)} changed since {edit_id} was staged; nothing was "
                            "written. Call ast_edit again to stage the change on the current "
                            "content.", data={"edit_id": edit_id, "stale_files": stale})
        await asyncio.to_thread(edit.write, root)
        edit.status = EditStatus.ACCEPTED
        self._announce(edit)
        return edit, [change.path for change in edit.files]

    def _announce(self, edit: StagedEdit) -> None:
        self.run.events.publish("edit_resolved", run_id=self.run.id, edit_id=edit.id,
                                action=edit.status.value, files=[c.relpath for c in edit.files],
                                counts=edit.counts(), replacements=edit.replacements)


# A rewritten file: its change, its code before and after (a notebook's virtual document),
# and where the replacements landed in the code after.
_Rewritten = tuple[FileChange, bytes, bytes, list[tuple[int, int]]]


def _cell_diff(relpath: str, cell: int, before: str, after: str) -> str:
    """A unified diff of one cell's source, headed by the notebook and the cell."""
    lines = difflib.unified_diff(before.splitlines(keepends=True),
                                 after.splitlines(keepends=True),
                                 f"a/{relpath} [cell {cell}]", f"b/{relpath} [cell {cell}]")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of cell\n"
                   for line in lines)


def _add_vanished(skipped: dict[str, int], count: int) -> dict[str, int]:
    """Files listed, then gone before they were read: counted only when a race happened."""
    if count:
        skipped["vanished"] = skipped.get("vanished", 0) + count
    return skipped


def _read(root: Path, path: Path) -> bytes | None:
    try:  # contained where the bytes are read: a folder swapped for a link is not followed
        return read_bytes_inside(root, path)
    except FilesError:  # gone, unreadable or behind a link since the search: the edit is stale
        return None
