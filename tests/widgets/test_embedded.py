"""The panel over an in-process Runtime: the same widgets, fed by connect_human and run events."""

from __future__ import annotations

import asyncio

from jupyter_agent_tools.notebook import open_embedded_panel

WAIT = 30  # seconds: a bound on waits that should end at once, never an assertion


async def test_embedded_panel_answers_permissions_and_resolves_edits(runtime, root, until):
    (root / "m.py").write_text("print(1)\n")
    run = await runtime.create_run(space="nb", approvals="ask")
    link = await open_embedded_panel(runtime, run, display=False)
    try:
        call = asyncio.ensure_future(run.call("ast_edit", {
            "pattern": "print($A)", "rewrite": "log($A)", "language": "python"}))
        await until(lambda: link.panel.cards, "the permission card")
        view = next(iter(link.panel.cards.values()))
        assert view.card["tool"] == "ast_edit"
        view.option_buttons[1].click()  # allow ast_edit for the run
        edit_id = (await asyncio.wait_for(call, WAIT)).data["edit_id"]
        await until(lambda: edit_id in link.panel.edits, "the staged edit")
        assert not link.panel.cards

        link.panel.edits[edit_id].accept_button.click()  # resolve is write tier: one more card
        await until(lambda: link.panel.cards, "the resolve permission card")
        view = next(iter(link.panel.cards.values()))
        assert view.card["args"] == {"edit_id": edit_id, "action": "accept"}
        view.option_buttons[0].click()
        await until(lambda: (root / "m.py").read_text() == "log(1)\n", "the accepted edit")
        await until(lambda: not link.panel.edits, "the edit leaving the panel")

        call = asyncio.ensure_future(run.call("ask_user", {"question": "Done?"}))
        await until(lambda: link.panel.cards, "the question card")
        view = next(iter(link.panel.cards.values()))
        view.skip_button.click()
        assert (await asyncio.wait_for(call, WAIT)).data["status"] == "skipped"
    finally:
        await link.close()
    assert runtime.provider("questions").humans("nb") == 0
