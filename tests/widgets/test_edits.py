"""Staged edits in the panel: a colored diff, and Accept / Discard calling `resolve`."""

from __future__ import annotations


async def stage(api, run_id, pattern, rewrite):
    _, result = await api("POST", f"runs/{run_id}/calls", {"tool": "ast_edit", "args": {
        "pattern": pattern, "rewrite": rewrite, "language": "python"}})
    assert result["ok"], result["text"]
    return result["data"]["edit_id"]


async def test_accept_and_discard_from_the_panel(api, panel_session, jp_root_dir, until):
    source = jp_root_dir / "x.py"
    source.write_text("print(1)\nprint(2)\n")
    session = await panel_session(space="lab")
    first = await stage(api, session.run.id, "print($A)", "log($A)")
    await until(lambda: first in session.panel.edits, "the staged edit in the panel")
    view = session.panel.edits[first]
    shown = view.children[1].value
    assert "log(1)" in shown and "background:#e6ffec" in shown and "print(1)" in shown
    assert "print($A) → log($A)" in view.children[0].value
    assert source.read_text() == "print(1)\nprint(2)\n"  # staged, not written

    view.accept_button.click()
    await until(lambda: source.read_text() == "log(1)\nlog(2)\n", "the accepted edit on disk")
    await until(lambda: first not in session.panel.edits, "the resolved edit leaving the panel")

    second = await stage(api, session.run.id, "log($A)", "show($A)")
    await until(lambda: second in session.panel.edits, "the second edit in the panel")
    session.panel.edits[second].discard_button.click()
    await until(lambda: not session.panel.edits, "the discarded edit leaving the panel")
    assert source.read_text() == "log(1)\nlog(2)\n"
    _, transcript = await api("GET", f"runs/{session.run.id}/transcript")
    resolves = [e["args"] for e in transcript if e["tool"] == "resolve"]
    assert resolves == [{"edit_id": first, "action": "accept"},
                        {"edit_id": second, "action": "discard"}]
