"""Reading a notebook file and writing back changed cell sources, inside the server root.

Reads and writes go through the files package (opened from the root without following
links; written atomically). A change is computed on what was read, so writing checks the
file is still that one, with those bytes: a notebook saved meanwhile (by JupyterLab, by
another tool) is never overwritten with a change computed on its old content.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import (
    FileIdentity,
    StaleFile,
    identity_inside,
    read_bytes_inside,
    write_files_atomically,
)
from .document import Notebook
from .editing import FileCells
from .errors import CellGone, StaleNotebook


@dataclass(frozen=True)
class NotebookFile:
    """A notebook as read from disk: where, what it holds, and which bytes were read."""

    path: Path
    shown: str  # the name the user knows it by (root-relative)
    notebook: Notebook
    snapshot: str  # sha256 of the bytes read
    identity: FileIdentity | None


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_notebook(root: Path, path: Path, max_bytes: int | None = None, *,
                  shown: str | None = None) -> NotebookFile:
    """Read and parse the notebook `path` under `root` (InvalidNotebook if it is not one).

    A file that cannot be read at all fails as the files package says (a FilesError).
    """
    shown = shown or path.name
    identity = identity_inside(root, path)
    raw = read_bytes_inside(root, path, max_bytes, shown=shown)
    return NotebookFile(path, shown, Notebook.from_bytes(raw, name=shown), content_hash(raw),
                        identity)


def write_sources(root: Path, file: NotebookFile, sources: Mapping[int, str]) -> bytes:
    """Write `file` back with the given cells' sources replaced; the bytes written.

    StaleNotebook (and nothing written) if the file changed since it was read.
    """
    new_bytes = file.notebook.with_sources(sources)
    _write_over(root, file, new_bytes)
    return new_bytes


def check_unchanged(root: Path, file: NotebookFile) -> None:
    """StaleNotebook unless the file under `root` is still the one read, with its bytes.

    The atomic writer checks the identity again when it writes; the content is compared
    here, just before.
    """
    if identity_inside(root, file.path) != file.identity or content_hash(
            read_bytes_inside(root, file.path, shown=file.shown)) != file.snapshot:
        raise StaleNotebook(file.shown)


def write_cells(root: Path, file: NotebookFile, cells: FileCells) -> bytes:
    """Write `file` back as `cells` holds it now (StaleNotebook, nothing written, if the
    file changed since it was read); the bytes written."""
    new_bytes = cells.to_bytes()
    _write_over(root, file, new_bytes)
    return new_bytes


def _write_over(root: Path, file: NotebookFile, new_bytes: bytes) -> None:
    """Replace `file` with `new_bytes` only if it is still the file read, with the bytes
    read (a compare-and-swap: `write_files_atomically(based_on=...)`); else StaleNotebook."""
    try:
        write_files_atomically({file.path: new_bytes}, root=root,
                               expected={file.path: file.identity},
                               based_on={file.path: file.snapshot},
                               relpath=lambda _: file.shown)
    except StaleFile:
        raise StaleNotebook(file.shown) from None


def write_run_state(root: Path, path: Path, shown: str, max_bytes: int | None, cell_id: str,
                    outputs: Sequence[dict[str, Any]], execution_count: int | None
                    ) -> tuple[str, bytes]:
    """Save what a run left in one cell (its outputs and count) into the notebook file as it
    is now: read afresh, so whatever else was saved meanwhile is kept. CellGone when no code
    cell has that id any more. The hash of the bytes read, and the bytes written."""
    file = read_notebook(root, path, max_bytes, shown=shown)
    cells = FileCells(file.notebook)
    if not cells.set_run_state(cell_id, outputs, execution_count):
        raise CellGone(cell_id=cell_id)
    return file.snapshot, write_cells(root, file, cells)
