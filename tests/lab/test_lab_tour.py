"""notebooks/tour.ipynb, run all at once in JupyterLab as a Binder user would, with the human's
part played in the Agent Tools side panel.

Binder starts JupyterLab at a checkout of the repository with the tour's worker settings; here
the lab's root is a fresh clone of this repository's HEAD, started with the same settings. After
"Run All" the kernel is busy in the tour's cells, so the notebook's own widget panel cannot take
clicks until it is done: the staged edit is accepted and the question answered in the side
panel, which the notebook's cards reach because the tour's run uses the notebook's path as its
space (the one the side panel joins for an open notebook).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from jupyter_agent_tools.testing.agents import SERVER_ARGS

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

REPO = Path(__file__).resolve().parents[2]
TOUR = "notebooks/tour.ipynb"
#: How long one step of the tour may take to show (the tour starts language servers, a debug
#: adapter, kernels and a worker on 2 shared cores): a bound on a stuck tour, not a measure.
STEP_TIMEOUT_MS = 300_000

#: The tour's notebook in the page: how many code cells ran, and its error outputs.
PROGRESS = """(path) => {
  const notebook = [...window.jupyterapp.shell.widgets('main')]
    .find(widget => widget.context?.path === path);
  if (!notebook) { return null; }
  const progress = {code: 0, ran: 0, errors: [], text: '',
                    kernel: notebook.sessionContext.session?.kernel?.status ?? 'none'};
  const cells = notebook.content.model.cells;
  for (let index = 0; index < cells.length; index++) {
    const cell = cells.get(index);
    if (cell.type !== 'code') { continue; }
    progress.code++;
    if (cell.executionCount !== null) { progress.ran++; }
    for (let k = 0; k < cell.outputs.length; k++) {
      const output = cell.outputs.get(k).toJSON();
      if (output.output_type === 'error') {
        progress.errors.push({cell: index + 1, ename: output.ename, evalue: output.evalue});
      }
      progress.text += [].concat(output.text ?? []).join('');
    }
  }
  return progress;
}"""

#: Run All is over: every code cell ran and the kernel is idle, or a cell failed (which stops it).
FINISHED = f"""(path) => {{
  const progress = ({PROGRESS})(path);
  return !!progress && (progress.errors.length > 0
                        || (progress.ran === progress.code && progress.kernel === 'idle'));
}}"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """Binder's layout: a clone of this repository at HEAD (only what is committed is there)."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs git and a git checkout of the repository")
    clone = tmp_path / "checkout"
    subprocess.run(["git", "clone", "--quiet", "--depth", "1", f"file://{REPO}", str(clone)],
                   check=True, capture_output=True, timeout=120)
    return clone


def summary(progress: dict[str, Any]) -> dict[str, Any]:
    """The progress without the outputs' text (long)."""
    return {key: value for key, value in progress.items() if key != "text"}


@contextmanager
def notebook_shown_on_timeout(page: Any) -> Iterator[None]:
    """A wait that times out says how far the tour got, and which cell failed if one did."""
    try:
        yield
    except sync_api.TimeoutError as timeout:
        progress = page.evaluate(PROGRESS, TOUR)
        raise AssertionError(f"{timeout}\nthe tour: {summary(progress or {})}") from timeout


@pytest.mark.timeout(1200)
def test_the_tour_runs_all_in_jupyterlab_answered_in_the_side_panel(
        start_lab: Any, checkout: Path, artifacts: Path) -> None:
    lab = start_lab(checkout, *SERVER_ARGS)
    page = lab.page
    lab.execute("docmanager:open", {"path": TOUR, "factory": "Notebook"})
    lab.wait_for_humans(TOUR)  # the side panel joined the notebook's space
    page.wait_for_function(f"(path) => ({PROGRESS})(path)?.kernel === 'idle'", arg=TOUR,
                           timeout=STEP_TIMEOUT_MS, polling=500)
    lab.execute("agent-tools:open-panel")
    lab.start("notebook:run-all-cells")
    with notebook_shown_on_timeout(page):
        # The first cell creates the tour's run (space: the notebook's path) and shows the
        # notebook's own ipywidgets panel under it.
        widget_panel = page.locator(".jp-NotebookPanel .jp-OutputArea-output .jupyter-widgets",
                                    has_text=f"space {TOUR}")
        expect(widget_panel.first).to_be_visible(timeout=STEP_TIMEOUT_MS)
        tour_run = lab.panel.locator(".jp-AgentTools-run", has=page.locator(
            ".jp-AgentTools-badge", has_text=TOUR)).first
        tour_run.click(timeout=STEP_TIMEOUT_MS)

        # The ast_edit cell stages a rewrite; the next cell waits for it to be resolved.
        edit = lab.panel.locator(".jp-AgentTools-edit[data-status='staged']")
        edit.locator(".jp-AgentTools-diff-add", has_text="flush=True").first.wait_for(
            timeout=STEP_TIMEOUT_MS)
        edit.get_by_role("button", name="Accept").click()
        lab.panel.locator(".jp-AgentTools-edit[data-status='accepted']").wait_for()

        # The ask_user cell's card, while the next cell waits for its answer.
        card = lab.panel.locator(".jp-AgentTools-card", has_text="Keep the flushed prints?")
        card.wait_for(timeout=STEP_TIMEOUT_MS)
        assert card.locator(".jp-AgentTools-cardSpace").inner_text() == TOUR
        widget_panel.first.scroll_into_view_if_needed()  # the same card, in the notebook's panel
        page.screenshot(path=artifacts / "lab-tour.png")
        card.get_by_role("button", name="keep").click()

        page.wait_for_function(FINISHED, arg=TOUR, timeout=STEP_TIMEOUT_MS * 2, polling=1000)
    progress = page.evaluate(PROGRESS, TOUR)
    assert progress["errors"] == [], progress["errors"]
    assert progress["ran"] == progress["code"], summary(progress)
    # The edit was accepted and the card answered in the side panel, not by the tour's fallback.
    assert "edit_1 is accepted" in progress["text"]
    assert "Not resolved in the panel" not in progress["text"]
    assert "answer: keep" in progress["text"]
    runs = lab.server.client().request("GET", "runs")
    assert [run for run in runs if run["state"] == "open"] == [], "the last cell closes its run"
