"""One truth: while a notebook is open in JupyterLab, every tool reads its shared document.

A real server with jupyter-collaboration, the notebook opened as JupyterLab opens it (a
collaboration session, then the room's WebSocket, synced by a Y client), a real ty for lsp
and the real parser workers for ast_grep. The collaboration server is told not to save for
an hour: the file on disk keeps its first cell only, so any tool that read the file would
answer from it ("No matches", "there is no cell 4") and fail here.
"""

from __future__ import annotations

import pytest
from httpx_ws import aconnect_ws
from jupyter_ydoc import YNotebook
from pycrdt import Provider
from pycrdt.websocket.websocket import HttpxWebsocket
from rtc_helpers import (
    open_in_lab,
    rtc_server_config,
    saved_sources,
    sources,
    until,
    write_notebook,
)

ALTERNATIONS = 100


@pytest.fixture
def jp_server_config(tmp_path):
    return rtc_server_config(tmp_path, save_delay=3600.0)  # nothing is saved during the test


async def test_every_tool_sees_the_agents_own_edits_at_once(
        jp_serverapp, jp_fetch, jp_http_port, jp_base_url, jp_root_dir):
    (jp_root_dir / "pyproject.toml").write_text("[project]\nname = 'rtc'\nversion = '0'\n")
    path = jp_root_dir / "analysis.ipynb"
    write_notebook(path, "import math")
    room, url = await open_in_lab(jp_fetch, jp_http_port, jp_base_url, "analysis.ipynb")
    human = YNotebook()
    async with aconnect_ws(url) as websocket, Provider(human.ydoc, HttpxWebsocket(websocket, room)):
        await until(lambda: len(sources(human)) == 1, "the client to sync")
        runtime = jp_serverapp.web_app.settings["agent_tools_runtime"]
        run = await runtime.create_run()
        stale: list[str] = []
        for step in range(ALTERNATIONS):
            name = f"region_{step}"
            source = f"{name} = {step} * 2\nprint({name})"
            if step % 2 == 0:  # a new cell at the end
                changed = await run.call("notebook", {"action": "insert",
                                                      "path": "analysis.ipynb",
                                                      "source": source})
            else:  # the last cell rewritten
                changed = await run.call("notebook", {"action": "set_source",
                                                      "path": "analysis.ipynb",
                                                      "cell": changed.data["cells"][0]["cell"],
                                                      "source": source})
            assert changed.ok and changed.data["shared_document"], changed.text
            cell = changed.data["cells"][0]["cell"]

            found = await run.call("grep", {"pattern": rf"\b{name}\b", "path": "analysis.ipynb"})
            if not (found.ok and [(m["cell"], m["line"]) for m in found.data["matches"]]
                    == [(cell, 1), (cell, 2)]):
                stale.append(f"step {step} grep: {found.text}")

            structural = await run.call("ast_grep", {"pattern": f"{name} = $A",
                                                     "path": "analysis.ipynb"})
            if not (structural.ok and [(m["cell"], m["captures"]["A"])
                                       for m in structural.data["matches"]]
                    == [(cell, f"{step} * 2")]):
                stale.append(f"step {step} ast_grep: {structural.text}")

            hover = await run.call("lsp", {"action": "hover", "file": "analysis.ipynb",
                                           "cell": cell, "line": 2, "symbol": name})
            if not (hover.ok and f"{name}: Literal[{step * 2}]" in hover.text):
                stale.append(f"step {step} lsp hover: {hover.text}")
        assert stale == [], "\n".join(stale[:10])
        # The file was never saved meanwhile: every answer above came from the shared document.
        assert saved_sources(path) == ["import math"]
        await until(lambda: len(sources(human)) == 1 + ALTERNATIONS // 2,
                    "the human's client to sync the agent's cells")

        # Diagnostics are of the shared document's cells too.
        broken = await run.call("notebook", {"action": "insert", "path": "analysis.ipynb",
                                             "source": "print(regoin_98)"})
        assert broken.ok, broken.text
        cell = broken.data["cells"][0]["cell"]
        checked = await run.call("lsp", {"action": "diagnostics", "file": "analysis.ipynb",
                                         "cell": cell})
        assert checked.ok, checked.text
        assert checked.data["diagnostics"] and all(
            d["cell"] == cell and "regoin_98" in d["message"]
            for d in checked.data["diagnostics"]), checked.text
        deleted = await run.call("notebook", {"action": "delete", "path": "analysis.ipynb",
                                              "cell": cell})
        assert deleted.ok, deleted.text

        # A rename is planned on the shared document's cells and lands there.
        last = 1 + ALTERNATIONS // 2
        renamed = await run.call("lsp_rename", {"file": "analysis.ipynb", "cell": last,
                                                "line": 1, "symbol": "region_99",
                                                "new_name": "area_99"})
        assert renamed.ok, renamed.text
        await until(lambda: sources(human)[-1] == "area_99 = 99 * 2\nprint(area_99)",
                    "the rename to arrive")

        # A search of the whole folder finds the open notebook's cells the same way.
        everywhere = await run.call("grep", {"pattern": "area_99 ="})
        assert [(m["file"], m["cell"]) for m in everywhere.data["matches"]] == [
            ("analysis.ipynb", 1 + ALTERNATIONS // 2)], everywhere.text

        # A staged rewrite is computed on the shared document's cells too, and lands there.
        staged = await run.call("ast_edit", {"pattern": "print($A)", "rewrite": "display($A)",
                                             "path": "analysis.ipynb"})
        assert staged.ok and staged.data["replacements"] == ALTERNATIONS // 2, staged.text
        accepted = await run.call("resolve", {"edit_id": staged.data["edit_id"],
                                              "action": "accept"})
        assert accepted.ok, accepted.text
        await until(lambda: sources(human)[-1] == "area_99 = 99 * 2\ndisplay(area_99)",
                    "the rewrite to arrive")
        await runtime.close_run(run.id)
