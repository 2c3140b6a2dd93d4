"""The Agent Tools panel in a real JupyterLab, driven in chromium as a person would use it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest

expect = pytest.importorskip("playwright.sync_api").expect


def test_a_question_card_answered_in_the_panel_returns_to_the_waiting_call(lab) -> None:
    run = lab.server.client().create_run(space="lab")
    call = lab.call_in_background(run.id, "ask_user", {
        "question": "Which colour for the plot?",
        "options": [{"label": "Red"}, {"label": "Blue", "description": "calm"}]})

    lab.execute("agent-tools:open-panel")
    card = lab.panel.locator(".jp-AgentTools-card", has_text="Which colour for the plot?")
    card.wait_for()
    card.get_by_role("button", name="Blue").click()

    result = call.result()
    assert result["ok"], result
    assert result["data"]["answer"] == "Blue"
    card.wait_for(state="detached")  # answered: the card leaves the panel


def test_a_staged_edit_shows_its_diff_and_accept_writes_the_file(lab) -> None:
    source = Path(lab.server.root_dir, "shapes.py")
    source.write_text("def area(w, h):\n    print(w * h)\n")
    run = lab.server.client().create_run(space="lab")
    staged = run.call("ast_edit", {"pattern": "print($A)", "rewrite": "log($A)",
                                   "path": "shapes.py", "language": "python"})
    assert staged.ok, staged.text
    edit_id = staged.data["edit_id"]

    lab.execute("agent-tools:open-panel")
    lab.panel.locator(f".jp-AgentTools-run[data-run-id='{run.id}']").click()
    edit = lab.panel.locator(f".jp-AgentTools-edit[data-edit-id='{edit_id}']")
    edit.locator(".jp-AgentTools-diff-add", has_text="log(w * h)").wait_for()
    edit.locator(".jp-AgentTools-diff-delete", has_text="print(w * h)").wait_for()
    edit.get_by_role("button", name="Accept").click()

    lab.panel.locator(f".jp-AgentTools-edit[data-edit-id='{edit_id}'][data-status='accepted']").wait_for()
    assert source.read_text() == "def area(w, h):\n    log(w * h)\n"
    # Accepting went through the run: resolve is in its transcript.
    assert [entry["tool"] for entry in run.transcript()] == ["ast_edit", "resolve"]


def test_a_permission_card_denied_in_the_panel_denies_the_call(lab) -> None:
    run = lab.server.client().create_run(space="lab", approvals="ask")
    call = lab.call_in_background(run.id, "bash", {"command": "echo never-run"})

    lab.execute("agent-tools:open-panel")
    card = lab.panel.locator(".jp-AgentTools-card-permission", has_text="Allow bash")
    card.locator(".jp-AgentTools-cardArgs", has_text="echo never-run").wait_for()
    for label in ("Allow once", "Allow this tool for this run", "Deny"):
        assert card.get_by_role("button", name=label).is_visible()
    card.get_by_role("button", name="Deny").click()

    result = call.result()
    assert not result["ok"]
    assert result["error"]["code"] == "permission_denied"



def test_a_runs_workers_show_in_a_panel_opened_after_they_finished(lab) -> None:
    run = lab.server.client().create_run(space="lab", vibe=True)
    spawned = run.call("vibe_spawn", {"label": "greeter", "brief": "say hello from the worker"})
    assert spawned.ok, spawned.text
    assert run.call("vibe_wait", {"worker_id": spawned.data["worker_id"]}).ok

    # Its events are over: what the panel shows comes from GET runs/{id}/workers.
    lab.execute("agent-tools:open-panel")
    lab.panel.locator(f".jp-AgentTools-run[data-run-id='{run.id}']").click()
    worker = lab.panel.locator(f".jp-AgentTools-worker[data-worker-id='{spawned.data['worker_id']}']")
    expect(worker).to_contain_text("greeter")
    expect(worker.locator(".jp-AgentTools-badge")).to_have_text("done")
    expect(worker.locator(".jp-AgentTools-result")).to_contain_text("hello from the worker")


def test_screenshots_of_the_panel_in_light_and_dark_theme(lab, artifacts: Path) -> None:
    lab.page.set_viewport_size({"width": 1400, "height": 1300})
    Path(lab.server.root_dir, "report.py").write_text("total = 0\nprint(total)\nprint('done')\n")
    run = lab.server.client().create_run(space="lab", approvals="ask")
    lab.execute("agent-tools:open-panel")
    lab.panel.locator(f".jp-AgentTools-run[data-run-id='{run.id}']").click()
    staging = lab.call_in_background(run.id, "ast_edit", {
        "pattern": "print($A)", "rewrite": "log($A)", "path": "report.py", "language": "python"})
    lab.panel.locator(".jp-AgentTools-card-permission").get_by_role(
        "button", name="Allow this tool for this run").click()
    assert staging.result()["ok"]
    lab.panel.locator(".jp-AgentTools-diff-add", has_text="log(total)").wait_for()
    question = lab.call_in_background(run.id, "ask_user", {
        "question": "Which charts should the report include?",
        "context": "The weekly report has room for two.",
        "options": [{"label": "Revenue"}, {"label": "Churn"}, {"label": "Signups"}],
        "multi_select": True, "allow_free_text": True})
    lab.panel.locator(".jp-AgentTools-card-question").get_by_role("button", name="Churn").click()
    permission = lab.call_in_background(run.id, "bash", {"command": "make report"})
    lab.panel.locator(".jp-AgentTools-card-permission").wait_for()

    for theme, light in (("JupyterLab Light", "true"), ("JupyterLab Dark", "false")):
        lab.execute("apputils:change-theme", {"theme": theme})
        lab.page.wait_for_selector(f"body[data-jp-theme-light='{light}']", state="attached")
        lab.page.wait_for_timeout(500)  # the theme's stylesheet applies after the attribute
        name = "dark" if light == "false" else "light"
        lab.panel.screenshot(path=artifacts / f"panel-{name}.png")
        lab.page.screenshot(path=artifacts / f"lab-{name}.png")

    # Leave nothing waiting: deny the command, skip the question.
    lab.panel.locator(".jp-AgentTools-card-permission").get_by_role("button", name="Deny").click()
    assert permission.result()["error"]["code"] == "permission_denied"
    lab.panel.locator(".jp-AgentTools-card-question").get_by_role("button", name="Skip").click()
    assert question.result()["data"]["status"] == "skipped"
    assert (artifacts / "panel-light.png").stat().st_size > 0


def test_a_card_for_an_open_notebook_shows_in_the_panel(lab) -> None:
    notebook = Path(lab.server.root_dir, "analysis.ipynb")
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.write_text(nbformat.writes(nbformat.v4.new_notebook(metadata={"kernelspec": kernelspec})))
    lab.execute("docmanager:open", {"path": "analysis.ipynb", "factory": "Notebook"})
    lab.wait_for_humans("analysis.ipynb")  # the notebook's path is its space
    run = lab.server.client().create_run(space="analysis.ipynb")
    call = lab.call_in_background(run.id, "ask_user", {
        "question": "Drop the rows with missing prices?", "allow_free_text": True})

    lab.execute("agent-tools:open-panel")
    card = lab.panel.locator(".jp-AgentTools-card", has_text="Drop the rows")
    assert card.locator(".jp-AgentTools-cardSpace").inner_text() == "analysis.ipynb"
    card.locator("textarea").fill("only where the date is missing too")
    card.get_by_role("button", name="Send").click()

    assert call.result()["data"]["text"] == "only where the date is missing too"


def test_a_card_arriving_while_the_panel_is_closed_is_notified_with_open(lab) -> None:
    lab.page.evaluate("() => window.jupyterapp.shell.collapseRight()")
    run = lab.server.client().create_run(space="lab")
    call = lab.call_in_background(run.id, "ask_user", {
        "question": "Ship it?", "options": [{"label": "Yes"}, {"label": "No"}]})

    toast = lab.page.locator(".jp-Notification-Toast-info", has_text="Ship it?")
    toast.wait_for()
    expect(lab.page.locator(".jp-AgentTools-statusItemCount")).to_have_text("Agent: 1 question")
    toast.get_by_role("button", name="Open").click()
    card = lab.panel.locator(".jp-AgentTools-card", has_text="Ship it?")
    card.get_by_role("button", name="No").click()

    assert call.result()["data"]["answer"] == "No"
    toast.wait_for(state="detached")  # the answered card's notification goes too


def test_the_status_says_what_can_serve_and_why_not(lab, artifacts: Path) -> None:
    lab.execute("agent-tools:open-panel")
    lab.panel.locator(".jp-AgentTools-status summary").click()

    python_kernel = lab.panel.locator("[data-resource='kernels'] .jp-AgentTools-statusRow",
                                      has_text="python")
    expect(python_kernel.first).to_have_attribute("data-available", "true")
    servers = lab.panel.locator("[data-resource='lsp'] .jp-AgentTools-statusRow")
    expect(servers.filter(has_text="basedpyright")).to_have_count(1)
    # What cannot serve says why (the runtime's own words).
    for row in lab.panel.locator(".jp-AgentTools-statusRow[data-available='false']").all():
        assert row.locator(".jp-AgentTools-reason").inner_text().strip()
    lab.panel.screenshot(path=artifacts / "panel-status-light.png")


def test_a_card_answered_elsewhere_leaves_the_panel(lab) -> None:
    run = lab.server.client().create_run(space="lab")
    call = lab.call_in_background(run.id, "ask_user", {
        "question": "Rename the column?", "options": [{"label": "Yes"}, {"label": "No"}]})
    lab.execute("agent-tools:open-panel")
    card = lab.panel.locator(".jp-AgentTools-card", has_text="Rename the column?")
    card.wait_for()

    card_id = card.get_attribute("data-card-id")
    run.answer(card_id, answer="Yes")  # another front end answers first

    card.wait_for(state="detached")
    assert call.result()["data"]["answer"] == "Yes"


def test_the_panel_comes_back_with_the_layout(lab) -> None:
    saved = ("async (open) => { const ws = await window.jupyterapp.serviceManager.workspaces"
             ".fetch('default'); const right = ws.data['layout-restorer:data']?.right;"
             " return !!right && (open ? right.current === 'agent-tools-panel' && !right.collapsed"
             " : right.collapsed); }")
    # Start from a saved layout without the panel, so what is saved next is this page's.
    lab.page.evaluate("() => window.jupyterapp.shell.collapseRight()")
    lab.page.wait_for_function(saved, arg=False, polling=500)
    lab.execute("agent-tools:open-panel")
    lab.page.wait_for_function(saved, arg=True, polling=500)
    lab.page.wait_for_timeout(3000)  # saves are debounced: a late one may still land
    lab.page.wait_for_function(saved, arg=True, polling=500)
    lab.page.close()

    # The layout is the workspace's, kept by the server: a new page of the lab gets it.
    page = lab.page.context.new_page()
    page.goto(f"{lab.server.url}lab?token={lab.server.token}")
    page.locator("#agent-tools-panel .jp-AgentTools-body").wait_for()
    assert page.locator("#agent-tools-panel").is_visible()


def test_a_transcript_past_its_bound_says_what_it_no_longer_holds(
        start_lab: Any, tmp_path: Path, artifacts: Path) -> None:
    lab = start_lab(tmp_path, "--Runtime.max_transcript_bytes=30000")
    run = lab.server.client().create_run(space="lab")
    for number in range(5):  # each about 12 kB: the bound keeps the last two
        assert run.call("write", {"path": f"notes_{number}.txt", "content": "n" * 12_000}).ok
    huge = run.call("write", {"path": "huge.txt", "content": "h" * 40_000})  # alone past it
    assert huge.ok, huge.text

    lab.execute("agent-tools:open-panel")
    lab.panel.locator(f".jp-AgentTools-run[data-run-id='{run.id}']").click()
    expect(lab.panel.locator(".jp-AgentTools-earlierCalls")).to_contain_text(
        "3 earlier calls are not shown")
    row = lab.panel.locator(".jp-AgentTools-call", has_text="huge.txt")
    row.locator("summary").click()
    expect(row.locator(".jp-AgentTools-argsOmitted")).to_contain_text(
        "Arguments not kept: about 40,")
    expect(row.locator(".jp-AgentTools-cardArgs")).to_have_count(0)
    lab.panel.screenshot(path=artifacts / "panel-transcript-bound.png")
