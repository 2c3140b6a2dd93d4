"""Notebooks' cell sources as plain text files in a scratch folder, kept while the notebooks are
unchanged: what `grep` searches in notebooks.

Writing every notebook's sources anew for each search meant reading and parsing each
notebook's JSON every time: over 500 notebooks, 60 ms of parsing for a 10 ms search. Here each
notebook has a mirror file of its own, written again only when the notebook's status (inode,
size, modification and change times) differs, so a search costs a `stat` per notebook and rg
over the mirrors.

A search's mirrors are then packed one after another into a few files (`CellsPack`), kept
while the same mirrors are searched again: rg over hundreds of small files spent most of its
time opening them, and a notebook's lines are found again by where its mirror starts.

Mirror and pack files are never rewritten in place: a changed notebook gets a new file, and a
new set of mirrors a new pack. The old ones (and any evicted past the size bound) are deleted
once no running search reads them: a search maps its matches back to cells with the files it
started with.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path

from .contained import read_bytes_inside
from .errors import FilesError
from .nbformat3 import cells_as_v4, is_nbformat3

_Stamp = tuple[int, int, int, int]  # inode, size, modification and change times

# Rough bytes of memory per mirror and per cell kept beside its file.
_KEPT_PER_MIRROR = 512
_KEPT_PER_CELL = 8
# A pack's files are cut at about this size, so that rg searches a big one in parallel.
_PACK_PART_BYTES = 8 * 1024 * 1024
# Packs kept for searches to come (of other folders, say): each is a copy of its mirrors.
_PACKS_KEPT = 4


@dataclass(frozen=True)
class CellsMirror:
    """One notebook's cell sources, one after another, in `file` (a name in the folder)."""

    notebook: Path
    file: str
    # The first line of each cell in the file (from 0), in cell order.
    first_lines: tuple[int, ...]
    stamp: _Stamp
    # Bytes and lines of its file.
    size: int
    lines: int
    # What it counts against the bound: its file, and what is kept of it in memory (so
    # that notebooks of empty cells are bounded too).
    cost: int


@dataclass(frozen=True)
class PackPart:
    """Mirrors one after another in `file`; a part of one mirror is that mirror's own file."""

    file: str
    members: tuple[CellsMirror, ...]
    # The first line of each member in the file (from 0).
    starts: tuple[int, ...]

    def cell_of(self, line: int) -> tuple[CellsMirror, int, int]:
        """The notebook, cell (from 1) and line in the cell (from 1) of the file's `line`."""
        member = bisect.bisect_right(self.starts, line - 1) - 1
        mirror = self.members[member]
        in_mirror = line - self.starts[member]
        cell = bisect.bisect_right(mirror.first_lines, in_mirror - 1)
        return mirror, cell, in_mirror - mirror.first_lines[cell - 1]


@dataclass(frozen=True)
class CellsPack:
    """A search's mirrors, in the order given, in `parts`."""

    parts: tuple[PackPart, ...]
    # The files of its own (not a member's), and what they count against the bound.
    own_files: tuple[str, ...]
    cost: int


