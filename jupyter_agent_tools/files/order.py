"""One order per file across every run of a server, and what each run last saw of a file.

Every change to a file (write, edit, apply_patch, an accepted staged edit, a rename, a notebook
cell change) is a compare-and-swap: it reads the file, computes its change on those bytes and
writes only if the file still holds them (`write_files_atomically(based_on=...)`). `FileLocks`,
one per runtime (so shared by all its runs), orders those steps per file: a change holds the
lock of each file it touches from its read to its write, so two runs editing one file never
compute on the same bytes, and disjoint changes all land. Files are locked in sorted order, so
two multi-file changes never wait for each other in a cycle. The locks are asyncio locks: a
change waits for its turn without holding the event loop or a worker thread.

Writers that are not runs (a save from JupyterLab through the contents API, an editor, a
shell) do not take these locks: for them the writer's compare, right before its atomic
replace, is what refuses a change computed on bytes they have since replaced.

`SeenFiles` is per run: a digest of the text of each file as the run last read (or wrote) it.
A `write` over a file the run read, and that someone else changed since, is refused.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import os
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .contained import is_text
from .text import DecodedText


@dataclass
class _Entry:
    lock: asyncio.Lock
    users: int = 0  # holders and waiters: the entry goes when none is left


class FileLocks:
    """A lock per file path (absolute, as resolved inside the root), created on first use and
    dropped when nobody holds or waits for it."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}

    @asynccontextmanager
    async def hold(self, paths: Iterable[Path | str]) -> AsyncIterator[None]:
        """Hold the lock of every path (each once, in sorted order) for the block."""
        keys = sorted({os.fspath(path) for path in paths})
        held: list[str] = []
        try:
            for key in keys:
                entry = self._entries.get(key)
                if entry is None:
                    entry = self._entries[key] = _Entry(asyncio.Lock())
                entry.users += 1
                try:
                    await entry.lock.acquire()
                except BaseException:
                    self._leave(key, entry)
                    raise
                held.append(key)
            yield
        finally:
            for key in reversed(held):
                entry = self._entries[key]
                entry.lock.release()
                self._leave(key, entry)

    def _leave(self, key: str, entry: _Entry) -> None:
        entry.users -= 1
        if entry.users == 0:
            del self._entries[key]

    def busy(self) -> int:
        """How many files are locked or waited for now."""
        return len(self._entries)


def order_contents_saves(contents_manager: Any, root: Path, locks: FileLocks) -> bool:
    """Make a Jupyter contents manager's saves (JupyterLab's, the collaboration server's)
    take their file's turn in `locks`, as the runs' changes do: a save never lands in the
    middle of a change (between its read and its write), and a change never reads a file
    half saved (the contents API writes in place). True if done; a manager whose `save` is
    not a coroutine function is left as it is (the writer's compare still refuses a change
    computed on bytes such a save replaced)."""
    save = contents_manager.save
    if not inspect.iscoroutinefunction(save):
        return False

    async def save_in_order(model: dict[str, Any], path: str = "") -> Any:
        target = os.path.normpath(os.path.join(root, path.strip("/")))
        async with locks.hold([target]):
            return await save(model, path)

    contents_manager.save = save_in_order
    return True


def bytes_sha256(data: bytes) -> str:
    """The hash a compare-and-swap write is based on (`write_files_atomically(based_on=...)`)."""
    return hashlib.sha256(data).hexdigest()


def text_digest(text: str) -> bytes:
    """What `SeenFiles` keeps of a file's (decoded) text."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


# What a run saw of a file: the digest of its text (`text_digest`), or of its bytes (a
# notebook read as cells: `bytes_sha256`, as notebooks/disk.py hashes the bytes it read).
_Seen = tuple[bool, bytes | str]  # (as text, digest)


class SeenFiles:
    """Per run, bounded (oldest dropped first): each file as the run last read or wrote it
    (a digest), keyed by absolute path."""

    def __init__(self, max_files: int = 4096) -> None:
        self.max_files = max_files
        self._seen: OrderedDict[str, _Seen] = OrderedDict()
        self._lock = threading.Lock()  # reads note what they saw in worker threads

    def saw(self, path: Path, text: str) -> None:
        """The run was shown (or wrote) the whole text of `path`."""
        self._put(os.fspath(path), (True, text_digest(text)))

    def saw_bytes(self, path: Path, sha256: str) -> None:
        """The run was shown the file whose bytes hash to `sha256` (`bytes_sha256`)."""
        self._put(os.fspath(path), (False, sha256))

    def matches(self, path: Path, data: bytes) -> bool | None:
        """Whether `data` is what the run last saw in `path`; None if it never read it."""
        with self._lock:
            seen = self._seen.get(os.fspath(path))
        if seen is None:
            return None
        as_text, digest = seen
        if not as_text:
            return bytes_sha256(data) == digest
        return is_text(data) and text_digest(DecodedText.of(data).text) == digest

    def changed(self, path: Path, base: str, new: str | None, base_sha256: str) -> None:
        """The run changed part of `path` (an edit, a patch) from the text `base` (whose
        bytes hash to `base_sha256`) to `new` (None: deleted). The run knows the new text only
        if it knew the base (it read the file, or wrote it itself, and nobody changed it
        since): else what it saw stays, and a later `write` computed on that is refused."""
        self._follow(os.fspath(path), [(True, text_digest(base)), (False, base_sha256)],
                     None if new is None else (True, text_digest(new)))

    def changed_bytes(self, path: Path, base: str, new: str) -> None:
        """As `changed`, for a change known by the hashes of the bytes (`bytes_sha256`)
        before and after (a notebook's cells written back)."""
        self._follow(os.fspath(path), [(False, base)], (False, new))

    def _follow(self, key: str, bases: list[_Seen], new: _Seen | None) -> None:
        with self._lock:
            if self._seen.get(key) not in bases:
                return
            if new is None:
                self._seen.pop(key, None)
                return
        self._put(key, new)

    def _put(self, key: str, seen: _Seen) -> None:
        with self._lock:
            self._seen[key] = seen
            self._seen.move_to_end(key)
            while len(self._seen) > self.max_files:
                self._seen.popitem(last=False)

