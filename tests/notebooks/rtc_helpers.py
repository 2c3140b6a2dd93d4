"""Helpers of the tests that open notebooks as JupyterLab does with real-time collaboration:
a collaboration session, then the room's WebSocket, synced by a Y client (the human)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import nbformat
from jupyter_ydoc import YNotebook
from nbformat.v4 import new_code_cell, new_notebook

WAIT_SECONDS = 30  # a bound on waits for sync and save, not a timing assertion


def rtc_server_config(tmp_path: Path, save_delay: float) -> dict:
    """A server with jupyter-collaboration (and its file ids) beside this package."""
    return {
        "ServerApp": {
            "jpserver_extensions": {"jupyter_agent_tools": True, "jupyter_server_ydoc": True,
                                    "jupyter_server_fileid": True},
            "allow_root": True, "token": "", "password": "", "disable_check_xsrf": True,
        },
        "SQLiteYStore": {"db_path": str(tmp_path / "ystore.db")},
        "BaseFileIdManager": {"db_path": str(tmp_path / "file_id.db"), "db_journal_mode": "OFF"},
        "YDocExtension": {"document_save_delay": save_delay},
    }


def write_notebook(path: Path, *sources: str) -> None:
    nbformat.write(new_notebook(
        cells=[new_code_cell(source) for source in sources],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}}), path)


async def until(condition: Callable[[], bool], what: str) -> None:
    for _ in range(WAIT_SECONDS * 20):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"waited {WAIT_SECONDS}s for {what}")


def sources(notebook: YNotebook) -> list[str]:
    return [str(cell["source"]) for cell in notebook.ycells]


def saved_sources(path: Path) -> list[str] | None:
    """The cell sources on disk; None while the server is writing the file (it writes in
    place, keeping a backup, so a reader can meet it half written)."""
    try:
        return [cell.source for cell in nbformat.read(path, 4).cells]
    except (nbformat.reader.NotJSONError, json.JSONDecodeError):
        return None



async def open_in_lab(jp_fetch, jp_http_port: int, jp_base_url: str, name: str
                      ) -> tuple[str, str]:
    """Open `name` as JupyterLab does: a collaboration session; the room's WebSocket URL."""
    response = await jp_fetch("api", "collaboration", "session", name, method="PUT",
                              body=json.dumps({"format": "json", "type": "notebook"}))
    session = json.loads(response.body)
    room = f"json:notebook:{session['fileId']}"
    return room, (f"http://127.0.0.1:{jp_http_port}{jp_base_url}api/collaboration/room/{room}"
                  f"?sessionId={session['sessionId']}")

