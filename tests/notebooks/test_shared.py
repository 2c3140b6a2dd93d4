"""Open notebooks (real-time collaboration): a tool's edit goes through the shared document.

A real server with jupyter-collaboration; the notebook is opened as JupyterLab opens it (a
collaboration session, then the document's WebSocket, synced by a Y client). The client
sees the agent's edit arrive in place, the human's own unsaved typing in another cell
survives, and the collaboration server saves both.
"""

from __future__ import annotations

import asyncio

import nbformat
import pytest
from httpx_ws import aconnect_ws
from jupyter_ydoc import YNotebook
from nbformat.v4 import new_code_cell
from pycrdt import Provider
from pycrdt.websocket.websocket import HttpxWebsocket
from rtc_helpers import (
    WAIT_SECONDS,
    open_in_lab,
    rtc_server_config,
    saved_sources,
    sources,
    until,
    write_notebook,
)

from jupyter_agent_tools.notebooks import OutputChange, SharedNotebook


@pytest.fixture
def save_delay() -> float:
    """Seconds the collaboration server waits before saving a changed document."""
    return 0.2


@pytest.fixture
def jp_server_config(tmp_path, save_delay):
    return rtc_server_config(tmp_path, save_delay)


async def test_an_edit_of_an_open_notebook_reaches_its_clients_in_place(
        jp_serverapp, jp_fetch, jp_http_port, jp_base_url, jp_root_dir):
    path = jp_root_dir / "analysis.ipynb"
    write_notebook(path, "sales = [3, 5, 8]", "total = sum(sales)", "print(total)")
    # Open it as JupyterLab does: a collaboration session, then the room's WebSocket.
    room, url = await open_in_lab(jp_fetch, jp_http_port, jp_base_url, "analysis.ipynb")
    human = YNotebook()
    async with aconnect_ws(url) as websocket, Provider(human.ydoc, HttpxWebsocket(websocket, room)):
        await until(lambda: len(sources(human)) == 3, "the client to sync")
        # The human types in cell 3 and has not saved.
        typed = human.ycells[2]["source"]
        typed += "  # checked"

        runtime = jp_serverapp.web_app.settings["agent_tools_runtime"]
        run = await runtime.create_run()
        # The agent reads what the human sees, unsaved typing included.
        for _ in range(WAIT_SECONDS * 20):  # until the typing has reached the server
            listing = await run.call("read", {"path": "analysis.ipynb", "offset": 3})
            if "1\tprint(total)  # checked" in listing.text:
                break
            await asyncio.sleep(0.05)
        assert listing.data["shared_document"] is True
        assert "1\tprint(total)  # checked" in listing.text
        result = await run.call("edit", {"path": "analysis.ipynb", "cell": 2,
                                         "old_string": "sum(sales)", "new_string": "max(sales)"})
        assert result.ok, result.error
        assert result.data["shared_document"] is True
        assert "in the open notebook's shared document" in result.text

        await until(lambda: sources(human)[1] == "total = max(sales)", "the edit to arrive")
        assert sources(human) == ["sales = [3, 5, 8]", "total = max(sales)",
                                  "print(total)  # checked"]
        # The collaboration server saves the shared document: both changes reach the file.
        await until(lambda: saved_sources(path) == [
            "sales = [3, 5, 8]", "total = max(sales)", "print(total)  # checked"], "the save")

        # A whole-notebook write goes through the shared document too, cell by cell.
        rewritten = nbformat.read(path, 4)
        rewritten.cells[0].source = "sales = [3, 5, 8, 13]"
        written = await run.call("write", {"path": "analysis.ipynb",
                                           "content": nbformat.writes(rewritten)})
        assert written.ok and written.data["shared_document"] is True
        await until(lambda: sources(human)[0] == "sales = [3, 5, 8, 13]", "the write to arrive")
        assert sources(human)[1:] == ["total = max(sales)", "print(total)  # checked"]
        invalid = await run.call("write", {"path": "analysis.ipynb", "content": "{}"})
        assert invalid.code == "invalid_arguments" and sources(human)[0] == "sales = [3, 5, 8, 13]"

        # Cells are those of the open notebook, refusals as for a file.
        beyond = await run.call("edit", {"path": "analysis.ipynb", "cell": 4,
                                         "old_string": "x", "new_string": "y"})
        assert beyond.code == "invalid_arguments" and "has 3 cells" in beyond.error["message"]
        # A cell is named by its id as well, the open notebook's.
        cell_id = human.ycells[2]["id"]
        one = await run.call("read", {"path": "analysis.ipynb", "cell": cell_id})
        assert [c["cell"] for c in one.data["cells"]] == [3] and one.data["shared_document"]
        by_id = await run.call("edit", {"path": "analysis.ipynb", "cell": cell_id,
                                        "old_string": "checked", "new_string": "verified"})
        assert by_id.ok and by_id.data["cell"] == 3, by_id.error
        await until(lambda: sources(human)[2] == "print(total)  # verified", "the edit by id")
        unknown = await run.call("edit", {"path": "analysis.ipynb", "cell": "nope",
                                          "old_string": "x", "new_string": "y"})
        assert unknown.code == "invalid_arguments"
        assert "the open notebook has 3 cells" in unknown.error["message"]
        await runtime.close_run(run.id)


