"""A run's parser handle: structural search, staging rewrites, resolving them.

This is the machinery behind ast_grep, ast_edit and resolve. It raises the
StructuralError family (errors.py), facts the tools turn into messages for the agent.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..files import FilesError, StaleFile, identity_inside, read_bytes_inside
from ..files.text import ENCODING_NAMES, detect_encoding
from ..notebooks import (
    DocumentEdit,
    Notebook,
    NotebookError,
    NotebookFile,
    VirtualDocument,
    is_notebook_path,
    notebook_language,
    open_shared_changes,
    read_notebook,
    write_with_open_notebooks,
)
from ..notebooks.current import live_bytes, live_file, open_notebook_contents
from . import errors
from .diff import rewrite_diff
from .edits import EditStatus, EditStore, FileChange, StagedEdit, content_hash
from .languages import (
    GRAMMARS_INSTALL,
    close_ids,
    extensions_for,
    has_grammar,
    known_without_pack,
    language_for_path,
)
from .notebooks import NEVER_WRITTEN, DocumentText
from .pattern import PatternError, PatternSummary, metavariable_names
from .rewrite import Replacement, apply, fill, non_overlapping, unbound_metavariables
from .worker import SearchJob, SyntaxCheckJob

if TYPE_CHECKING:
    from ..runtime.run import Run


@dataclass(frozen=True)
class StructuralLimits:
    """The bounds a run's structural session works within (the provider's config)."""

    max_pattern_chars: int
    max_rewrite_chars: int
    max_match_chars: int
    max_edit_replacements: int
    max_staged_edits: int


class ParserWorkers(Protocol):
    """The shared search workers a session sends its jobs to (the provider offers them)."""

    async def check_syntax(self, job: SyntaxCheckJob) -> list[dict[str, Any]]: ...

    def start_workers(self) -> None:
        """Start the workers not running, without waiting (blocking: from a thread)."""

    async def search(self, job: SearchJob, files: list[tuple[str, int]]) -> dict[str, Any]:
        """The merged answer of the workers, its `summary` the pattern's; PatternError when
        the pattern does not parse."""


@dataclass
class SearchOutcome:
    """What a structural search found, with paths still absolute."""

    pattern: PatternSummary
    files_searched: int
    answer: dict[str, Any]
    skipped: dict[str, int]
    # The notebooks open in JupyterLab, as their shared documents held them when searched.
    live: dict[str, dict[str, Any]] = field(default_factory=dict)


class StructuralSession:
    """The per-run handle of the parser resource."""

    def __init__(self, workers: ParserWorkers, limits: StructuralLimits, run: Run) -> None:
        self.workers = workers
        self.limits = limits
        self.run = run
        self.edits = EditStore(run.id, limits.max_staged_edits, run.record)

    def staged_count(self) -> int:
        """How many edits wait for a human's (or `resolve`'s) accept or discard."""
        return sum(1 for edit in self.edits.list() if edit.status == EditStatus.STAGED)

    # -- search -----------------------------------------------------------------------

    def _language(self, base: Path, language: str | None,
                  live: dict[str, dict[str, Any]] | None = None) -> str:
        if base.is_file() and is_notebook_path(base.name):
            own = self._notebook_language(base, (live or {}).get(os.fspath(base)))
            if language and language != own:
                raise errors.LanguageMismatch(self.run.relpath(base), own, language)
            return own
        if language:
            return self._known(language)
        if base.is_file():
            inferred = language_for_path(base)
            if inferred is None:
                raise errors.LanguageNotInferred(base.name)
            return self._known(inferred)
        raise errors.LanguageRequired()

    @staticmethod
    def _known(language: str) -> str:
        """`language` if a grammar here parses it; else why not."""
        if has_grammar(language):
            return language
        if known_without_pack(language):
            raise errors.GrammarPackNeeded(language, GRAMMARS_INSTALL)
        raise errors.UnknownLanguage(language, list(close_ids(language)))

    def _notebook_language(self, path: Path, live: dict[str, Any] | None = None) -> str:
        """The language of a notebook's kernel, from its metadata (an open notebook's: its
        shared document's, `live`)."""
        relpath = self.run.relpath(path)
        try:
            data = live if live is not None else json.loads(read_bytes_inside(
                self.run.runtime.root_path, path, self.run.runtime.max_notebook_bytes,
                shown=relpath))
            language = notebook_language(data.get("metadata") or {})
        except (ValueError, AttributeError):
            raise errors.NotANotebook(relpath) from None
        if not has_grammar(language):
            if known_without_pack(language):
                raise errors.GrammarPackNeeded(language, GRAMMARS_INSTALL)
            raise errors.NoGrammar(relpath, language)
        return language

    @staticmethod
    def _check_size(what: str, text: str, limit: int) -> None:
        if len(text) > limit:
            raise errors.TooLong(what, len(text), limit)

    def _files(self, base: Path, language: str, hidden: bool
               ) -> tuple[list[tuple[str, int]], dict[str, int]]:
        # A folder's files in `language` (the CLI's extensions, as endings of the name longer
        # than the ending: the CLI's `*.env` is no `.env`), and
        # its notebooks whatever their language: a worker searches those in `language`. A
        # file given by path is searched as it is. Hidden folders are left out unless
        # `hidden`; so are hidden files, but for those in `language`, which the CLI's file
        # types keep (a notebook is no file type of the CLI's).
        endings = tuple(sorted(extensions_for(language))) if base.is_dir() else None
        walker = self.run.walker(skip_binary=False,
                                 max_notebook_bytes=self.run.runtime.max_notebook_bytes,
                                 hidden=hidden, hidden_suffixes=endings or ())
        files: list[tuple[str, int]] = []
        vanished = 0
        for path in walker.files(base):
            name = os.fspath(path)
            if endings is not None and not (path.name.endswith(endings)
                                            and path.name not in endings) \
                    and not is_notebook_path(name):
                continue
            try:
                files.append((name, os.stat(name).st_size))
            except OSError:  # gone since it was listed (another writer's temporary file)
                vanished += 1
        skipped = walker.stats.to_json()
        return files, _add_vanished(skipped, vanished)

    def _search_plan(self, base: Path, path: str | None, language: str | None,
                     pattern: str, hidden: bool, live: dict[str, dict[str, Any]]
                     ) -> tuple[str, list[tuple[str, int]], dict[str, int], dict[str, bytes]]:
        """The language and the files of a search, or why it cannot start (disk work: run it
        in a thread), and the JSON of the open notebooks among the files (`live`: their
        shared documents' content). The pattern is compiled as the workers search."""
        if not base.exists():
            raise errors.PathNotFound(path)
        language = self._language(base, language, live)
        if base.is_dir() and not extensions_for(language):
            raise errors.NoExtensions(language)
        self._check_size("pattern", pattern, self.limits.max_pattern_chars)
        # Workers stopped (never started, or released when idle) start while the files
        # are listed: their start (~0.05 s) is not added to the search's.
        self.workers.start_workers()
        files, skipped = self._files(base, language, hidden)
        listed = {name for name, _ in files}
        return language, files, skipped, {name: live_bytes(content)
                                          for name, content in live.items() if name in listed}

    async def search(self, pattern: str, path: str | None, language: str | None, *,
                     limit: int, with_ranges: bool = False,
                     hidden: bool = False) -> SearchOutcome:
        """Every match of `pattern` under `path` (default: the run's cwd), `limit` in full;
        hidden files and folders below `path` only with `hidden` (as the ast-grep CLI)."""
        base = self.run.resolve(path or ".")
        # Notebooks open in JupyterLab are searched as their shared documents hold them now
        # (their files are saved later): one truth with read and notebook.
        live = await open_notebook_contents(self.run.runtime.parent, self.run.runtime.root_path)
        # One thread hop for the checks and the walk (a big tree takes a while to walk).
        grammar, files, skipped, live_json = await asyncio.to_thread(
            self._search_plan, base, path, language, pattern, hidden, live)
        job = SearchJob(pattern=pattern, language=grammar, files=[], limit=limit,
                        max_text=self.limits.max_match_chars, with_ranges=with_ranges,
                        root=str(self.run.runtime.root_path), live=live_json)
        try:
            answer = await self.workers.search(job, files)
        except PatternError as exc:
            raise errors.UnparseablePattern(pattern, grammar, exc.reason,
                                            exc.contexts) from None
        summary: PatternSummary = answer["summary"]
        if summary.parse_error is not None and not answer["total"]:
            # ast-grep searches a pattern with an ERROR node all the same (as the CLI does,
            # with a warning); when it finds nothing, the parse is the likely cause.
            raise errors.UnparseablePattern(
                pattern, grammar, f"ast-grep parsed it as {summary.kind} with an ERROR node at "
                f"`{summary.parse_error}`, and it matched nothing", [summary.context])
        counts = answer["counts"]
        skipped["binary"] = counts.get("binary", 0)
        for reason in ("invalid_notebook", "outside_root", "not_utf8"):  # when it happened
            if counts.get(reason):
                skipped[reason] = counts[reason]
        vanished = counts.get("vanished", 0)
        searched = len(files) - vanished - counts.get("invalid_notebook", 0) \
            - counts.get("other_language", 0) - counts.get("outside_root", 0) \
            - counts.get("not_utf8", 0)
        return SearchOutcome(summary, searched, answer,
                             _add_vanished(skipped, vanished), live)

    # -- staged edits ---------------------------------------------------------------------

    async def stage(self, pattern: str, rewrite: str, path: str | None,
                    language: str | None, *, hidden: bool = False) -> StagedEdit:
        """Compute the rewrite of every match and keep it, unwritten, as this run's edit."""
        self._check_size("pattern", pattern, self.limits.max_pattern_chars)
        self._check_size("rewrite", rewrite, self.limits.max_rewrite_chars)
        bound = metavariable_names(pattern)
        unbound = unbound_metavariables(rewrite, bound)
        if unbound:
            raise errors.UnboundMetavariables(unbound, bound)
        limit = self.limits.max_edit_replacements
        outcome = await self.search(pattern, path, language, limit=limit, with_ranges=True,
                                    hidden=hidden)
        answer = outcome.answer
        if answer["total"] > limit:
            raise errors.TooManyReplacements(answer["total"], limit)
        rewritten = await self._rewrite_and_check(outcome.pattern.language, rewrite, answer,
                                                  outcome.live)
        changes = [change for change, _, _, _ in rewritten]
        edit = self.edits.stage(pattern, rewrite, outcome.pattern.language, changes)
        edit.pattern_kind = outcome.pattern.kind
        edit.skipped = outcome.skipped
        self._announce_staged(edit)
        return edit

    def stage_changes(self, pattern: str, rewrite: str, language: str,
                      changes: list[FileChange], origin: str) -> StagedEdit:
        """Keep changes computed elsewhere (a language server's code action: what offered it,
        its title) as this run's edit: the same review, resolve and staleness checks as a
        rewrite's."""
        edit = self.edits.stage(pattern, rewrite, language, changes, origin=origin)
        self._announce_staged(edit)
        return edit

    def _announce_staged(self, edit: StagedEdit) -> None:
        self.run.events.publish("edit_staged", run_id=self.run.id, edit_id=edit.id,
                                files=[c.relpath for c in edit.files], counts=edit.counts(),
                                replacements=edit.replacements)

    async def _rewrite_and_check(self, language: str, rewrite: str, answer: dict[str, Any],
                                 live: dict[str, dict[str, Any]]) -> list[_Rewritten]:
        """The rewritten files (see _rewrite_files); RewriteBreaksSyntax when the rewrite adds
        syntax errors. Reading, rewriting and diffing is disk and CPU work: a thread does it,
        and hands each part of _CHECK_BYTES or _CHECK_FILES over as it is done, to be
        checked by the workers meanwhile."""
        loop = asyncio.get_running_loop()
        checks: list[asyncio.Task[list[dict[str, Any]]]] = []

        def check(part: list[_Rewritten]) -> None:  # on the loop
            job = SyntaxCheckJob(language, [(change.relpath, before, after, spans)
                                            for change, before, after, spans in part])
            checks.append(loop.create_task(self.workers.check_syntax(job)))

        handed = 0

        def done(part: list[_Rewritten]) -> None:  # in the thread
            nonlocal handed
            handed += len(part)
            loop.call_soon_threadsafe(check, part)

        try:
            rewritten = await asyncio.to_thread(self._rewrite_files, rewrite, answer, live,
                                                done)
            # The last part: the thread's calls were queued before its end was, so the loop
            # has run them, and this one follows every other.
            if rewritten[handed:]:
                check(rewritten[handed:])
            results = await asyncio.gather(*checks)
        except BaseException:
            for task in checks:
                task.cancel()
            raise
        await self._refuse_broken_syntax(language, rewritten,
                                         [result for part in results for result in part])
        return rewritten

    def _rewrite_files(self, rewrite: str, answer: dict[str, Any],
                       live: dict[str, dict[str, Any]] | None = None,
                       done: Callable[[list[_Rewritten]], None] | None = None
                       ) -> list[_Rewritten]:
        """Each changed file, its code before and after, and where the replacements landed.
        `live`: the open notebooks' content the search matched in. `done` is handed each part
        of about _CHECK_BYTES (bytes after) or _CHECK_FILES files as soon as it is complete
        (not the last, unfinished one)."""
        root = self.run.runtime.root_path
        by_file: dict[str, list[Replacement]] = {}
        for match in answer["matches"]:
            by_file.setdefault(match["file"], []).append(
                Replacement(match["range"][0], match["range"][1],
                            {k: tuple(v) if v else None
                             for k, v in match["capture_ranges"].items()}))
        rewritten: list[_Rewritten] = []
        part = 0  # where the part not handed to `done` yet starts
        size = 0

        def add(item: _Rewritten) -> None:
            nonlocal part, size
            rewritten.append(item)
            size += len(item[2])
            if done is not None and (size >= _CHECK_BYTES
                                     or len(rewritten) - part >= _CHECK_FILES):
                done(rewritten[part:])
                part, size = len(rewritten), 0

        for file, replacements in by_file.items():
            target = Path(file)
            if is_notebook_path(target.name):
                notebook = self._rewrite_notebook(target, rewrite, replacements,
                                                  answer["hashes"][file],
                                                  (live or {}).get(file))
                if notebook is not None:
                    add(notebook)
                continue
            before = _read(root, target)
            if before is None or content_hash(before) != answer["hashes"][file]:
                raise errors.ChangedWhileComputing(self.run.relpath(target))
            relpath = self.run.relpath(target)
            # A file that is not UTF-8 is rewritten in its own encoding (files.text).
            encoding = detect_encoding(before)
            chosen = non_overlapping(replacements)
            try:
                after, spans = apply(rewrite, before, chosen, encoding)
            except UnicodeEncodeError:
                raise errors.RewriteNotEncodable(relpath, ENCODING_NAMES[encoding]) from None
            if after == before:
                continue
            # The diff from where the replacements are: no sequence matching of the files.
            diff = rewrite_diff(relpath, before, after, [(r.start, r.end) for r in chosen],
                                spans, encoding)
            add((FileChange(target, relpath, content_hash(before), after, len(spans), diff,
                            identity_inside(root, target)),
                 before, after, spans))
        return rewritten

    def _rewrite_notebook(self, target: Path, rewrite: str, replacements: list[Replacement],
                          snapshot: str, live: dict[str, Any] | None = None
                          ) -> _Rewritten | None:
        """A notebook's change: only the sources of the cells rewritten, all else kept.

        The rewrite is computed on the virtual document the search matched in (rebuilt
        from the same bytes, or from the open notebook's content `live`), then written into
        the cells as their new sources.
        """
        root = self.run.runtime.root_path
        relpath = self.run.relpath(target)
        file: NotebookFile | None
        try:
            file = (live_file(target, relpath, live) if live is not None else
                    read_notebook(root, target, self.run.runtime.max_notebook_bytes,
                                  shown=relpath))
        except (NotebookError, FilesError, OSError):
            file = None
        if file is None or file.snapshot != snapshot:
            raise errors.ChangedWhileComputing(relpath, notebook=True)
        document = VirtualDocument.of(file.notebook)
        before = document.text.encode("utf-8")
        positions = DocumentText(before)
        chosen = non_overlapping(replacements)
        edits = [DocumentEdit(positions.position(r.start), positions.position(r.end),
                              fill(rewrite, before, r)) for r in chosen]
        try:
            sources = document.cell_sources(edits)
        except NotebookError as exc:
            raise errors.RewriteHitsMagics(relpath, str(exc)) from None
        sources = {cell: source for cell, source in sources.items()
                   if source != document.sources[cell]}
        if not sources:
            return None
        after, spans = apply(rewrite, before, chosen)
        diff = "".join(_cell_diff(relpath, cell, document.sources[cell], source)
                       for cell, source in sorted(sources.items()))
        change = FileChange(target, relpath, file.snapshot, file.notebook.with_sources(sources),
                            len(chosen), diff, file.identity,
                            {cell: (document.sources[cell], source)
                             for cell, source in sources.items()},
                            upgraded_from=file.notebook.upgraded_from)
        return change, before, after, spans

    async def _refuse_broken_syntax(self, language: str, rewritten: list[_Rewritten],
                                    results: list[dict[str, Any]]) -> None:
        """RewriteBreaksSyntax naming file, line and column (in a notebook: the cell, and the
        line within it) when the workers' syntax check `results` say the rewrite adds syntax
        errors (errors_before is None when the code after has none: then none is new)."""
        changes = {change.relpath: change for change, _, _, _ in rewritten}
        broken = [{"file": result["path"], "line": result["line"], "column": result["column"],
                   "syntax_errors_before": result["errors_before"],
                   "syntax_errors_after": result["errors_after"]}
                  for result in results
                  if result["errors_after"] > (result["errors_before"] or 0)]
        if broken:
            for place in broken:
                change = changes[place["file"]]
                if is_notebook_path(change.path.name) and place["line"] is not None:
                    place.update(await asyncio.to_thread(_place_in_cell, change.new_content,
                                                         place["line"], place["column"]))
            raise errors.RewriteBreaksSyntax(language, broken)

    def staged(self, edit_id: str) -> StagedEdit:
        """This run's edit `edit_id` if it still waits; UnknownEdit or EditAlreadyResolved."""
        edit = self.edits.get(edit_id)
        if edit is None:
            raise errors.UnknownEdit(edit_id)
        if edit.status is not EditStatus.STAGED:
            raise errors.EditAlreadyResolved(edit_id, edit.status.value)
        return edit

    async def resolve(self, edit_id: str, accept: bool) -> tuple[StagedEdit, list[Path]]:
        """Accept (write all files, or none) or discard a staged edit."""
        edit = self.staged(edit_id)
        if not accept:
            edit.status = EditStatus.DISCARDED
            self._announce(edit)
            return edit, []
        # Checked and written in each file's order across every run (all its files locked,
        # in sorted order): no other run's change lands between the check and the write.
        async with self.run.runtime.file_locks.hold([c.path for c in edit.files]):
            return await self._accept(edit)

    async def _accept(self, edit: StagedEdit) -> tuple[StagedEdit, list[Path]]:
        root = self.run.runtime.root_path
        # A notebook open with real-time collaboration changes in its shared document: its
        # clients see the change in place, and the collaboration server saves it.
        shared = await open_shared_changes(self.run.runtime.parent, root,
                                           {c.path: c.cells for c in edit.files if c.cells})
        on_disk = [change for change in edit.files if change.path not in shared]
        stale = await asyncio.to_thread(edit.stale_files, root, on_disk)
        # Open notebooks are checked and changed with no await between: no remote update
        # comes in between.
        stale += [c.relpath for c in edit.files if c.path in shared and shared[c.path].stale]
        if stale:
            edit.status = EditStatus.STALE
            self._announce(edit)
            raise errors.StaleEdit(edit.id, stale)
        try:
            await write_with_open_notebooks(shared.values(), lambda: edit.write(root, on_disk))
        except StaleFile as exc:  # written by someone outside the order (the user) meanwhile
            edit.status = EditStatus.STALE
            self._announce(edit)
            raise errors.StaleEdit(edit.id, [exc.shown]) from None
        edit.status = EditStatus.ACCEPTED
        self._announce(edit)
        return edit, [change.path for change in edit.files]

    def _announce(self, edit: StagedEdit) -> None:
        self.edits.changed(edit)
        self.run.events.publish("edit_resolved", run_id=self.run.id, edit_id=edit.id,
                                action=edit.status.value, files=[c.relpath for c in edit.files],
                                counts=edit.counts(), replacements=edit.replacements)


# How much rewritten code (bytes after, files) one syntax check job takes: big enough that
# a job's round trip is small beside its parsing, small enough that the workers share it
# (and start on it while the rest is rewritten).
_CHECK_BYTES = 2**20
_CHECK_FILES = 250

# A rewritten file: its change, its code before and after (a notebook's virtual document),
# and where the replacements landed in the code after.
_Rewritten = tuple[FileChange, bytes, bytes, list[tuple[int, int]]]


def _place_in_cell(new_notebook: bytes, line: int, column: int) -> dict[str, int | None]:
    """A place in the rewritten notebook's virtual document (from 1) as cell, and line and
    column within the cell; cell None when the place is between cells."""
    document = VirtualDocument.of(Notebook(json.loads(new_notebook), NEVER_WRITTEN))
    where = document.cell_position(line - 1, column - 1)
    if where is None:
        return {"cell": None}
    return {"cell": where.cell, "line": where.line + 1, "column": where.character + 1}


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
    except (FilesError, OSError):  # gone, unreadable or behind a link since the search: stale
        return None

