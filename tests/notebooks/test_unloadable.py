"""A notebook JupyterLab cannot load (a newer nbformat minor, a cell type it does not know):
one answer from every action, open in JupyterLab or not, and nothing written anywhere.

A real server with jupyter-collaboration; the notebook opened as JupyterLab opens it (a
collaboration session, then the room's WebSocket, synced by a Y client).
"""

from __future__ import annotations

import json

import pytest
from httpx_ws import aconnect_ws
from jupyter_ydoc import YNotebook
from pycrdt import Provider
from pycrdt.websocket.websocket import HttpxWebsocket
from rtc_helpers import open_in_lab, rtc_server_config, sources, until

FUTURE = {"nbformat": 4, "nbformat_minor": 99,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                      "language": "python"}},
          "cells": [{"cell_type": "code", "id": "a1", "metadata": {}, "source": "x = 1",
                     "outputs": [], "execution_count": None},
                    {"cell_type": "future", "id": "b2", "metadata": {}, "source": "??"}]}

CALLS = [
    ("read", {"path": "future.ipynb"}),
    ("notebook", {"action": "insert", "path": "future.ipynb", "source": "y = 2"}),
    ("notebook", {"action": "move", "path": "future.ipynb", "cell": 1, "index": 2}),
    ("notebook", {"action": "set_source", "path": "future.ipynb", "cell": 1, "source": "z"}),
    ("notebook", {"action": "set_type", "path": "future.ipynb", "cell": 1,
                  "cell_type": "markdown"}),
    ("notebook", {"action": "delete", "path": "future.ipynb", "cell": 1}),
    ("notebook", {"action": "clear_outputs", "path": "future.ipynb"}),
    ("notebook", {"action": "run", "path": "future.ipynb", "cell": 1}),
    ("notebook", {"action": "run_all", "path": "future.ipynb"}),
    ("edit", {"path": "future.ipynb", "cell": 1, "old_string": "x", "new_string": "w"}),
]


@pytest.fixture
def jp_server_config(tmp_path):
    return rtc_server_config(tmp_path, save_delay=3600.0)  # nothing is saved during the test


async def _answers(run) -> set[tuple[str | None, str]]:
    answers = set()
    for tool, args in CALLS:
        result = await run.call(tool, args)
        assert not result.ok, (tool, args, result.text)
        answers.add((result.code, result.error["message"]))
    return answers


async def test_every_action_refuses_it_alike_and_writes_nothing(
        jp_serverapp, jp_fetch, jp_http_port, jp_base_url, jp_root_dir):
    path = jp_root_dir / "future.ipynb"
    path.write_text(json.dumps(FUTURE))
    written = path.read_bytes()
    runtime = jp_serverapp.web_app.settings["agent_tools_runtime"]
    run = await runtime.create_run()

    closed = await _answers(run)
    assert len(closed) == 1, closed
    ((code, message),) = closed
    assert code == "invalid_arguments"
    assert "future.ipynb is nbformat 4.99" in message and "(future;" in message
    assert "JupyterLab cannot load it" in message and "nothing was read or written" in message
    assert path.read_bytes() == written

    room, url = await open_in_lab(jp_fetch, jp_http_port, jp_base_url, "future.ipynb")
    human = YNotebook()
    async with aconnect_ws(url) as websocket, Provider(human.ydoc, HttpxWebsocket(websocket, room)):
        await until(lambda: len(sources(human)) == 2, "the client to sync")
        # Open, the same answer, from the shared document; neither it nor the file changes.
        assert await _answers(run) == closed
        assert sources(human) == ["x = 1", "??"]
        # A document that failed to load holds no cell: its file answers, the same way.
        human.ycells.clear()
        await until(lambda: (lambda shared: shared is not None and shared.cell_count == 0)(
            _shared(jp_serverapp)), "the emptied document to reach the server")
        assert await _answers(run) == closed
        assert sources(human) == []
    assert path.read_bytes() == written
    await runtime.close_run(run.id)


def _shared(serverapp):
    """The server's shared document of future.ipynb, synchronously (its room is open)."""
    from jupyter_agent_tools.notebooks import SharedNotebook

    collaboration = serverapp.web_app.settings["jupyter_server_ydoc"]
    for room in collaboration.ywebsocket_server.rooms.values():
        document = getattr(room, "_document", None)
        if document is not None:
            return SharedNotebook(document)
    return None
