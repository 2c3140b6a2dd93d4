"""The agent works in the notebook a person has open in a real JupyterLab (real-time
collaboration, headless chromium): what it adds and runs shows in place, in the kernel the
notebook shows, while the person's typing goes on and is kept."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

expect = pytest.importorskip("playwright.sync_api").expect
# The 5 s default is short for a kernel on two busy cores: wait as long as the page does.
expect.set_options(timeout=60_000)

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}
PLOT = ("print('secret is', secret)\nimport matplotlib.pyplot as plt\nplt.plot(sales)\n"
        "plt.title('sales')\nplt.show()")
TYPED = "  # typed by hand while the agent works"


def notebook_cells(lab: Any) -> Any:
    return lab.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")


def open_notebook(lab: Any, name: str) -> Any:
    lab.execute("docmanager:open", {"path": name})
    cells = notebook_cells(lab)
    cells.first.wait_for()
    # Until the view's own kernel is connected and idle (the toolbar's indicator can say idle
    # before that): a Shift+Enter sooner runs nothing and only moves to the next cell.
    lab.page.wait_for_function(
        """(path) => {
          const panel = window.jupyterapp.shell.currentWidget;
          const context = panel && panel.sessionContext;
          const kernel = context && context.isReady && context.session && context.session.kernel;
          return panel.context.path === path && !!kernel
            && kernel.connectionStatus === "connected" && kernel.status === "idle";
        }""", arg=name)
    return cells


def saved_outputs(path: Path, index: int) -> list[dict]:
    try:
        return nbformat.read(path, 4).cells[index].outputs
    except Exception:  # noqa: BLE001 - the server writes in place: a read can meet half a file
        return []


def saved_source(path: Path, index: int) -> str | None:
    try:
        return nbformat.read(path, 4).cells[index].source
    except Exception:  # noqa: BLE001 - as saved_outputs
        return None


def until(condition: Any, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"waited {timeout:g}s for {what}")


def test_the_agent_fills_the_notebook_the_person_has_open(lab, artifacts) -> None:
    root = Path(lab.server.root_dir)
    path = root / "live.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("sales = [3, 5, 8]\nsecret = 42"),
                                       new_code_cell("print(sum(sales))")],
                                metadata={"kernelspec": KERNELSPEC}), path)
    cells = open_notebook(lab, "live.ipynb")
    page = lab.page
    # The person runs the first cell (their variables), then goes on typing in it.
    first_editor = cells.nth(0).locator(".cm-content")
    first_editor.click()
    page.keyboard.press("Shift+Enter")
    expect(cells.nth(0).locator(".jp-InputPrompt")).to_contain_text("[1]")
    first_editor.click()
    page.keyboard.press("Control+End")

    run = lab.server.client().create_run(space="lab")
    first_id = run.call("read", {"path": "live.ipynb"}).data["cells"][0]["id"]
    note = lab.call_in_background(run.id, "notebook", {
        "action": "insert", "path": "live.ipynb", "cell": first_id, "cell_type": "markdown",
        "source": "## What the agent found"})
    page.keyboard.type(TYPED[:20], delay=50)
    assert note.result()["ok"]
    plot = lab.call_in_background(run.id, "notebook", {
        "action": "insert", "path": "live.ipynb", "index": 3, "run": True, "source": PLOT})
    page.keyboard.type(TYPED[20:], delay=50)
    result = plot.result()
    assert result["ok"], result

    # What the person sees: both new cells in place, the print and the figure in the code
    # cell with its prompt number, and every character they typed.
    expect(cells).to_have_count(4)
    expect(cells.nth(1)).to_contain_text("What the agent found")
    code = cells.nth(2)
    expect(code.locator(".jp-OutputArea-output").first).to_contain_text("secret is 42")
    expect(code.locator(".jp-OutputArea-output img")).to_be_visible()
    expect(code.locator(".jp-InputPrompt")).to_contain_text(f"[{result['data']['execution_count']}]")
    expect(cells.nth(0).locator(".cm-content")).to_contain_text("secret = 42" + TYPED)
    expect(cells.nth(3).locator(".cm-content")).to_contain_text("print(sum(sales))")
    page.screenshot(path=str(artifacts / "notebook-filled-by-the-agent.png"))
    # The kernel is the notebook's own: the person's `secret` was there for the agent's cell.
    sessions = httpx.get(f"{lab.server.url}api/sessions",
                         headers={"Authorization": f"token {lab.server.token}"}).json()
    kernel = next(s["kernel"]["id"] for s in sessions if s["path"] == "live.ipynb")
    assert result["data"]["kernel_id"] == kernel

    # Saved (the collaboration server saves the shared document): outputs and count on disk.
    # The typing may end after the figure came: its last keys can be in a later save.
    typed_source = "sales = [3, 5, 8]\nsecret = 42" + TYPED
    until(lambda: any("image/png" in o.get("data", {}) for o in saved_outputs(path, 2))
          and saved_source(path, 0) == typed_source,
          "the figure and the typing to be saved")
    saved = nbformat.read(path, 4).cells
    assert saved[0].source == typed_source
    assert saved[2].execution_count == result["data"]["execution_count"]

    # Clear, move, retype and delete show in place too.
    code_id = result["data"]["cells"][0]["id"]
    for args in ({"action": "clear_outputs", "cell": code_id},
                 {"action": "move", "cell": code_id, "index": 4},
                 {"action": "set_type", "cell": 2, "cell_type": "raw"},
                 {"action": "delete", "cell": 2}):
        changed = run.call("notebook", {"path": "live.ipynb", **args})
        assert changed.ok, changed.text
    expect(cells).to_have_count(3)
    expect(cells.nth(2).locator(".cm-content")).to_contain_text("secret is")
    expect(cells.nth(2).locator(".jp-OutputArea-output")).to_have_count(0)
    expect(cells.nth(1).locator(".cm-content")).to_contain_text("print(sum(sales))")
    expect(cells.nth(0).locator(".cm-content")).to_contain_text(TYPED)
    page.screenshot(path=str(artifacts / "notebook-after-agent-changes.png"))
    run.close()


def test_a_notebook_the_agent_ran_while_closed_opens_on_its_kernel_with_its_outputs(
        lab, artifacts) -> None:
    root = Path(lab.server.root_dir)
    nbformat.write(new_notebook(cells=[new_code_cell("answer = 6 * 7"),
                                       new_code_cell("print('answer', answer)")],
                                metadata={"kernelspec": KERNELSPEC}), root / "closed.ipynb")
    run = lab.server.client().create_run(space="lab")
    result = run.call("notebook", {"action": "run_all", "path": "closed.ipynb"})
    assert result.ok, result.text
    assert result.data["shared_document"] is False

    cells = open_notebook(lab, "closed.ipynb")
    expect(cells.nth(1).locator(".jp-OutputArea-output")).to_contain_text("answer 42")
    # The view attached to the kernel the agent used: the person's cell sees `answer`.
    cells.nth(1).locator(".cm-content").click()
    lab.page.keyboard.press("Control+End")
    lab.page.keyboard.type("\nprint('again', answer)")
    lab.page.keyboard.press("Shift+Enter")
    expect(cells.nth(1).locator(".jp-OutputArea-output")).to_contain_text("again 42")
    lab.page.screenshot(path=str(artifacts / "notebook-run-while-closed.png"))
    run.close()
