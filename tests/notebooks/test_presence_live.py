"""Agents as collaborators of an open notebook (issue 47): while a run changes or runs cells of
a notebook open with real-time collaboration, it is in the notebook's room awareness — its
client's name, its colour, its cursor at the cell — one collaborator per run; a notebook
nobody has open gets no room from it.

A real server with jupyter-collaboration, the room opened as JupyterLab opens it."""

from __future__ import annotations

import pytest
from httpx_ws import aconnect_ws
from jupyter_ydoc import YNotebook
from pycrdt import Provider
from pycrdt.websocket.websocket import HttpxWebsocket
from rtc_helpers import open_in_lab, rtc_server_config, sources, until, write_notebook

from jupyter_agent_tools.notebooks.presence import STATE_FIELD
from jupyter_agent_tools.runtime.run import ClientInfo


@pytest.fixture
def jp_server_config(tmp_path):
    return rtc_server_config(tmp_path, save_delay=0.2)


async def test_two_agents_are_two_collaborators_at_the_cells_they_work_on(
        jp_serverapp, jp_fetch, jp_http_port, jp_base_url, jp_root_dir):
    write_notebook(jp_root_dir / "plan.ipynb", "a = 1", "b = 2", "c = 3")
    write_notebook(jp_root_dir / "closed.ipynb", "z = 0")
    room, url = await open_in_lab(jp_fetch, jp_http_port, jp_base_url, "plan.ipynb")
    human = YNotebook()
    async with aconnect_ws(url) as websocket, Provider(human.ydoc, HttpxWebsocket(websocket, room)):
        await until(lambda: len(sources(human)) == 3, "the client to sync")
        runtime = jp_serverapp.web_app.settings["agent_tools_runtime"]
        ada = await runtime.create_run(client=ClientInfo("ada-agent", "1.0"))
        bob = await runtime.create_run()
        assert (await ada.call("notebook", {"action": "set_source", "path": "plan.ipynb",
                                            "cell": 2, "source": "b = 20"})).ok
        assert (await bob.call("notebook", {"action": "set_source", "path": "plan.ipynb",
                                            "cell": 3, "source": "c = 30"})).ok
        assert (await bob.call("notebook", {"action": "set_source", "path": "closed.ipynb",
                                            "cell": 1, "source": "z = 1"})).ok

        collaboration = jp_serverapp.web_app.settings["jupyter_server_ydoc"]
        document = await collaboration.get_document(path="plan.ipynb", content_type="notebook",
                                                    file_format="json", copy=False)
        agents = {state[STATE_FIELD]["run_id"]: state
                  for state in document.awareness.states.values() if STATE_FIELD in state}
        assert set(agents) == {ada.id, bob.id}
        # Named by its client (said to be an agent), else by how it was started.
        assert agents[ada.id]["user"]["display_name"] == "ada-agent"
        assert agents[bob.id]["user"]["display_name"] == "api agent"
        assert agents[ada.id]["user"]["color"].startswith("#")
        assert (agents[ada.id][STATE_FIELD]["cell"], agents[bob.id][STATE_FIELD]["cell"]) == (2, 3)
        # Its cursor is a Y relative position in the cell's source, as JupyterLab's are.
        [cursor] = agents[ada.id]["cursors"]
        assert cursor["head"]["item"] and cursor["primary"] is True
        # A notebook nobody has open: no room was made for the agent.
        assert await collaboration.get_document(path="closed.ipynb", content_type="notebook",
                                                file_format="json", copy=False) is None
