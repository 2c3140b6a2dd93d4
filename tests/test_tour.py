"""notebooks/tour.ipynb runs top to bottom against a live server, as in Binder.

The test plays the human: it answers the tour's question card through the HTTP route, and
clicks Accept on the staged edit's diff the way JupyterLab does (a comm message to the kernel).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from jupyter_agent_tools.testing.agents import SERVER_ARGS
from jupyter_agent_tools.testing.server import ENV_ROOT, ENV_TOKEN, ENV_URL

TOUR = Path(__file__).resolve().parents[1] / "notebooks" / "tour.ipynb"
CELL_TIMEOUT = 300  # a bound on a stuck cell, never an assertion

# Finds the Accept button of the edit the previous cell staged, once the panel shows it.
PROBE = """
import time
for _ in range(600):
    view = session.panel.edits.get(edit_id)
    if view is not None:
        break
    time.sleep(0.05)
print("ACCEPT", view.accept_button.model_id)
"""


@pytest.fixture
def jp_server_config(jp_server_config):
    """The tour's server: workers run the scripted agent (python backend), as in Binder."""
    config = dict(jp_server_config)
    for option in SERVER_ARGS:  # "--Class.trait=value"
        name, value = option.removeprefix("--").split("=", 1)
        section, trait = name.split(".")
        config.setdefault(section, {})[trait] = value
    return config


def printed(cell, tag: str) -> str:
    for output in cell.outputs:
        for line in output.get("text", "").splitlines():
            if line.startswith(tag + " "):
                return line.split(" ", 1)[1]
    raise AssertionError(f"no {tag} line in {cell.outputs}")


async def test_the_tour_runs_top_to_bottom(api, jp_serverapp, jp_root_dir):
    notebook = nbformat.read(str(TOUR), as_version=4)
    env = {**os.environ, ENV_URL: jp_serverapp.connection_url,
           ENV_TOKEN: jp_serverapp.identity_provider.token, ENV_ROOT: str(jp_root_dir)}
    client = NotebookClient(notebook, kernel_name="python3", timeout=CELL_TIMEOUT,
                            resources={"metadata": {"path": str(jp_root_dir)}})
    answered: list[dict] = []

    async def answer_the_cards() -> None:
        """The human of the tour's space, through the questions route."""
        while True:
            _, runs = await api("GET", "runs")
            for run in runs:
                code, cards = await api("GET", f"runs/{run['id']}/questions")
                if code != 200:  # a worker's child run may close between the two requests
                    continue
                for card in cards:
                    code, _ = await api("POST", f"runs/{run['id']}/questions/{card['id']}",
                                        {"answer": card["options"][0]["label"]})
                    assert code == 200
                    answered.append(card)
            await asyncio.sleep(0.1)

    answering = asyncio.ensure_future(answer_the_cards())
    try:
        async with client.async_setup_kernel(env=env):
            for index, cell in enumerate(list(notebook.cells)):
                if cell.cell_type != "code":
                    continue
                await client.async_execute_cell(cell, index)  # raises with the cell's traceback
                if "accept-in-panel" in cell.metadata.get("tags", []):
                    await click_accept(client, notebook)
    finally:
        answering.cancel()

    assert [card["question"] for card in answered] == ["Keep the flushed prints?"]
    assert answered[0]["space"] == "tour"
    text = "\n".join(output.get("text", "") for cell in notebook.cells
                     for output in cell.get("outputs", []))
    assert "edit_1 is accepted" in text and "Not resolved in the panel" not in text
    assert "answer: keep" in text
    _, runs = await api("GET", "runs")
    assert runs == [], "the tour's last cell releases its run"


async def click_accept(client: NotebookClient, notebook) -> None:
    """Click Accept on the staged edit's diff, as JupyterLab sends a click: a comm message."""
    probe = nbformat.v4.new_code_cell(PROBE)
    notebook.cells.append(probe)
    try:
        await client.async_execute_cell(probe, len(notebook.cells) - 1)
    finally:
        notebook.cells.pop()
    click = client.kc.session.msg("comm_msg", {
        "comm_id": printed(probe, "ACCEPT"),
        "data": {"method": "custom", "content": {"event": "click"}}})
    client.kc.shell_channel.send(click)
