"""Notebooks' cell sources as plain text files in a scratch folder, kept while the notebooks are
unchanged: what `grep` searches in notebooks.

Writing every notebook's sources anew for each search meant reading and parsing each
notebook's JSON every time: over 500 notebooks, 60 ms of parsing for a 10 ms search. Here each
notebook has a mirror file of its own, written again only when the notebook's status (inode,
size, modification and change times) differs, so a search costs a `stat` per notebook and rg
over the mirrors, in parallel as over `.py` files.

Mirror files are never rewritten in place: a changed notebook gets a new file. The old one
(and any evicted past the size bound) is deleted once no running search reads it: a search
maps its matches back to cells with the mirrors it started with.
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .contained import read_bytes_inside
from .errors import FilesError
from .nbformat3 import cells_as_v4, is_nbformat3

# Rough bytes of memory per mirror and per cell kept beside its file.
_KEPT_PER_MIRROR = 512
_KEPT_PER_CELL = 8


@dataclass(frozen=True)
class CellsMirror:
    """One notebook's cell sources, one after another, in `file` (a name in the folder)."""

    notebook: Path
    file: str
    # The first line of each cell in the file (from 0), in cell order.
    first_lines: tuple[int, ...]
    stamp: tuple[int, int, int, int]
    # What it counts against the bound: its file, and what is kept of it in memory (so
    # that notebooks of empty cells are bounded too).
    cost: int


class NotebookMirrors:
    """The mirrors of one server root's notebooks, in `folder`; safe across search threads."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(exist_ok=True)
        self._mirrors: OrderedDict[Path, CellsMirror] = OrderedDict()  # least recently used first
        self._bytes = 0
        self._lock = threading.Lock()
        self._readers: Counter[str] = Counter()  # running searches reading each file
        self._stale: set[str] = set()  # replaced or evicted, still read by a search
        self._serial = 0

    @contextmanager
    def reading(self, root: Path, notebooks: list[Path], max_notebook_bytes: int,
                max_bytes: int) -> Iterator[tuple[list[CellsMirror], int]]:
        """The mirror of each notebook, in the order given (written where the notebook changed
        or was never mirrored), and how many are not notebooks that can be read. Their files
        stay until the block ends; past `max_bytes` in all the least recently used mirrors
        are then dropped."""
        found: list[CellsMirror] = []
        invalid = 0
        try:
            for notebook in notebooks:
                mirror = self._current(root, notebook, max_notebook_bytes)
                if mirror is None:
                    invalid += 1
                else:
                    found.append(mirror)
            yield found, invalid
        finally:
            with self._lock:
                for mirror in found:
                    self._readers[mirror.file] -= 1
                    if not self._readers[mirror.file]:
                        del self._readers[mirror.file]
                        if mirror.file in self._stale:
                            self._stale.discard(mirror.file)
                            self._delete(mirror.file)
                while self._bytes > max_bytes and self._mirrors:
                    self._drop(self._mirrors.popitem(last=False)[1])

    def _current(self, root: Path, notebook: Path, max_notebook_bytes: int) -> CellsMirror | None:
        """The notebook's mirror, up to date and counted as read; None if it cannot be read."""
        try:
            status = os.stat(notebook)
        except OSError:
            status = None
        stamp = status and (status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
        with self._lock:
            mirror = self._mirrors.get(notebook)
            if mirror is not None and mirror.stamp == stamp:
                self._mirrors.move_to_end(notebook)
                self._readers[mirror.file] += 1
                return mirror
        # Read after the stat: a change in between makes the next search read it again.
        sources = None if stamp is None else cell_sources(root, notebook, max_notebook_bytes)
        if sources is None:
            with self._lock:
                if (gone := self._mirrors.pop(notebook, None)) is not None:
                    self._drop(gone)
            return None
        assert stamp is not None
        first_lines, line = [], 0
        for index, source in enumerate(sources):
            if source and not source.endswith("\n"):
                sources[index] = source = source + "\n"
            first_lines.append(line)
            line += source.count("\n")
        # A lone surrogate (JSON allows one) cannot be UTF-8: it becomes "?", one character.
        text = "".join(sources).encode("utf-8", "replace")
        with self._lock:
            self._serial += 1
            name = f"{self._serial}.txt"
        try:
            (self.folder / name).write_bytes(text)
        except OSError:  # a full temporary folder: the call says so (os_error), none is left
            (self.folder / name).unlink(missing_ok=True)
            raise
        mirror = CellsMirror(notebook, name, tuple(first_lines), stamp,
                             len(text) + _KEPT_PER_MIRROR + _KEPT_PER_CELL * len(first_lines))
        with self._lock:  # known to no other search until now
            if (replaced := self._mirrors.pop(notebook, None)) is not None:
                self._drop(replaced)
            self._mirrors[notebook] = mirror
            self._bytes += mirror.cost
            self._readers[name] += 1
        return mirror

    def _drop(self, mirror: CellsMirror) -> None:
        """With the lock held: its file goes now, or when the last search reading it ends."""
        self._bytes -= mirror.cost
        if self._readers[mirror.file]:
            self._stale.add(mirror.file)
        else:
            self._readers.pop(mirror.file, None)
            self._delete(mirror.file)

    def _delete(self, name: str) -> None:
        (self.folder / name).unlink(missing_ok=True)


def cell_sources(root: Path, notebook: Path, max_bytes: int) -> list[str] | None:
    """Every cell's source, in order; None when `notebook` is not a notebook (or is gone)."""
    try:
        data = json.loads(read_bytes_inside(root, notebook, max_bytes))
        # An nbformat 3 notebook is searched as read shows it: upgraded to nbformat 4.
        cells = cells_as_v4(data) if is_nbformat3(data) else data["cells"]
        return ["".join(source) if isinstance(source, list) else str(source)
                for source in (cell.get("source", "") for cell in cells)]
    except (FilesError, ValueError, TypeError, KeyError, AttributeError):
        return None
