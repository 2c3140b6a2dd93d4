"""What a run knows of the notebooks it works in: what the agent last saw of each cell (so a
change computed on a cell the human or another run has changed since is refused,
`CellChanged`, never a silent overwrite) and the changes it made (so one can be reverted while
the cell still holds what the agent left).

A cell's version, as a run saw it, is its type and source and its number (its position).
Every cell change checks type and source; a change that names the cell by number, and a move,
check the number too (a cell moved by someone else, or cells inserted or deleted before it,
mean the number names another place than the agent saw). The run's own inserts, deletes and
moves renumber what it saw as they renumber the notebook (`shifted`)."""

from __future__ import annotations

import hashlib
import uuid
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from .errors import CellChanged

ChangeKind = Literal["insert", "delete", "move", "set_type", "set_source"]


def _digest(cell_type: str, source: str) -> bytes:
    return hashlib.blake2b(f"{cell_type}\0{source}".encode("utf-8", "surrogatepass"),
                           digest_size=16).digest()


# A cell as a run is shown it: (id, cell_type, source, number from 1).
SeenCell = tuple[str | None, str, str, int]


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
        self._seen: OrderedDict[tuple[str, str], tuple[bytes, int]] = OrderedDict()
        self._changes: OrderedDict[str, CellChange] = OrderedDict()

    # -- what the agent saw -----------------------------------------------------------------

    def saw(self, notebook: str, cells: Iterable[SeenCell]) -> None:
        """The agent was shown these (id, cell_type, source, number) cells of `notebook`
        (cells without an id cannot be told apart after a change, and are not kept)."""
        for cell_id, cell_type, source, number in cells:
            if cell_id is None:
                continue
            key = (notebook, cell_id)
            self._seen[key] = (_digest(cell_type, source), number)
            self._seen.move_to_end(key)
        while len(self._seen) > self.max_cells:
            self._seen.popitem(last=False)

    def check(self, notebook: str, number: int, cell_id: str | None, cell_type: str,
              source: str, *, position: bool = False) -> None:
        """CellChanged when the agent saw this cell with another type or source than it has
        now, or (`position`) at another number than `number`, where it is now; a cell the agent
        never saw passes (its change was computed on nothing stale)."""
        if cell_id is None:
            return
        seen = self._seen.get((notebook, cell_id))
        if seen is None:
            return
        digest, seen_at = seen
        if digest != _digest(cell_type, source):
            raise CellChanged(cell=number, cell_id=cell_id)
        if position and seen_at != number:
            raise CellChanged(cell=number, cell_id=cell_id, seen_at=seen_at)

    def edited(self, notebook: str, cell: SeenCell, before: str) -> None:
        """The run changed the source of `cell` (id, type, source now, number) from `before`
        (an `edit` of part of it): what it saw follows only if it saw the cell as it was."""
        cell_id, cell_type, source, number = cell
        if cell_id is None:
            return
        seen = self._seen.get((notebook, cell_id))
        if seen is not None and seen[0] == _digest(cell_type, before):
            self._seen[(notebook, cell_id)] = (_digest(cell_type, source), number)

    def shifted(self, notebook: str, kind: Literal["insert", "delete", "move"], at: int,
                to: int = 0) -> None:
        """The run itself inserted a cell at number `at`, deleted the cell at `at`, or moved
        the cell at `at` to `to`: the cells it saw are renumbered as the notebook is."""
        for key, (digest, number) in list(self._seen.items()):
            if key[0] != notebook:
                continue
            if kind == "insert":
                moved = number + 1 if number >= at else number
            elif kind == "delete":
                moved = number - 1 if number > at else number
            elif number == at:
                moved = to
            elif at < number <= to:
                moved = number - 1
            elif to <= number < at:
                moved = number + 1
            else:
                moved = number
            if moved != number:
                self._seen[key] = (digest, moved)

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
