"""Two runs changing one cell of a notebook open in JupyterLab (real-time collaboration): the
first change lands in the shared document, the second, computed on the cell as it was, is
refused as stale_edit; a cell the human changed since a run read it is refused too."""

from __future__ import annotations

import asyncio

import pytest
from httpx_ws import aconnect_ws
from jupyter_ydoc import YNotebook
from pycrdt import Provider
from pycrdt.websocket.websocket import HttpxWebsocket
from rtc_helpers import open_in_lab, rtc_server_config, sources, until, write_notebook


@pytest.fixture
def jp_server_config(tmp_path):
    return rtc_server_config(tmp_path, save_delay=0.2)


def codes(results) -> list[str]:
    return sorted(result.code or "ok" for result in results)


async def test_two_runs_changing_one_cell_of_an_open_notebook_one_is_stale(
        jp_serverapp, jp_fetch, jp_http_port, jp_base_url, jp_root_dir):
    write_notebook(jp_root_dir / "open.ipynb", "a = 1", "b = 2", "c = 3", "d = 4")
    room, url = await open_in_lab(jp_fetch, jp_http_port, jp_base_url, "open.ipynb")
    human = YNotebook()
    async with aconnect_ws(url) as websocket, Provider(human.ydoc, HttpxWebsocket(websocket, room)):
        await until(lambda: len(sources(human)) == 4, "the client to sync")
        runtime = jp_serverapp.web_app.settings["agent_tools_runtime"]
        first, second = await runtime.create_run(), await runtime.create_run()

        async def read_both() -> None:
            for run in (first, second):
                listing = await run.call("read", {"path": "open.ipynb"})
                assert listing.ok and listing.data["shared_document"] is True

        await read_both()
        results = await asyncio.gather(*(
            run.call("notebook", {"action": "set_source", "path": "open.ipynb", "cell": 2,
                                  "source": f"b = 'run {n}'"})
            for n, run in enumerate((first, second))))
        assert codes(results) == ["ok", "stale_edit"], [r.text for r in results]
        winner = 0 if results[0].ok else 1
        assert results[winner].data["shared_document"] is True
        await until(lambda: sources(human)[1] == f"b = 'run {winner}'", "the change to arrive")

        # Both read again, then move the same cell (by id) to different places: once.
        await read_both()
        cell_id = human.ycells[2]["id"]
        results = await asyncio.gather(*(
            run.call("notebook", {"action": "move", "path": "open.ipynb", "cell": cell_id,
                                  "index": index})
            for run, index in ((first, 1), (second, 4))))
        assert codes(results) == ["ok", "stale_edit"], [r.text for r in results]
        place = 1 if results[0].ok else 4
        await until(lambda: human.ycells[place - 1]["id"] == cell_id, "the move to arrive")
        assert sorted(sources(human)) == sorted(["a = 1", f"b = 'run {winner}'", "c = 3",
                                                 "d = 4"])

        # The human types into a cell a run has read: that run's change to it is stale.
        await read_both()
        typed = human.ycells[0]["source"]
        typed += "  # the human's"
        runtime_view = await first.call("read", {"path": "open.ipynb", "cell": 1})
        for _ in range(200):  # until the typing reached the server's document
            if "the human's" in runtime_view.text:
                break
            await asyncio.sleep(0.05)
            runtime_view = await first.call("read", {"path": "open.ipynb", "cell": 1})
        stale = await second.call("notebook", {"action": "set_type", "path": "open.ipynb",
                                               "cell": human.ycells[0]["id"],
                                               "cell_type": "markdown"})
        assert stale.code == "stale_edit", stale.text
        assert human.ycells[0]["cell_type"] == "code"
        assert str(human.ycells[0]["source"]).endswith("  # the human's")
