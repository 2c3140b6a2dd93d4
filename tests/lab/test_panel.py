"""The Agent Tools panel in a real JupyterLab, driven in chromium as a person would use it."""

from __future__ import annotations

from pathlib import Path


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

