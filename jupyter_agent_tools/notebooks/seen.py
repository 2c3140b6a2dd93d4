"""What an agent last saw of each notebook cell, so that a change computed on a cell the
human has changed since is refused (`CellChanged`), never a silent overwrite."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Iterable

from .errors import CellChanged


def _digest(source: str) -> bytes:
    return hashlib.blake2b(source.encode("utf-8"), digest_size=16).digest()


class SeenCells:
    """Per run: a digest of each cell's source as last shown to the agent (by `read`, or by
    the agent's own change), keyed by notebook and cell id; bounded, oldest dropped first."""

    def __init__(self, max_cells: int = 20_000) -> None:
        self.max_cells = max_cells
        self._seen: OrderedDict[tuple[str, str], bytes] = OrderedDict()

    def saw(self, notebook: str, cells: Iterable[tuple[str | None, str]]) -> None:
        """The agent was shown these (id, source) cells of `notebook` (cells without an id
        cannot be told apart after a change, and are not kept)."""
        for cell_id, source in cells:
            if cell_id is None:
                continue
            key = (notebook, cell_id)
            self._seen[key] = _digest(source)
            self._seen.move_to_end(key)
        while len(self._seen) > self.max_cells:
            self._seen.popitem(last=False)

    def check(self, notebook: str, number: int, cell_id: str | None, source: str) -> None:
        """CellChanged when the agent saw this cell holding other source than it does now;
        a cell the agent never saw passes (its change was computed on nothing stale)."""
        if cell_id is None:
            return
        seen = self._seen.get((notebook, cell_id))
        if seen is not None and seen != _digest(source):
            raise CellChanged(cell=number, cell_id=cell_id)

    def forget(self, notebook: str, cell_id: str) -> None:
        self._seen.pop((notebook, cell_id), None)
