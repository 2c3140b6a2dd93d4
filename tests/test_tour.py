"""notebooks/tour.ipynb runs top to bottom against a live server laid out as Binder's.

Binder (and most people) start JupyterLab at the repository checkout and open the tour from
`notebooks/`; the kernel finds the server through its runtime files. So the server's root
here is a git clone of this repository, with its .gitignore (the working tree's, committed
in the clone), and the kernel gets no hint of where the server is. The test plays the human:
it answers the tour's question card through the HTTP route, and clicks Accept on the staged
edit's diff the way JupyterLab does (a comm message to the kernel).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from jupyter_agent_tools.testing.agents import SERVER_ARGS
from jupyter_agent_tools.testing.server import ENV_ROOT, ENV_TOKEN, ENV_URL

REPO = Path(__file__).resolve().parents[1]
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


def git(checkout: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=tour", "-c", "user.email=tour@localhost",
                           *args], cwd=checkout, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def jp_root_dir(tmp_path):
    """The server's root: a clone of this repository (only what is committed is there), with
    the working tree's .gitignore and tour committed on top, so `git status` starts clean."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs git and a git checkout of the repository")
    checkout = tmp_path / "checkout"
    git(REPO, "clone", "--quiet", "--depth", "1", f"file://{REPO}", str(checkout))
    for name in (".gitignore", "notebooks/tour.ipynb"):
        shutil.copyfile(REPO / name, checkout / name)
    if git(checkout, "status", "--porcelain"):
        git(checkout, "commit", "--quiet", "--all", "--message", "the working tree's tour")
    return checkout


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
    # One print can arrive as several stream outputs (the kernel flushes on a timer): join them.
    text = "".join(output.get("text", "") for output in cell.outputs
                   if output.get("output_type") == "stream")
    for line in text.splitlines():
        if line.startswith(tag + " "):
            return line.split(" ", 1)[1]
    raise AssertionError(f"no {tag} line in {cell.outputs}")


async def test_the_tour_runs_top_to_bottom_in_a_checkout(api, jp_serverapp, jp_root_dir):
    notebook = nbformat.read(str(jp_root_dir / "notebooks" / "tour.ipynb"), as_version=4)
    # As in JupyterLab: no hint of the server but its runtime files (JUPYTER_RUNTIME_DIR), and
    # the notebook's path in JPY_SESSION_NAME (jupyter_server's sessions set it).
    env = {k: v for k, v in os.environ.items() if k not in (ENV_URL, ENV_TOKEN, ENV_ROOT)}
    env["JPY_SESSION_NAME"] = str(jp_root_dir / "notebooks" / "tour.ipynb")
    client = NotebookClient(notebook, kernel_name="python3", timeout=CELL_TIMEOUT,
                            resources={"metadata": {"path": str(jp_root_dir / "notebooks")}})
    answered: list[dict] = []
    untracked_during: list[str] = []

    async def answer_the_cards() -> None:
        """The human of the tour's space, through the questions route."""
        while True:
            _, runs = await api("GET", "runs")
            for run in runs:
                code, cards = await api("GET", f"runs/{run['id']}/questions")
                if code != 200:  # a worker's child run may close between the two requests
                    continue
                for card in (c for c in cards if c["status"] == "pending"):
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
                if not untracked_during:  # after the first cell: the run and its copy exist
                    copies = list((jp_root_dir / "notebooks" / "agent-tools-runs").iterdir())
                    assert len(copies) == 1 and (copies[0] / "main.py").is_file(), copies
                    untracked_during.append(await asyncio.to_thread(
                        git, jp_root_dir, "status", "--porcelain", "--untracked-files=all"))
    finally:
        answering.cancel()

    assert untracked_during == [""], "the tour's scratch copy shows in git status"
    assert not list((jp_root_dir / "notebooks" / "agent-tools-runs").iterdir())
    assert git(jp_root_dir, "status", "--porcelain", "--untracked-files=all") == ""

    assert [card["question"] for card in answered] == ["Keep the flushed prints?"]
    assert answered[0]["space"] == "notebooks/tour.ipynb"  # the space JupyterLab's panel joins
    text = "\n".join(output.get("text", "") for cell in notebook.cells
                     for output in cell.get("outputs", []))
    assert "edit_1 is accepted" in text and "Not resolved in the panel" not in text
    assert "answer: keep" in text
    # 0 errors: the transcript the tour prints has a state per call ("ok" or "error CODE")
    transcript = next(c for c in notebook.cells if "run.transcript()" in c.source)
    states = [line.rsplit(" ", 2)[-2:] for output in transcript.outputs
              for line in output.get("text", "").splitlines()]
    assert sum(state[-1] == "ok" for state in states) >= 20, transcript.outputs
    assert not [state for state in states if state[0] == "error"], transcript.outputs
    _, runs = await api("GET", "runs")
    assert [run for run in runs if run["state"] == "open"] == [], "the last cell closes its run"
    assert {run["ended_by"] for run in runs} == {"close"}  # kept, ended, in the run store


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
