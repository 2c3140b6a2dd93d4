"""Two agents at once in a real JupyterLab (issue 47): the panel tells them apart by their MCP
client, lists what each waits for on top whichever run is selected, and never forgets a run that
ended: its transcript, and a staged edit still waiting, accepted after the session ended; and
the agent as a collaborator in the notebook it works on, which Follow scrolls to.

docs/_static/panel-two-agents.png and lab-follow-agent.png are copies of this file's
screenshots (tests/lab/artifacts/)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

expect = pytest.importorskip("playwright.sync_api").expect

class McpAgent:
    """One MCP client over raw streamable HTTP (JSON answers), as an agent's program speaks it."""

    def __init__(self, url: str, token: str, name: str, version: str) -> None:
        self.url = url
        self.headers = {"Accept": "application/json, text/event-stream",
                        "Authorization": f"token {token}"}
        opened = httpx.post(url, headers=self.headers, timeout=60, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": name, "version": version}}})
        assert opened.status_code == 200, opened.text
        self.headers |= {"Mcp-Session-Id": opened.headers["Mcp-Session-Id"],
                         "Mcp-Protocol-Version": "2025-06-18"}
        self.ids = 1

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        answer = httpx.post(self.url, headers=self.headers, timeout=120, json={
            "jsonrpc": "2.0", "id": self.ids, "method": "tools/call",
            "params": {"name": tool, "arguments": args}})
        assert answer.status_code == 200, answer.text
        return answer.json()["result"]

    def end(self) -> None:
        """The client ends its session (DELETE), as a closed agent does: its run ends."""
        assert httpx.delete(self.url, headers=self.headers, timeout=60).status_code in (200, 204)


def test_two_agents_are_told_apart_and_what_they_wait_for_is_never_hidden(
        start_lab: Any, tmp_path: Path, artifacts: Path) -> None:
    (tmp_path / "shapes.py").write_text("def area(w, h):\n    print(w * h)\n")
    (tmp_path / "report.py").write_text("total = 3\nprint(total)\n")
    lab = start_lab(tmp_path)
    lab.execute("agent-tools:open-panel")
    expect(lab.panel.locator(".jp-AgentTools-connect")).to_contain_text("No agent has used")
    url = f"{lab.server.url}agent-tools/mcp"
    claude = McpAgent(f"{url}?space=lab&approvals=ask", lab.server.token, "claude-code", "2.1.0")
    codex = McpAgent(f"{url}?space=lab&approvals=auto", lab.server.token, "codex-cli", "0.58.0")

    # Two runs with the same options but for the approvals: their clients tell them apart.
    assert not claude.call("read", {"path": "report.py"})["isError"]
    asked = ThreadPoolExecutor(1).submit(claude.call, "bash", {"command": "echo asked-first"})
    staged = codex.call("ast_edit", {"pattern": "print($A)", "rewrite": "log($A)",
                                     "path": "shapes.py", "language": "python"})
    assert not staged["isError"], staged
    edit_id = staged["structuredContent"]["edit_id"]
    runs = {run["client"]["name"]: run for run in lab.server.client().request("GET", "runs")}
    assert runs["codex-cli"]["staged_edits"] == 1
    claude_row = lab.panel.locator(f".jp-AgentTools-run[data-run-id='{runs['claude-code']['id']}']")
    codex_row = lab.panel.locator(f".jp-AgentTools-run[data-run-id='{runs['codex-cli']['id']}']")
    expect(claude_row.locator(".jp-AgentTools-runClient")).to_have_text("claude-code 2.1.0")
    expect(codex_row.locator(".jp-AgentTools-runClient")).to_have_text("codex-cli 0.58.0")
    expect(claude_row.locator(".jp-AgentTools-runMeta")).to_contain_text("started ")
    expect(claude_row.locator(".jp-AgentTools-runMeta")).to_contain_text("asks first")
    expect(codex_row.locator(".jp-AgentTools-runMeta")).to_contain_text("no approval asked")

    # Whichever run is selected, both decisions are on top, each tagged with its run, and
    # each run waiting carries a badge.
    claude_row.click()
    waiting = lab.panel.locator(".jp-AgentTools-cards")
    card = waiting.locator(".jp-AgentTools-pending-card", has_text="Allow bash")
    edit = waiting.locator(f".jp-AgentTools-pending-edit:has([data-edit-id='{edit_id}'])")
    expect(card.locator(".jp-AgentTools-runTag")).to_contain_text("claude-code 2.1.0")
    expect(edit.locator(".jp-AgentTools-runTag")).to_contain_text("codex-cli 0.58.0")
    edit.locator(".jp-AgentTools-diff-add", has_text="log(w * h)").wait_for()
    expect(claude_row.locator(".jp-AgentTools-waiting")).to_have_text("1 waiting")
    expect(codex_row.locator(".jp-AgentTools-waiting")).to_have_text("1 waiting")
    lab.page.wait_for_timeout(300)
    lab.panel.screenshot(path=artifacts / "panel-two-agents.png")

    card.get_by_role("button", name="Allow once").click()
    assert "asked-first" in asked.result(timeout=60)["content"][0]["text"]
    expect(claude_row.locator(".jp-AgentTools-waiting")).to_have_count(0)

    # codex's session ends with its edit still staged: the run stays, greyed, with its
    # transcript, and the edit waits on top until the human accepts it.
    codex.end()
    expect(codex_row).to_have_attribute("data-state", "ended")
    expect(codex_row.locator(".jp-AgentTools-runEnded")).to_have_text("ended")
    expect(lab.panel.locator(".jp-AgentTools-connect")).to_be_hidden()
    codex_row.click()
    expect(lab.panel.locator(".jp-AgentTools-runEndedNote")).to_contain_text("codex-cli 0.58.0")
    expect(lab.panel.locator(".jp-AgentTools-call .jp-AgentTools-callTool")).to_have_text(
        ["ast_edit"])
    expect(edit.locator(".jp-AgentTools-runTag")).to_contain_text("ended")
    lab.page.wait_for_timeout(300)
    lab.panel.screenshot(path=artifacts / "panel-ended-run.png")
    edit.get_by_role("button", name="Accept").click()
    lab.panel.locator(
        f".jp-AgentTools-edits .jp-AgentTools-edit[data-edit-id='{edit_id}'][data-status='accepted']"
    ).wait_for()
    assert (tmp_path / "shapes.py").read_text() == "def area(w, h):\n    log(w * h)\n"
    expect(waiting.locator(".jp-AgentTools-pending")).to_have_count(0)
    claude.end()
    expect(claude_row).to_have_attribute("data-state", "ended")


def test_the_agent_is_a_collaborator_in_the_open_notebook_and_follow_scrolls_to_its_cell(
        start_lab: Any, tmp_path: Path, artifacts: Path) -> None:
    import nbformat

    cells = [nbformat.v4.new_code_cell(f"step_{n} = {n}", id=f"step-{n}") for n in range(1, 31)]
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    (tmp_path / "steps.ipynb").write_text(nbformat.writes(
        nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": kernelspec})))
    lab = start_lab(tmp_path)
    lab.execute("docmanager:open", {"path": "steps.ipynb", "factory": "Notebook"})
    notebook = lab.page.locator(".jp-NotebookPanel:visible")
    expect(notebook.locator(".jp-Cell").first).to_contain_text("step_1 = 1")
    lab.page.wait_for_timeout(1000)  # the notebook's room is open on the server
    agent = McpAgent(f"{lab.server.url}agent-tools/mcp?space=lab&approvals=auto",
                     lab.server.token, "claude-code", "2.1.0")

    # The agent changes cell 2: it is there as a collaborator, its name on its cursor.
    changed = agent.call("notebook", {"action": "set_source", "path": "steps.ipynb",
                                      "cell": 2, "source": "step_2 = 20"})
    assert not changed["isError"], changed
    cell = notebook.locator(".jp-Cell", has_text="step_2 = 20")
    expect(cell.locator(".jp-remote-cursor")).to_have_count(1)
    # Its flag (a tooltip of the editor, in the page's body) bears its name.
    flag = lab.page.locator(".jp-remote-userFlag-name", has_text="claude-code (agent)")
    expect(flag.first).to_be_visible()
    lab.page.wait_for_timeout(300)
    lab.page.screenshot(path=artifacts / "lab-agent-collaborator.png")

    # Follow: its next change, far down, scrolls the notebook there.
    lab.execute("agent-tools:open-panel")
    lab.panel.locator(".jp-AgentTools-followToggle").check()
    changed = agent.call("notebook", {"action": "set_source", "path": "steps.ipynb",
                                      "cell": "step-28", "source": "step_28 = 280"})
    assert not changed["isError"], changed
    far = notebook.locator(".jp-Cell", has_text="step_28 = 280")
    expect(far).to_be_in_viewport()
    expect(far.locator(".jp-remote-cursor")).to_have_count(1)
    expect(lab.panel.locator(".jp-AgentTools-follow")).to_contain_text("cell 28")
    lab.page.wait_for_timeout(300)
    lab.page.screenshot(path=artifacts / "lab-follow-agent.png")
    agent.end()
