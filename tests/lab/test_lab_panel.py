"""The Agent Tools panel in a real JupyterLab, driven in chromium as a person would use it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
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
    lab.page.set_viewport_size({"width": 1400, "height": 2000})
    lab.execute("agent-tools:open-panel")
    lab.panel.locator(".jp-AgentTools-status summary").click()

    ready = lab.panel.locator(".jp-AgentTools-statusGroup[data-readiness='ready']")
    expect(ready.locator(".jp-AgentTools-statusRow[data-resource='kernels']",
                        has_text="python").first).to_have_attribute("data-available", "true")
    expect(ready.locator(".jp-AgentTools-statusRow[data-resource='lsp']",
                         has_text="basedpyright")).to_have_count(1)
    # Not installed is grey and optional, and says what installs it when the server names it;
    # broken (red) is only what was found or configured and fails.
    absent = lab.panel.locator(".jp-AgentTools-statusRow[data-readiness='absent']")
    expect(absent.filter(has_text="gopls")).to_have_count(1)
    expect(lab.panel.locator(".jp-AgentTools-statusRow[data-readiness='broken']",
                             has_text="gopls")).to_have_count(0)
    for row in lab.panel.locator(".jp-AgentTools-statusRow[data-available='false']").all():
        assert row.locator(".jp-AgentTools-reason, .jp-AgentTools-install").inner_text().strip()
    # The run tool counts and the status's agree: the status says how many the server has.
    tools = len(lab.server.client().status()["tools"])
    expect(lab.panel.locator(".jp-AgentTools-serverTools")).to_contain_text(f"{tools} tools")
    lab.panel.locator(".jp-AgentTools-status").screenshot(path=artifacts / "panel-status.png")


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


def test_the_first_run_says_how_to_connect_an_agent_under_the_base_url(
        start_lab: Any, tmp_path: Path, artifacts: Path) -> None:
    lab = start_lab(tmp_path, "--ServerApp.base_url=/user/ana/")
    assert lab.server.url.endswith("/user/ana/")
    lab.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    lab.execute("agent-tools:open-panel")

    # The sidebar tab is an icon (themed SVG), its name a caption.
    tab = lab.page.locator(".jp-SideBar .lm-TabBar-tab[data-id='agent-tools-panel']")
    expect(tab.locator("svg")).to_have_count(1)
    expect(tab).to_have_attribute("title", "Agent Tools")
    connect = lab.panel.locator(".jp-AgentTools-connect")
    url = f"{lab.server.url}agent-tools/mcp"
    # What is shown holds no credential; each Copy mints an agent token (never the server's).
    expect(connect.locator(".jp-AgentTools-snippet-mcpUrl pre")).to_have_text(
        f"{url}?token=<new agent token>")
    settings = json.loads(connect.locator(".jp-AgentTools-snippet-mcpSettings pre").inner_text())
    assert settings["mcp_servers"][0]["url"] == f"{url}?space=lab"
    assert settings["mcp_servers"][0]["headers"] == [
        {"name": "Authorization", "value": "token <new agent token>"}]
    expect(connect.locator(".jp-AgentTools-snippet-python pre")).to_contain_text("open_panel()")
    expect(connect.locator(".jp-AgentTools-tokens .jp-AgentTools-empty")).to_be_visible()
    # The ceiling of the next copies: read only, in the root.
    connect.locator(".jp-AgentTools-ceilingSurface").select_option("readonly")
    connect.locator(".jp-AgentTools-snippet-mcpUrl").get_by_role("button").click()
    expect(connect.locator(".jp-AgentTools-snippet-mcpUrl button")).to_contain_text("Copied")
    copied_url = lab.page.evaluate("() => navigator.clipboard.readText()")
    assert copied_url.startswith(f"{url}?token=jat_") and lab.server.token not in copied_url
    connect.locator(".jp-AgentTools-snippet-mcpSettings").get_by_role("button").click()
    expect(connect.locator(".jp-AgentTools-snippet-mcpSettings button")).to_contain_text("Copied")
    copied = json.loads(lab.page.evaluate("() => navigator.clipboard.readText()"))
    [header] = copied["mcp_servers"][0]["headers"]
    settings_token = header["value"].removeprefix("token ")
    assert settings_token.startswith("jat_") and settings_token not in copied_url
    # Both are listed (never shown again); Revoke ends the jupyter-ai one.
    tokens = connect.locator(".jp-AgentTools-token")
    expect(tokens).to_have_count(2)
    expect(tokens.first).to_contain_text("readonly · ask · any folder")
    revoked = connect.locator(".jp-AgentTools-token", has_text="jupyter-ai")
    revoked.get_by_role("button", name="Revoke").click()
    expect(tokens).to_have_count(1)
    refused = httpx.post(f"{url}?space=lab", json={}, timeout=60, headers={
        "Authorization": f"token {settings_token}",
        "Accept": "application/json, text/event-stream"})
    assert refused.status_code == 401
    # No jargon without its meaning on hover.
    listening = lab.panel.locator(".jp-AgentTools-listening")
    expect(listening).to_have_text("for this lab")
    assert "space" in listening.get_attribute("title")
    for theme, name in (("JupyterLab Light", "light"), ("JupyterLab Dark", "dark")):
        lab.execute("apputils:change-theme", {"theme": theme})
        lab.page.wait_for_selector(f"body[data-jp-theme-light='{str(name == 'light').lower()}']",
                                   state="attached")
        lab.page.wait_for_timeout(500)
        lab.panel.screenshot(path=artifacts / f"panel-first-run-{name}.png")
    lab.page.screenshot(path=artifacts / "lab-first-run-dark.png")

    # An agent connects to the URL shown: its MCP session is a run, named by its folder and
    # how it was started; the tool count says it against the server's.
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "panel-test", "version": "0"}}}
    mcp_headers = {"Accept": "application/json, text/event-stream"}
    answer = httpx.post(copied_url, json=initialize, timeout=60, headers=mcp_headers)
    assert answer.status_code == 200, answer.text
    # Its run is made at its first tool call.
    mcp_headers |= {"Mcp-Session-Id": answer.headers["Mcp-Session-Id"],
                    "Mcp-Protocol-Version": "2025-06-18"}
    called = httpx.post(copied_url, timeout=60, headers=mcp_headers, json={
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "glob", "arguments": {"pattern": "*"}}})
    assert called.status_code == 200, called.text
    client = lab.server.client()
    (run,) = client.request("GET", "runs")
    assert (run["surface"], run["approvals"], run["space"]) == ("readonly", "ask", "lab")
    row = lab.panel.locator(f".jp-AgentTools-run[data-run-id='{run['id']}']")
    expect(row.locator(".jp-AgentTools-runFolder")).to_have_text(tmp_path.name)
    expect(row.locator(".jp-AgentTools-runOrigin")).to_have_text("via MCP client")
    server_tools = len(client.status()["tools"])
    expect(row.locator(".jp-AgentTools-runTools")).to_have_text(
        f"{len(run['tools'])} of {server_tools} tools")
    assert "Not in this run" in row.locator(".jp-AgentTools-runTools").get_attribute("title")
    expect(lab.panel.locator(".jp-AgentTools-connect")).to_be_hidden()  # folded away
    lab.panel.screenshot(path=artifacts / "panel-first-run-connected-dark.png")


def test_long_work_shows_it_is_running_until_it_ends(lab, artifacts: Path) -> None:
    run = lab.server.client().create_run(space="lab")
    lab.execute("agent-tools:open-panel")
    lab.panel.locator(f".jp-AgentTools-run[data-run-id='{run.id}']").click()
    call = lab.call_in_background(run.id, "eval", {
        "code": "import time\nfor _ in range(80):\n    time.sleep(0.1)\n'slept'",
        "description": "wait eight seconds as long work would"})

    running = lab.panel.locator(".jp-AgentTools-running .jp-AgentTools-runningCall", has_text="eval")
    running.wait_for()
    expect(running.locator(".jp-AgentTools-spinner")).to_be_visible()
    expect(lab.panel.locator(f".jp-AgentTools-run[data-run-id='{run.id}'] .jp-AgentTools-spinner")
           ).to_be_visible()
    lab.panel.screenshot(path=artifacts / "panel-running.png")
    assert call.result(timeout=120)["ok"]
    expect(lab.panel.locator(".jp-AgentTools-running")).to_have_count(0)
    expect(lab.panel.locator(".jp-AgentTools-call", has_text="eval").locator(
        ".jp-AgentTools-badge")).to_have_text("ok")


def test_a_notebook_change_opens_at_its_cell_and_reverts_unless_the_human_changed_it(
        lab, artifacts: Path) -> None:
    cells = [nbformat.v4.new_code_cell("rows = 3", id="load-data"),
             nbformat.v4.new_markdown_cell("## Totals", id="totals")]
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    Path(lab.server.root_dir, "tally.ipynb").write_text(nbformat.writes(
        nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": kernelspec})))
    run = lab.server.client().create_run(space="lab")
    # The notebook is closed: the agent changes the file.
    inserted = run.call("notebook", {"action": "insert", "path": "tally.ipynb",
                                     "source": "total = 41 + 1", "index": 2})
    assert inserted.ok, inserted.text
    new_id = inserted.data["cells"][0]["id"]
    rewritten = run.call("notebook", {"action": "set_source", "path": "tally.ipynb",
                                      "cell": "load-data", "source": "rows = 10"})
    assert rewritten.ok, rewritten.text

    lab.execute("agent-tools:open-panel")
    lab.panel.locator(f".jp-AgentTools-run[data-run-id='{run.id}']").click()
    insert_row = lab.panel.locator(".jp-AgentTools-call", has_text="insert")
    expect(insert_row.locator("summary")).to_contain_text("notebook insert tally.ipynb")
    insert_row.locator(f".jp-AgentTools-cellLink[data-cell-id='{new_id}']").click()
    notebook = lab.page.locator(".jp-NotebookPanel:visible")
    expect(notebook.locator(".jp-Cell.jp-mod-active")).to_contain_text("total = 41 + 1")

    # The human adds to the cell the agent rewrote: its revert is refused, saying what changed.
    editor = notebook.locator(".jp-Cell", has_text="rows = 10").locator(".cm-content")
    editor.click()
    lab.page.keyboard.press("End")
    lab.page.keyboard.type("  # checked")
    expect(editor).to_contain_text("rows = 10  # checked")
    lab.page.wait_for_timeout(1000)  # the typing reaches the shared document
    set_row = lab.panel.locator(".jp-AgentTools-call", has_text="set_source")
    set_row.get_by_role("button", name="Revert").click()
    expect(set_row.locator(".jp-AgentTools-revertRefused")).to_contain_text("changed since change")
    expect(editor).to_contain_text("rows = 10  # checked")

    # The inserted cell still holds what the agent left: Revert removes it, in place.
    insert_row.get_by_role("button", name="Revert").click()
    expect(insert_row.locator(".jp-AgentTools-reverted")).to_have_text("reverted")
    expect(notebook.locator(".jp-Cell", has_text="total = 41 + 1")).to_have_count(0)
    expect(notebook.locator(".jp-Cell")).to_have_count(2)
    assert [entry["args"].get("action") for entry in run.transcript()] == [
        "insert", "set_source", "revert", "revert"]
    lab.panel.screenshot(path=artifacts / "panel-notebook-changes.png")
