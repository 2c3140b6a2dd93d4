"""The parser resource: tree-sitter grammars, the search workers and their tree caches.

One provider per runtime. It starts its worker processes once (they are shared by every
run) and gives each run a StructuralSession holding that run's staged edits.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

from traitlets import Bool, Float, Int

from ..runtime.config import RenamedConfig, renamed_to
from ..runtime.resources import ResourceProvider
from ..runtime.tool import Resource
from .errors import SearchFailed
from .languages import GRAMMAR_IDS, GRAMMARS_INSTALL, pack_installed
from .pool import WorkerFailed, WorkerPool, WorkerTimeout
from .session import StructuralLimits, StructuralSession
from .worker import SearchJob, SyntaxCheckJob

if TYPE_CHECKING:
    from ..runtime.run import Run, RunOptions

T = TypeVar("T")


class ParserProvider(RenamedConfig, ResourceProvider):
    """Attaches a tree-sitter parser (ast_grep, ast_edit, resolve) to runs."""

    resource = Resource.PARSER

    workers = Int(
        0, help="Search worker processes (parsing holds the GIL, so processes, not threads). "
        "0: one per CPU core, at most 8.",
    ).tag(config=True)
    max_tree_cache_mb = Int(
        1024, help="Memory budget for parsed trees kept between searches, in MiB, shared by "
        "the workers. 0 disables the cache.",
    ).tag(config=True)
    tree_cost_factor = Float(
        27.0, help="Estimated memory of a parse tree per byte of source, used to keep the "
        "tree cache within its budget.",
    ).tag(config=True)
    prestart_workers = Bool(
        True, help="Start the search workers when the first run attaches the parser, so its "
        "first search does not wait for them (else: at the first search).",
    ).tag(config=True)
    search_timeout_seconds = Int(
        300, help="Longest a structural search may take before its workers are killed.",
    ).tag(config=True)
    max_match_chars = Int(
        2000, help="Longest matched or captured text a result carries.",
    ).tag(config=True)
    max_edit_replacements = Int(
        10_000, help="Most replacements one ast_edit may stage.",
    ).tag(config=True)
    max_staged_edits = Int(
        100, help="Staged edits kept per run; the oldest are forgotten first.",
    ).tag(config=True)
    max_pattern_chars = Int(
        20_000, help="Longest ast_grep / ast_edit pattern, in characters. A pattern is a code "
        "fragment; a longer one is refused (invalid_arguments) before it is parsed.",
    ).tag(config=True)
    max_rewrite_chars = Int(
        100_000, help="Longest ast_edit rewrite template, in characters.",
    ).tag(config=True)

    tree_cache_mb = renamed_to("max_tree_cache_mb", Int)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        size = self.workers or min(os.cpu_count() or 1, 8)
        self.pool = WorkerPool(size, self.max_tree_cache_mb * 2**20, self.tree_cost_factor,
                               float(self.search_timeout_seconds))

    def attach(self, run: Run, options: RunOptions) -> StructuralSession:  # noqa: ARG002
        if self.prestart_workers:
            self.pool.start()  # no-op once they run; a runtime without runs spawns nothing
        limits = StructuralLimits(
            max_pattern_chars=self.max_pattern_chars, max_rewrite_chars=self.max_rewrite_chars,
            max_match_chars=self.max_match_chars,
            max_edit_replacements=self.max_edit_replacements,
            max_staged_edits=self.max_staged_edits,
        )
        return StructuralSession(self, limits, run)

    async def release(self, run: Run, handle: StructuralSession) -> None:  # noqa: ARG002
        handle.edits.clear()

    async def check_syntax(self, job: SyntaxCheckJob) -> list[dict[str, Any]]:
        """Syntax errors before and after a rewrite, file by file (parsed on a worker)."""
        return await self._on_workers(self.pool.check_syntax(job))

    async def search(self, job: SearchJob, files: list[tuple[str, int]]) -> dict[str, Any]:
        """Run `job` over (path, size) `files` on the workers; SearchFailed when they fail,
        PatternError when the pattern does not parse."""
        return await self._on_workers(self.pool.search(job, files))

    @staticmethod
    async def _on_workers(work: Awaitable[T]) -> T:
        try:
            return await work
        except WorkerFailed as exc:
            raise SearchFailed(str(exc), timed_out=isinstance(exc, WorkerTimeout)) from None

    async def shutdown(self) -> None:
        await self.pool.shutdown()

    async def status(self) -> dict[str, Any]:
        return {
            "available": True,
            "languages": list(GRAMMAR_IDS),
            # Said, not an availability row: without the pack the tools work in 27 languages.
            "grammar_pack": ("tree-sitter-language-pack: installed" if pack_installed() else
                             "tree-sitter-language-pack is not installed: structural search "
                             f"covers ast-grep's 27 languages; to add 145 more: {GRAMMARS_INSTALL}"),
            "workers": [{"alive": w.alive(), "cache": w.last_cache} for w in self.pool.workers],
            "tree_cache_mb": self.max_tree_cache_mb,
        }
