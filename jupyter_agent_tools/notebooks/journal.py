"""What a run knows of the notebooks it works in: what the agent last saw of each cell (so a
change computed on a cell the human has changed since is refused, `CellChanged`, never a
silent overwrite) and the changes it made (so one can be reverted while the cell still holds
what the agent left)."""

from __future__ import annotations

import hashlib
import uuid
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from .errors import CellChanged

ChangeKind = Literal["insert", "delete", "move", "set_type", "set_source"]


def _digest(source: str) -> bytes:
    return hashlib.blake2b(source.encode("utf-8"), digest_size=16).digest()


@dataclass(frozen=True)
class CellChange:
    """One change of the agent's to one cell, with what reverting it needs.

    `before` / `after` are the cell as it was and as the agent left it (cell_type, source,
    metadata; no outputs), None where there was or is no cell; `position` is the cell's
    number before the change.
    """

    id: str
    notebook: str  # API path
    kind: ChangeKind
    cell_id: str
    position: int
    before: dict[str, Any] | None
    after: dict[str, Any] | None


class NotebookJournal:
    """Per run, bounded (oldest dropped first): digests of the cell sources last shown to the
    agent, keyed by notebook and cell id, and the agent's last cell changes."""

    def __init__(self, max_cells: int = 20_000, max_changes: int = 500) -> None:
        self.max_cells = max_cells
        self.max_changes = max_changes
        self._seen: OrderedDict[tuple[str, str], bytes] = OrderedDict()
        self._changes: OrderedDict[str, CellChange] = OrderedDict()

    # -- what the agent saw -----------------------------------------------------------------

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

    # -- what the agent changed -------------------------------------------------------------

    def record(self, notebook: str, kind: ChangeKind, cell_id: str, position: int,
               before: dict[str, Any] | None, after: dict[str, Any] | None) -> CellChange:
        change = CellChange(uuid.uuid4().hex[:12], notebook, kind, cell_id, position,
                            before, after)
        self._changes[change.id] = change
        while len(self._changes) > self.max_changes:
            self._changes.popitem(last=False)
        return change

    def change(self, change_id: str) -> CellChange | None:
        return self._changes.get(change_id)

    def reverted(self, change_id: str) -> None:
        """A change undone is no longer there to undo."""
        self._changes.pop(change_id, None)
