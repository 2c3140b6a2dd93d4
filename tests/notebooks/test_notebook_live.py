"""The agent works in a notebook the human has open (real-time collaboration, a real kernel):
cells it adds and runs appear in place, outputs as they arrive, in the kernel the notebook
shows, and the human's typing meanwhile is kept."""

from __future__ import annotations

import asyncio
import json

import nbformat
import pytest
from httpx_ws import aconnect_ws
from jupyter_ydoc import YNotebook
from pycrdt import Provider
from pycrdt.websocket.websocket import HttpxWebsocket
from rtc_helpers import open_in_lab, rtc_server_config, sources, until, write_notebook

TYPED = "  # the human types this, one character at a time, while the agent works"
PLOT = ("print('secret is', secret)\nimport matplotlib.pyplot as plt\nplt.plot(sales)\n"
        "plt.show()")


@pytest.fixture
def jp_server_config(tmp_path):
    return rtc_server_config(tmp_path, save_delay=0.2)


def outputs(notebook: YNotebook, index: int) -> list[dict]:
    return notebook.ycells[index]["outputs"].to_py()


def stream_text(notebook: YNotebook, index: int) -> str:
    return "".join(str(o.get("text", "")) for o in outputs(notebook, index)
                   if o.get("output_type") == "stream")


async def start_notebook_kernel(jp_fetch, name: str) -> str:
    """Start the notebook's session as JupyterLab does on opening it; its kernel id."""
    response = await jp_fetch("api", "sessions", method="POST", body=json.dumps(
        {"path": name, "name": name, "type": "notebook", "kernel": {"name": "python3"}}))
    return json.loads(response.body)["kernel"]["id"]


async def run_as_the_human(jp_serverapp, kernel_id: str, code: str) -> None:
    """Run code in the notebook's kernel the way the human's view does (its own client)."""
    client = jp_serverapp.kernel_manager.get_kernel(kernel_id).client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        reply = await client.execute_interactive(code, timeout=60)
        assert reply["content"]["status"] == "ok"
    finally:
        client.stop_channels()


async def type_slowly(notebook: YNotebook, index: int, text: str) -> None:
    """The human types into a cell at 20 characters a second."""
    for character in text:
        source = notebook.ycells[index]["source"]
        source += character
        await asyncio.sleep(0.05)


async def test_the_agent_adds_and_runs_cells_in_the_open_notebook_as_the_human_types(
        jp_serverapp, jp_fetch, jp_http_port, jp_base_url, jp_root_dir):
    path = jp_root_dir / "analysis.ipynb"
    write_notebook(path, "sales = [3, 5, 8]", "print(sum(sales))")
    kernel_id = await start_notebook_kernel(jp_fetch, "analysis.ipynb")
    await run_as_the_human(jp_serverapp, kernel_id, "secret = 42\nsales = [3, 5, 8]")
    room, url = await open_in_lab(jp_fetch, jp_http_port, jp_base_url, "analysis.ipynb")
    human = YNotebook()
    async with aconnect_ws(url) as websocket, Provider(human.ydoc, HttpxWebsocket(websocket, room)):
        await until(lambda: len(sources(human)) == 2, "the client to sync")
        runtime = jp_serverapp.web_app.settings["agent_tools_runtime"]
        run = await runtime.create_run()
        typing = asyncio.ensure_future(type_slowly(human, 0, TYPED))

        first = (await run.call("read", {"path": "analysis.ipynb"})).data["cells"][0]["id"]
        note = await run.call("notebook", {"action": "insert", "path": "analysis.ipynb",
                                           "cell": first, "cell_type": "markdown",
                                           "source": "## What the agent found"})
        assert note.ok and note.data["shared_document"] is True, note.text
        assert note.data["cells"][0]["cell"] == 2
        plot = await run.call("notebook", {
            "action": "insert", "path": "analysis.ipynb", "index": 3, "run": True,
            "source": PLOT})
        assert plot.ok, plot.text
        # The kernel is the one the notebook shows: the human's variable is there.
        assert "secret is 42" in plot.text and plot.data["kernel_id"] == kernel_id
        assert any(block["type"] == "image" for block in plot.blocks)
        code_id = plot.data["cells"][0]["id"]
        await typing

        # The human's view: both cells in place, the output and the image in the code cell,
        # every character typed meanwhile kept.
        await until(lambda: len(sources(human)) == 4 and bool(outputs(human, 2)),
                    "the cells and outputs to arrive")
        assert sources(human) == ["sales = [3, 5, 8]" + TYPED, "## What the agent found",
                                  PLOT, "print(sum(sales))"]
        assert human.ycells[2]["id"] == code_id
        assert "secret is 42" in stream_text(human, 2)
        assert any("image/png" in o.get("data", {}) for o in outputs(human, 2))
        count = human.ycells[2]["execution_count"]
        assert count == plot.data["execution_count"] and count is not None

        # The collaboration server saves it: the file holds the outputs and the count.
        def saved() -> bool:
            try:
                cells = nbformat.read(path, 4).cells
            except (nbformat.reader.NotJSONError, json.JSONDecodeError):
                return False
            return len(cells) == 4 and cells[2].execution_count == count and any(
                "image/png" in o.get("data", {}) for o in cells[2].outputs)
        await until(saved, "the save with outputs")

        # A long cell's output shows in the human's view while it still runs.
        slow = asyncio.ensure_future(run.call("notebook", {
            "action": "insert", "path": "analysis.ipynb", "run": True,
            "source": "import time\nfor step in range(6):\n    print('step', step, flush=True)"
                      "\n    time.sleep(0.4)"}))
        await until(lambda: len(sources(human)) == 5 and "step 1" in stream_text(human, 4),
                    "the first steps to show")
        assert not slow.done()
        assert human.ycells[4]["execution_state"] == "running"
        finished = await slow
        assert finished.ok and "step 5" in finished.text
        await until(lambda: human.ycells[4]["execution_state"] == "idle", "the run to end")

        # Move, retype, clear and delete show in place too.
        moved = await run.call("notebook", {"action": "move", "path": "analysis.ipynb",
                                            "cell": code_id, "index": 5})
        assert moved.ok and moved.data["cells"] == [{"cell": 5, "id": code_id}]
        await until(lambda: human.ycells[4]["id"] == code_id, "the move")
        cleared = await run.call("notebook", {"action": "clear_outputs", "path": "analysis.ipynb",
                                              "cell": code_id})
        assert cleared.ok
        await until(lambda: outputs(human, 4) == [], "the outputs to clear")
        retyped = await run.call("notebook", {"action": "set_type", "path": "analysis.ipynb",
                                              "cell": 2, "cell_type": "raw"})
        assert retyped.ok
        await until(lambda: human.ycells[1]["cell_type"] == "raw", "the type change")
        deleted = await run.call("notebook", {"action": "delete", "path": "analysis.ipynb",
                                              "cell": 2})
        assert deleted.ok
        await until(lambda: len(sources(human)) == 4, "the delete")
        assert sources(human)[0] == "sales = [3, 5, 8]" + TYPED

        listed = await run.call("notebook", {"action": "list"})
        entry = next(n for n in listed.data["notebooks"] if n["path"] == "analysis.ipynb")
        assert entry["open"] is True and entry["kernel"]["id"] == kernel_id
        await runtime.close_run(run.id)
    # The run borrowed the human's kernel: it is still running.
    assert kernel_id in jp_serverapp.kernel_manager.list_kernel_ids()