async def test_rewrites_and_renames_reach_an_open_notebook_in_place(
        jp_serverapp, jp_fetch, jp_http_port, jp_base_url, jp_root_dir):
    (jp_root_dir / "pyproject.toml").write_text("[project]\nname = 'rtc'\nversion = '0'\n")
    path = jp_root_dir / "analysis.ipynb"
    write_notebook(path, "sales = [3, 5, 8]\nprint(sales)", "total = sum(sales)",
                   "print(total)")
    room, url = await open_in_lab(jp_fetch, jp_http_port, jp_base_url, "analysis.ipynb")
    human = YNotebook()
    async with aconnect_ws(url) as websocket, Provider(human.ydoc, HttpxWebsocket(websocket, room)):
        await until(lambda: len(sources(human)) == 3, "the client to sync")
        runtime = jp_serverapp.web_app.settings["agent_tools_runtime"]
        run = await runtime.create_run()
        staged = await run.call("ast_edit", {"pattern": "print($A)", "rewrite": "display($A)",
                                             "path": "analysis.ipynb"})
        assert staged.ok, staged.text
        # The human types in cell 2 meanwhile, unsaved: no conflict with cells 1 and 3.
        typed = human.ycells[1]["source"]
        typed += "  # checked"
        await server_holds(run, "1\ttotal = sum(sales)  # checked")
        accepted = await run.call("resolve", {"edit_id": staged.data["edit_id"],
                                              "action": "accept"})
        assert accepted.ok, accepted.text
        expected = ["sales = [3, 5, 8]\ndisplay(sales)", "total = sum(sales)  # checked",
                    "display(total)"]
        await until(lambda: sources(human) == expected, "the rewrite to arrive")
        await until(lambda: saved_sources(path) == expected, "the save")

        # A rewrite staged on a cell the human then changes is stale: nothing changes.
        staged = await run.call("ast_edit", {"pattern": "display($A)", "rewrite": "print($A)",
                                             "path": "analysis.ipynb"})
        assert staged.ok, staged.text
        typed = human.ycells[2]["source"]
        typed += "  # mine"
        await server_holds(run, "1\tdisplay(total)  # mine")
        refused = await run.call("resolve", {"edit_id": staged.data["edit_id"],
                                             "action": "accept"})
        assert refused.code == "stale_edit" and refused.data["stale_files"] == ["analysis.ipynb"]
        assert sources(human)[0] == "sales = [3, 5, 8]\ndisplay(sales)"

        # lsp_rename (a real basedpyright) renames across cells in the shared document too.
        renamed = await run.call("lsp_rename", {"file": "analysis.ipynb", "cell": 1, "line": 1,
                                                "symbol": "sales", "new_name": "revenue"})
        assert renamed.ok, renamed.text
        await until(lambda: sources(human)[:2] == [
            "revenue = [3, 5, 8]\ndisplay(revenue)", "total = sum(revenue)  # checked"],
            "the rename to arrive")
        assert sources(human)[2] == "display(total)  # mine"
        await runtime.close_run(run.id)


@pytest.mark.parametrize("save_delay", [3600.0])  # nothing typed is saved during the test
async def test_a_patch_reaches_an_open_notebook_unless_it_has_unsaved_typing(
        jp_serverapp, jp_fetch, jp_http_port, jp_base_url, jp_root_dir):
    path = jp_root_dir / "analysis.ipynb"
    write_notebook(path, "sales = [3, 5, 8]", "total = sum(sales)")
    text = path.read_text()
    at = text.splitlines().index('    "total = sum(sales)"') + 1
    patch = (f"--- a/analysis.ipynb\n+++ b/analysis.ipynb\n@@ -{at},1 +{at},1 @@\n"
             f'-    "total = sum(sales)"\n+    "total = max(sales)"\n')
    room, url = await open_in_lab(jp_fetch, jp_http_port, jp_base_url, "analysis.ipynb")
    human = YNotebook()
    async with aconnect_ws(url) as websocket, Provider(human.ydoc, HttpxWebsocket(websocket, room)):
        await until(lambda: len(sources(human)) == 2, "the client to sync")
        runtime = jp_serverapp.web_app.settings["agent_tools_runtime"]
        run = await runtime.create_run()
        patched = await run.call("apply_patch", {"patch": patch})
        assert patched.ok, patched.text
        await until(lambda: sources(human) == ["sales = [3, 5, 8]", "total = max(sales)"],
                    "the patch to arrive")
        assert path.read_text() == text  # the collaboration server saves it, not the tool

        # A patch made against the file while the open notebook holds unsaved changes (the
        # human's typing, and here the first patch) is refused: they would be lost.
        typed = human.ycells[0]["source"]
        typed += "  # from the CSV"
        await server_holds(run, "1\tsales = [3, 5, 8]  # from the CSV")
        refused = await run.call("apply_patch", {"patch": patch})
        assert refused.code == "stale_edit" and "unsaved" in refused.error["message"]
        assert path.read_text() == text
        assert sources(human) == ["sales = [3, 5, 8]  # from the CSV", "total = max(sales)"]
        await runtime.close_run(run.id)


