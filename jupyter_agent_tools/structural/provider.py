"""The parser resource: tree-sitter grammars, the search workers and their tree caches.

One provider per runtime. It starts its worker processes once (they are shared by every
run) and gives each run a StructuralSession holding that run's staged edits.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

from traitlets import Bool, Float, Int, default

from ..runtime.config import RenamedConfig, renamed_to
from ..runtime.memory import memory_limit, share_of_limit
from ..runtime.resources import ResourceProvider
from ..runtime.tool import Resource
from .errors import SearchFailed
from .languages import GRAMMARS_INSTALL, grammar_ids, pack_installed
from .pool import WorkerFailed, WorkerOutOfMemory, WorkerPool, WorkerTimeout
from .session import StructuralLimits, StructuralSession
from .worker import SearchJob, SyntaxCheckJob

if TYPE_CHECKING:
    from ..runtime.run import Run, RunOptions

T = TypeVar("T")

_TREE_CACHE_MB = 1024
#: The share of the server's memory limit the tree caches may take, all workers together.
_TREE_CACHE_SHARE = 1 / 8
#: Memory limit per search worker when their number is not configured (a worker is ~40 MiB
#: before its cache; a pod of 1 GiB gets 2).
_MIB_PER_WORKER = 512


def _default_workers() -> int:
    """One per core, at most 8, and at most one per _MIB_PER_WORKER of the memory limit."""
    size = min(os.cpu_count() or 1, 8)
    limit = memory_limit()
    return size if limit is None else max(1, min(size, limit.mib // _MIB_PER_WORKER))


class ParserProvider(RenamedConfig, ResourceProvider):
    """Attaches a tree-sitter parser (ast_grep, ast_edit, resolve) to runs."""

    resource = Resource.PARSER

    workers = Int(
        0, help="Search worker processes (parsing holds the GIL, so processes, not threads). "
        "0: one per CPU core, at most 8, and at most one per 512 MiB of the memory limit the "
        "server runs under.",
    ).tag(config=True)
    max_tree_cache_mb = Int(
        _TREE_CACHE_MB, help="Memory budget for parsed trees kept between searches, in MiB, shared by the "
        "workers. Unset: 1024, or an eighth of the memory limit the server runs under when "
        "that is smaller (the cgroup's memory.max, JupyterHub's MEM_LIMIT, ulimit -v). 0 "
        "disables the cache.",
    ).tag(config=True)

    @default("max_tree_cache_mb")
    def _default_max_tree_cache_mb(self) -> int:
        return share_of_limit(_TREE_CACHE_MB, _TREE_CACHE_SHARE)

    tree_cost_factor = Float(
        70.0, help="Memory of a parse tree per byte of its source, used to keep the tree "
        "cache within its budget where the allocator cannot say what each parse kept (no "
        "glibc mallinfo2: macOS, musl). Measured: about 31 for Python, 70 for Kotlin and C#.",
    ).tag(config=True)
    prestart_workers = Bool(
        False, help="Start the search workers when a run attaches the parser, so its first "
        "search does not wait for them (about 0.1 s); else at the first search. Off: creating "
        "a run starts nothing.",
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
        size = self.workers or _default_workers()
        self.pool = WorkerPool(size, self.max_tree_cache_mb * 2**20, self.tree_cost_factor,
                               float(self.search_timeout_seconds))

    def attach(self, run: Run, options: RunOptions) -> StructuralSession:  # noqa: ARG002
        if self.prestart_workers:
            self.pool.start()  # no-op once they run; a runtime without runs spawns nothing
        return StructuralSession(self, self.limits(), run)

    def limits(self) -> StructuralLimits:
        """The bounds a run's session works within."""
        return StructuralLimits(
            max_pattern_chars=self.max_pattern_chars, max_rewrite_chars=self.max_rewrite_chars,
            max_match_chars=self.max_match_chars,
            max_edit_replacements=self.max_edit_replacements,
            max_staged_edits=self.max_staged_edits,
        )

    async def release(self, run: Run, handle: StructuralSession) -> None:  # noqa: ARG002
        handle.edits.clear()

    async def check_syntax(self, job: SyntaxCheckJob) -> list[dict[str, Any]]:
        """Syntax errors before and after a rewrite, file by file (parsed on a worker)."""
        return await self._on_workers(self.pool.check_syntax(job))

    def start_workers(self) -> None:
        """Start the workers that are not running, not waiting for them (blocking: from a
        thread). A search does, before it lists its files: they start meanwhile."""
        self.pool.start()

    async def search(self, job: SearchJob, files: list[tuple[str, int]]) -> dict[str, Any]:
        """Run `job` over (path, size) `files` on the workers; SearchFailed when they fail,
        PatternError when the pattern does not parse."""
        return await self._on_workers(self.pool.search(job, files))

    @staticmethod
    async def _on_workers(work: Awaitable[T]) -> T:
        try:
            return await work
        except WorkerFailed as exc:
            raise SearchFailed(str(exc), timed_out=isinstance(exc, WorkerTimeout),
                               memory_limit=exc.limit if isinstance(exc, WorkerOutOfMemory)
                               else None) from None

    async def release_idle(self) -> None:
        await self.pool.release()  # their tree caches go with them

    async def shutdown(self) -> None:
        await self.pool.shutdown()

    async def status(self) -> dict[str, Any]:
        return {
            "available": True,
            "languages": list(grammar_ids()),
            # Said, not an availability row: without the pack the tools work in 27 languages.
            "grammar_pack": ("tree-sitter-language-pack: installed" if pack_installed() else
                             "tree-sitter-language-pack is not installed: structural search "
                             f"covers ast-grep's 27 languages; to add 145 more: {GRAMMARS_INSTALL}"),
            "workers": [{"alive": w.alive(), "cache": w.last_cache} for w in self.pool.workers],
            "tree_cache_mb": self.max_tree_cache_mb,
            "memory_limit": None if (limit := memory_limit()) is None else limit.describe(),
        }
