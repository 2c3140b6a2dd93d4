"""A real notebook, executed with nbclient against the live server.

The kernel finds the server through jupyter_server's runtime files (it is the server's child
here, as in JupyterLab), opens the panel, and starts an agent loop on a background thread.
While that loop (and an asyncio task using `acall`) waits on `ask_user`, the kernel stays
free: a later cell runs, and a widget click sent by the front end (a comm message) is
processed and answers the card.
"""

from __future__ import annotations

import asyncio
import json

import nbformat
from nbclient import NotebookClient

WAIT = 60  # seconds: a bound on waits that should end at once, never an assertion

CELLS = [
    # 0: one call finds the server (runtime files) and shows the panel.
    "from jupyter_agent_tools.notebook import open_panel\n"
    "session = open_panel(space='demo.ipynb')\n"
    "print('RUN', session.run.id)",
    # 1: an agent loop on a background thread; the cell returns at once.
    "def agent(session):\n"
    "    first = session.call('ask_user', {'question': 'Proceed?', 'options': [{'label': 'yes'}]})\n"
    "    return first.data['answer']\n"
    "future = session.start(agent, session)",
    # 2: or an asyncio task on the kernel's loop; acall does not block that loop.
    "import asyncio\n"
    "task = asyncio.ensure_future(session.acall(\n"
    "    'ask_user', {'question': 'Clicked?', 'options': [{'label': 'clicked'}]}))",
    # 3: the kernel is free to run this cell while the task waits; the card reaches the panel
    # even while this cell is busy (the link has its own thread).
    "import time\n"
    "for _ in range(600):\n"
    "    views = [v for v in session.panel.cards.values() if v.card['question'] == 'Clicked?']\n"
    "    if views: break\n"
    "    time.sleep(0.05)\n"
    "print('BUTTON', views[0].option_buttons[0].model_id)",
    # 4: the outcomes.
    "print('RESULT', future.result(timeout=60), (await asyncio.wait_for(task, 60)).data['answer'])\n"
    "session.close()",
]


def printed(cell, tag):
    for output in cell.outputs:
        for line in output.get("text", "").splitlines():
            if line.startswith(tag + " "):
                return line.split(" ", 1)[1]
    raise AssertionError(f"no {tag} line in {cell.outputs}")


async def test_notebook_panel_with_a_background_agent(api, jp_serverapp, jp_root_dir):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in CELLS])
    client = NotebookClient(nb, kernel_name="python3", timeout=WAIT,
                            resources={"metadata": {"path": str(jp_root_dir)}})
    async with client.async_setup_kernel():
        await client.async_execute_cell(nb.cells[0], 0)
        run_id = printed(nb.cells[0], "RUN")
        _, run = await api("GET", f"runs/{run_id}")
        assert run["origin"] == "notebook"
        assert any(o.get("data", {}).get("application/vnd.jupyter.widget-view+json")
                   for o in nb.cells[0].outputs), "the panel was displayed"
        await client.async_execute_cell(nb.cells[1], 1)
        await client.async_execute_cell(nb.cells[2], 2)

        # Answer the first card through the HTTP route, as any front end may.
        async def pending_card():
            while True:
                _, cards = await api("GET", f"runs/{run_id}/questions")
                for card in cards:
                    if card["question"] == "Proceed?":
                        return card
                await asyncio.sleep(0.05)

        card = await asyncio.wait_for(pending_card(), WAIT)
        assert card["question"] == "Proceed?" and card["space"] == "demo.ipynb"
        code, _ = await api("POST", f"runs/{run_id}/questions/{card['number']}", {"answer": "yes"})
        assert code == 200

        # Click the second card's button the way JupyterLab does: a comm message to the kernel.
        await client.async_execute_cell(nb.cells[3], 3)
        button = printed(nb.cells[3], "BUTTON")
        click = client.kc.session.msg("comm_msg", {
            "comm_id": button, "data": {"method": "custom", "content": {"event": "click"}}})
        client.kc.shell_channel.send(click)

        await client.async_execute_cell(nb.cells[4], 4)
        assert printed(nb.cells[4], "RESULT") == "yes clicked"

    _, transcript = await api("GET", f"runs/{run_id}/transcript")
    assert sorted(json.dumps(e["args"]["question"]) for e in transcript) == ['"Clicked?"', '"Proceed?"']