async def test_a_patch_whose_other_file_cannot_be_written_leaves_the_open_notebook_as_it_was(
        jp_serverapp, jp_fetch, jp_http_port, jp_base_url, jp_root_dir):
    path = jp_root_dir / "analysis.ipynb"
    write_notebook(path, "sales = [3, 5, 8]", "total = sum(sales)")
    (jp_root_dir / "notes.txt").write_text("a file, so no folder of that name can be made\n")
    at = path.read_text().splitlines().index('    "total = sum(sales)"') + 1
    patch = (f"--- a/analysis.ipynb\n+++ b/analysis.ipynb\n@@ -{at},1 +{at},1 @@\n"
             f'-    "total = sum(sales)"\n+    "total = max(sales)"\n'
             "--- /dev/null\n+++ b/notes.txt/todo.py\n@@ -0,0 +1 @@\n+print('later')\n")
    room, url = await open_in_lab(jp_fetch, jp_http_port, jp_base_url, "analysis.ipynb")
    human = YNotebook()
    async with aconnect_ws(url) as websocket, Provider(human.ydoc, HttpxWebsocket(websocket, room)):
        await until(lambda: len(sources(human)) == 2, "the client to sync")
        runtime = jp_serverapp.web_app.settings["agent_tools_runtime"]
        run = await runtime.create_run()
        refused = await run.call("apply_patch", {"patch": patch})
        assert refused.code == "not_found" and "no file was changed" in refused.text, refused.text
        # All or nothing: the open notebook's cell, changed first, is put back.
        listing = await run.call("read", {"path": "analysis.ipynb"})
        assert "1\ttotal = sum(sales)" in listing.text.splitlines(), listing.text
        await asyncio.sleep(0.5)  # what the client was sent has arrived
        assert sources(human) == ["sales = [3, 5, 8]", "total = sum(sales)"]
        await runtime.close_run(run.id)


async def server_holds(run, line: str) -> None:
    """Wait until the open notebook, as the agent reads it, shows `line` (the human's
    typing has reached the server's shared document)."""
    for _ in range(WAIT_SECONDS * 20):
        listing = await run.call("read", {"path": "analysis.ipynb"})
        if line in listing.text.splitlines():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"waited {WAIT_SECONDS}s for {line!r} in {listing.text}")


async def test_a_notebook_nobody_has_open_is_written_as_a_file(jp_serverapp, jp_root_dir):
    path = jp_root_dir / "closed.ipynb"
    write_notebook(path, "x = 1")
    run = await jp_serverapp.web_app.settings["agent_tools_runtime"].create_run()
    result = await run.call("edit", {"path": "closed.ipynb", "cell": 1, "old_string": "1",
                                     "new_string": "2"})
    assert result.ok and result.data["shared_document"] is False
    assert nbformat.read(path, 4).cells[0].source == "x = 2"
    missing = await run.call("edit", {"path": "missing.ipynb", "cell": 1, "old_string": "1",
                                      "new_string": "2"})
    assert missing.code == "not_found"


def test_replacements_after_non_ascii_text_land_where_they_should():
    """Y text positions count UTF-8 bytes; spans are characters: both must agree."""
    document = YNotebook()
    document.set(nbformat.v4.new_notebook(cells=[
        new_code_cell("prix = 'café ☕'  # total\ntotal = prix + total")]))
    shared = SharedNotebook(document)
    source = shared.sources()[0]
    spans = [(start, start + len("total")) for start in
             (source.index("total ="), source.rindex("total"))]
    shared.replace(1, spans, "somme")
    assert shared.sources() == ["prix = 'café ☕'  # total\nsomme = prix + somme"]


def test_a_running_cells_outputs_follow_it_when_cells_are_added_or_moved_above():
    """Outputs find their cell where it was last seen, and again when cells shifted."""
    document = YNotebook()
    document.set(nbformat.v4.new_notebook(cells=[new_code_cell("a = 1"), new_code_cell("1+1")]))
    shared = SharedNotebook(document)
    running = shared.ids()[1]
    assert running is not None
    shared.begin_execution(running)
    shared.insert(1, "markdown", "# added above while it runs")
    shared.move(3, 1)  # the running cell moves to the top: a new Y cell, same id
    result = {"output_type": "execute_result", "data": {"text/plain": "2"}, "metadata": {},
              "execution_count": 1}
    shared.change_outputs(running, OutputChange("append", output=result))
    shared.end_execution(running, 1)
    assert shared.number_of(running) == 1 and shared.source(1) == "1+1"
    cell = document.get()["cells"][0]
    assert cell["id"] == running and cell["outputs"] == [result]
    assert cell["execution_count"] == 1
    assert [c["outputs"] for c in document.get()["cells"][1:] if c["cell_type"] == "code"] == [[]]