async def test_a_closed_notebook_gets_a_kernel_session_and_its_outputs_saved(
        jp_serverapp, jp_fetch, jp_root_dir):
    path = jp_root_dir / "closed.ipynb"
    write_notebook(path, "value = 6 * 7", "print('value', value)")
    runtime = jp_serverapp.web_app.settings["agent_tools_runtime"]
    run = await runtime.create_run()
    result = await run.call("notebook", {"action": "run_all", "path": "closed.ipynb"})
    assert result.ok and "value 42" in result.text
    assert result.data["shared_document"] is False
    # A session for the notebook, as JupyterLab would start: opening it attaches to it.
    sessions = json.loads((await jp_fetch("api", "sessions")).body)
    session = next(s for s in sessions if s["path"] == "closed.ipynb")
    assert session["kernel"]["id"] == result.data["kernel_id"]
    saved = nbformat.read(path, 4).cells
    assert saved[1].outputs[0]["text"] == "value 42\n" and saved[1].execution_count == 2
    await runtime.close_run(run.id)
    assert result.data["kernel_id"] in jp_serverapp.kernel_manager.list_kernel_ids()


async def test_a_cell_queues_behind_the_humans_running_cell_or_answers_busy(
        jp_serverapp, jp_fetch, jp_root_dir):
    path = jp_root_dir / "busy.ipynb"
    write_notebook(path, "print('agent cell')")
    kernel_id = await start_notebook_kernel(jp_fetch, "busy.ipynb")
    runtime = jp_serverapp.web_app.settings["agent_tools_runtime"]
    run = await runtime.create_run()
    await run.call("notebook", {"action": "run", "path": "busy.ipynb", "cell": 1})

    # The human's long cell is running: the agent's cell waits for it, and only then runs.
    human = asyncio.ensure_future(run_as_the_human(
        jp_serverapp, kernel_id, "import time\nprint('human starts')\ntime.sleep(2)"))
    await asyncio.sleep(0.8)
    queued = await run.call("notebook", {"action": "run", "path": "busy.ipynb", "cell": 1})
    assert queued.ok and queued.text.count("agent cell") == 1 and "human" not in queued.text
    assert human.done()  # the agent's cell ran after the human's ended
    await human

    # With a shorter timeout than the human's cell, the call says busy and nothing ran.
    human = asyncio.ensure_future(run_as_the_human(
        jp_serverapp, kernel_id, "import time\ntime.sleep(3)"))
    await asyncio.sleep(0.8)
    count = nbformat.read(path, 4).cells[0].execution_count
    busy = await run.call("notebook", {"action": "run", "path": "busy.ipynb", "cell": 1,
                                       "timeout_seconds": 0.5})
    assert busy.code == "busy" and "busy with another cell" in busy.error["message"], busy.error
    await human
    assert nbformat.read(path, 4).cells[0].execution_count == count
    await runtime.close_run(run.id)