class NotebookMirrors:
    """The mirrors of one server root's notebooks, in `folder`; safe across search threads."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(exist_ok=True)
        self._mirrors: OrderedDict[str, CellsMirror] = OrderedDict()  # least recently used first
        # By their members' files, least recently used first.
        self._packs: OrderedDict[tuple[str, ...], CellsPack] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._readers: Counter[str] = Counter()  # running searches reading each file
        self._stale: set[str] = set()  # replaced or evicted, still read by a search
        self._serial = 0

    @contextmanager
    def reading(self, root: Path, notebooks: list[str], max_notebook_bytes: int,
                max_bytes: int, live: Mapping[str, Sequence[str]] | None = None
                ) -> Iterator[tuple[CellsPack, int]]:
        """The mirrors of the notebooks (absolute paths), packed in the order given (written
        where a notebook changed or was never mirrored), and how many are not notebooks that
        can be read. Their files stay until the block ends; past `max_bytes` in all the least
        recently used packs, then mirrors, are then dropped.

        `live`: the cell sources of notebooks open in JupyterLab, by path, as their shared
        documents hold them now: their mirrors are built from those, not from the file (which
        the collaboration server saves later)."""
        live = live or {}
        held: list[str] = []  # files counted as read, so they stay
        try:
            # Every stamp first, then one lock: a search of hundreds of unchanged notebooks
            # costs little more than their stats.
            stamps = [_live_stamp(live[notebook]) if notebook in live else _stamp(notebook)
                      for notebook in notebooks]
            unchanged: list[CellsMirror | None] = []
            with self._lock:
                for notebook, stamp in zip(notebooks, stamps, strict=True):
                    mirror = self._mirrors.get(notebook)
                    if mirror is None or mirror.stamp != stamp:
                        unchanged.append(None)
                        continue
                    self._mirrors.move_to_end(notebook)
                    self._readers[mirror.file] += 1
                    held.append(mirror.file)
                    unchanged.append(mirror)
            found: list[CellsMirror] = []
            invalid = 0
            for notebook, stamp, mirror in zip(notebooks, stamps, unchanged, strict=True):
                if mirror is None:
                    mirror = self._written(root, notebook, stamp, max_notebook_bytes,
                                           live.get(notebook))
                    if mirror is None:
                        invalid += 1
                        continue
                    held.append(mirror.file)
                found.append(mirror)
            yield self._pack(found, held), invalid
        finally:
            with self._lock:
                for name in held:
                    self._readers[name] -= 1
                    if not self._readers[name]:
                        del self._readers[name]
                        if name in self._stale:
                            self._stale.discard(name)
                            self._delete(name)
                while self._bytes > max_bytes and (self._packs or self._mirrors):
                    if self._packs:
                        self._drop_pack(self._packs.popitem(last=False)[1])
                    else:
                        self._drop(self._mirrors.popitem(last=False)[1])

    def _pack(self, found: list[CellsMirror], held: list[str]) -> CellsPack:
        """`found` packed (the same pack as last time where they are the same mirrors), its
        files counted as read in `held`."""
        key = tuple(mirror.file for mirror in found)
        with self._lock:
            pack = self._packs.get(key)
            if pack is not None:
                self._packs.move_to_end(key)
                for name in pack.own_files:
                    self._readers[name] += 1
                    held.append(name)
                return pack
        groups: list[list[CellsMirror]] = []
        size = 0
        for mirror in found:
            if not groups or size + mirror.size > _PACK_PART_BYTES:
                groups.append([])
                size = 0
            groups[-1].append(mirror)
            size += mirror.size
        parts, own_files, cost = [], [], 0
        for group in groups:
            starts = tuple(accumulate([mirror.lines for mirror in group[:-1]], initial=0))
            if len(group) == 1:
                parts.append(PackPart(group[0].file, tuple(group), starts))
                continue
            name = self._new_name("pack")
            try:
                with open(self.folder / name, "wb") as stream:
                    for mirror in group:
                        stream.write((self.folder / mirror.file).read_bytes())
            except OSError:  # as for a mirror: the call says so, no part is left
                (self.folder / name).unlink(missing_ok=True)
                raise
            with self._lock:
                self._readers[name] += 1
            held.append(name)
            parts.append(PackPart(name, tuple(group), starts))
            own_files.append(name)
            cost += sum(mirror.size for mirror in group) + _KEPT_PER_MIRROR
        pack = CellsPack(tuple(parts), tuple(own_files), cost)
        if not own_files:  # the mirrors' own files: nothing to keep
            return pack
        with self._lock:
            if (replaced := self._packs.pop(key, None)) is not None:
                self._drop_pack(replaced)
            self._packs[key] = pack
            self._bytes += pack.cost
            while len(self._packs) > _PACKS_KEPT:
                self._drop_pack(self._packs.popitem(last=False)[1])
        return pack

    def _new_name(self, kind: str) -> str:
        with self._lock:
            self._serial += 1
            return f"{kind}-{self._serial}.txt"

    def _written(self, root: Path, notebook: str, stamp: _Stamp | None,
                 max_notebook_bytes: int, live: Sequence[str] | None = None
                 ) -> CellsMirror | None:
        """The notebook's mirror written anew and counted as read; None if it cannot be read.
        `live`: its cells' sources as its shared document holds them (it is open)."""
        # Read after the stat: a change in between makes the next search read it again.
        if live is not None:
            sources: list[str] | None = list(live)
        else:
            sources = None if stamp is None else cell_sources(root, Path(notebook),
                                                              max_notebook_bytes)
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
        name = self._new_name("cells")
        try:
            (self.folder / name).write_bytes(text)
        except OSError:  # a full temporary folder: the call says so (os_error), none is left
            (self.folder / name).unlink(missing_ok=True)
            raise
        mirror = CellsMirror(Path(notebook), name, tuple(first_lines), stamp, len(text), line,
                             len(text) + _KEPT_PER_MIRROR + _KEPT_PER_CELL * len(first_lines))
        with self._lock:  # known to no other search until now
            if (replaced := self._mirrors.pop(notebook, None)) is not None:
                self._drop(replaced)
            self._mirrors[notebook] = mirror
            self._bytes += mirror.cost
            self._readers[name] += 1
        return mirror

    def _drop(self, mirror: CellsMirror) -> None:
        """With the lock held: forgotten, its file deleted (`_discard`)."""
        self._bytes -= mirror.cost
        self._discard(mirror.file)

    def _drop_pack(self, pack: CellsPack) -> None:
        """With the lock held: forgotten, its own files deleted (`_discard`)."""
        self._bytes -= pack.cost
        for name in pack.own_files:
            self._discard(name)

    def _discard(self, name: str) -> None:
        """With the lock held: the file goes now, or when the last search reading it ends."""
        if self._readers[name]:
            self._stale.add(name)
        else:
            self._readers.pop(name, None)
            self._delete(name)

    def _delete(self, name: str) -> None:
        (self.folder / name).unlink(missing_ok=True)


def _live_stamp(sources: Sequence[str]) -> _Stamp:
    """A stamp for an open notebook's sources: no file's (its inode is -1), the same for the
    same sources."""
    digest = hashlib.blake2b(digest_size=8)
    for source in sources:
        digest.update(source.encode("utf-8", "replace"))
        digest.update(b"\0")
    return -1, len(sources), int.from_bytes(digest.digest(), "big"), 0


def _stamp(notebook: str) -> _Stamp | None:
    try:
        status = os.stat(notebook)
    except OSError:
        return None
    return status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns


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
