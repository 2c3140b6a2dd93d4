"""A notebook's current content: its shared document while it is open in JupyterLab, else its
file.

One truth for every tool: while a notebook is open with real-time collaboration, the file
on disk is what the shared document last saved (a second or more ago), so `read`, `notebook`,
`grep`, `ast_grep`/`ast_edit`, `lsp` and the staged-edit checks all take the cells from the
shared document. This module is where they ask: on the server's event loop (where the shared
documents live), before any work goes to a thread or a process.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..files import FilesError, read_bytes_inside
from .disk import NotebookFile
from .document import Notebook, unloadable
from .errors import InvalidNotebook
from .shared import SharedNotebook, open_shared_notebook

_COLLABORATION_SETTING = "jupyter_server_ydoc"


def open_notebook_paths(server: Any) -> list[str]:
    """The paths (relative to the server root) of notebooks with a shared document: open in
    JupyterLab with real-time collaboration. Empty when RTC is not running here."""
    settings = getattr(getattr(server, "web_app", None), "settings", {})
    collaboration = settings.get(_COLLABORATION_SETTING)
    file_ids = settings.get("file_id_manager")
    if collaboration is None or file_ids is None:
        return []
    paths = []
    for room_id in list(getattr(getattr(collaboration, "ywebsocket_server", None), "rooms", {})):
        parts = str(room_id).split(":", 2)
        if len(parts) == 3 and parts[1] == "notebook":
            path = file_ids.get_path(parts[2])
            if path:
                paths.append(str(path))
    return paths


async def open_notebooks(server: Any, root: Path, under: Iterable[Path] = ()
                         ) -> dict[Path, SharedNotebook]:
    """The shared documents of the notebooks open in JupyterLab, by absolute path (normal,
    under `root`); only those under one of `under` (folders or files) when given."""
    bases = [Path(os.path.normpath(base)) for base in under]
    found: dict[Path, SharedNotebook] = {}
    for api_path in open_notebook_paths(server):
        path = Path(os.path.normpath(root / api_path))
        if bases and not any(path == base or path.is_relative_to(base) for base in bases):
            continue
        shared = await open_shared_notebook(server, api_path)
        if shared is not None:
            found[path] = shared
    return found


async def open_notebook(server: Any, root: Path, path: Path) -> SharedNotebook | None:
    """The shared document of the notebook at `path` (absolute, under `root`) when it is open
    in JupyterLab; None when it is not (its file is the notebook)."""
    return await open_shared_notebook(server, path.relative_to(root).as_posix())


def live_content(shared: SharedNotebook) -> dict[str, Any]:
    """What the shared document holds now, as an nbformat-4 dict: its cells' code, without
    outputs and attachments (what search and language servers read; converting those on
    the event loop would cost a notebook of plots dearly). A change computed on it and
    written to a file is stale (`live_file`), so the outputs left out are never lost."""
    return shared.cells_content()


def live_bytes(content: dict[str, Any]) -> bytes:
    """A shared document's content as notebook JSON (what a search worker parses, and what
    `live_file`'s snapshot is the hash of)."""
    return (json.dumps(content, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def live_file(path: Path, shown: str, content: dict[str, Any]) -> NotebookFile:
    """The open notebook's content as a `NotebookFile`: what a change (a rename, a rewrite) is
    computed on. Its snapshot is the hash of the content's JSON, which a file on disk has only
    if it holds just that (no outputs to lose): if the notebook is closed before the change
    lands, the write is stale, never a blind one."""
    data = live_bytes(content)
    return NotebookFile(path, shown, Notebook.of_data(content),
                        hashlib.sha256(data).hexdigest(), None)


async def open_notebook_sources(server: Any, root: Path) -> dict[str, list[str]]:
    """Every cell's source of each notebook open in JupyterLab, by absolute normal path (as
    a string), as the shared documents hold them now: what `grep` searches instead of their
    files."""
    return {os.fspath(path): shared.sources()
            for path, shared in (await open_notebooks(server, root)).items()}


async def open_notebook_contents(server: Any, root: Path) -> dict[str, dict[str, Any]]:
    """The content (nbformat 4 dict) of each notebook open in JupyterLab, by absolute normal
    path (as a string), as the shared documents hold them now."""
    return {os.fspath(path): live_content(shared)
            for path, shared in (await open_notebooks(server, root)).items()}


async def check_loadable(shared: SharedNotebook, root: Path, path: Path, shown: str,
                         max_bytes: int | None) -> None:
    """InvalidNotebook (`unloadable`) when JupyterLab cannot load the open notebook at `path`:
    by what its shared document holds, or, when the document holds nothing loaded (no
    version, or no cell: what a failed load leaves), by its file. The same answer as its
    file gives a tool when it is closed (`document.validate`)."""
    if not shared.loaded or shared.cell_count == 0:
        problem = (await asyncio.to_thread(_file_unloadable, root, path, shown, max_bytes)
                   or shared.unloadable(shown))
    else:
        problem = shared.unloadable(shown)
    if problem is not None:
        raise problem


def _file_unloadable(root: Path, path: Path, shown: str, max_bytes: int | None
                     ) -> InvalidNotebook | None:
    try:
        data = json.loads(read_bytes_inside(root, path, max_bytes, shown=shown))
    except (FilesError, ValueError):  # gone or not JSON: the document is the notebook
        return None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        return None
    return unloadable(data.get("nbformat"), data.get("nbformat_minor"),
                      [cell.get("cell_type") for cell in data["cells"] if isinstance(cell, dict)],
                      name=shown)
