"""A bounded cache of file sources and their parse trees, kept inside each search worker.

Entries are keyed by (path, language) and valid for one (mtime, size) stamp: a file that
changed is read and parsed again. A tree costs what the allocator says its parse kept
(glibc's mallinfo2, a microsecond: about 31 times its source for Python, 70 for Kotlin and
C#), else an estimate of `tree_cost_factor` times its source; entries are evicted least
recently used first once the total passes the budget.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ast_grep_py import SgRoot
from tree_sitter import Tree

Stamp = tuple[int, int]  # (mtime_ns, size)
Key = tuple[str, str]  # (path, language)


@dataclass
class CachedFile:
    """A file as last read: its bytes and, once needed, its tree."""

    stamp: Stamp
    source: bytes
    binary: bool = False
    tree: Tree | SgRoot | None = None  # ast-grep's where it has the language
    cost: int = field(default=0)
    # A notebook: `source` is its virtual document's text (the kernel's code cells, IPython
    # syntax masked), `document` maps it back to cells, `file_hash` is of the file's bytes.
    # `skip` says why a file is not searched at all (a notebook in another language).
    document: Any = None
    file_hash: str | None = None
    skip: str | None = None
    # Whether the tree has syntax errors, found once per read (ast-grep has to walk the tree).
    syntax_errors: bool | None = None
    tree_bytes: int | None = None  # what the tree's parse kept allocated, where measured


class TreeCache:
    """LRU over CachedFile entries, bounded by an estimated memory budget."""

    def __init__(self, budget_bytes: int, tree_cost_factor: float = 70.0) -> None:
        self.budget_bytes = budget_bytes
        self.tree_cost_factor = tree_cost_factor
        self._entries: OrderedDict[Key, CachedFile] = OrderedDict()
        self.used_bytes = 0
        self.hits = 0
        self.misses = 0
        self.evictions = 0

    def get(self, key: Key, stamp: Stamp) -> CachedFile | None:
        """The entry for `key` if it was read at `stamp`; stale entries are dropped."""
        entry = self._entries.get(key)
        if entry is None or entry.stamp != stamp:
            if entry is not None:
                self._drop(key)
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return entry

    def put(self, key: Key, entry: CachedFile) -> CachedFile:
        """Remember `entry` (if it fits the budget at all) and return it."""
        if key in self._entries:
            self._drop(key)
        entry.cost = self._cost(entry)
        if entry.cost <= self.budget_bytes:
            self._entries[key] = entry
            self.used_bytes += entry.cost
            self._evict()
        return entry

    def set_tree(self, key: Key, entry: CachedFile, tree: Tree | SgRoot,
                 tree_bytes: int | None = None) -> None:
        """Attach a parsed tree to `entry` and account for its memory (`tree_bytes`, measured
        by `heap_in_use` around the parse; else estimated)."""
        entry.tree = tree
        # Never less than its copy of the source (another thread may free during the parse).
        entry.tree_bytes = None if tree_bytes is None else max(tree_bytes, len(entry.source))
        if self._entries.get(key) is entry:
            self.used_bytes -= entry.cost
            entry.cost = self._cost(entry)
            self.used_bytes += entry.cost
            if entry.cost > self.budget_bytes:
                self._drop(key)
            else:
                self._evict(keep=key)

    def stats(self) -> dict[str, int]:
        """Counters for status pages and tests."""
        return {"entries": len(self._entries), "used_bytes": self.used_bytes,
                "budget_bytes": self.budget_bytes, "hits": self.hits, "misses": self.misses,
                "evictions": self.evictions}

    def _cost(self, entry: CachedFile) -> int:
        size = len(entry.source)
        if entry.tree is None:
            return size + 200
        tree = entry.tree_bytes if entry.tree_bytes is not None \
            else int(size * self.tree_cost_factor)
        return size + tree + 200

    def _drop(self, key: Key) -> None:
        entry = self._entries.pop(key)
        self.used_bytes -= entry.cost

    def _evict(self, keep: Key | None = None) -> None:
        while self.used_bytes > self.budget_bytes and self._entries:
            key = next(iter(self._entries))
            if key == keep:
                if len(self._entries) == 1:
                    return
                self._entries.move_to_end(key)
                continue
            self._drop(key)
            self.evictions += 1


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def _mallinfo2() -> Callable[[], _MallInfo2] | None:
    try:
        function = ctypes.CDLL(None).mallinfo2  # glibc 2.33 and later
    except (OSError, AttributeError):
        return None
    function.restype = _MallInfo2
    function.argtypes = []
    return function


_HEAP_INFO = _mallinfo2()


def heap_in_use() -> int | None:
    """Bytes malloc has handed out and not had back (every arena), or None where glibc's
    mallinfo2 is missing. A parse's difference is what its tree keeps."""
    if _HEAP_INFO is None:
        return None
    info = _HEAP_INFO()
    return int(info.uordblks + info.hblkhd)
