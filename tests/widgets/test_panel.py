"""The panel driven headless: click the widget objects, check the server saw the answer."""

from __future__ import annotations

import asyncio

from jupyter_agent_tools.widgets import AgentPanel, diff_html

WAIT = 30  # seconds: a bound on waits that should end at once, never an assertion


def ask(api, run_id, tool="ask_user", **args):
    return asyncio.ensure_future(api("POST", f"runs/{run_id}/calls", {"tool": tool, "args": args}))


async def card_view(panel: AgentPanel, until, question: str):
    """The panel's view of the pending card asking `question`, once it shows."""
    def find():
        return next((v for v in list(panel.cards.values()) if v.card["question"] == question), None)

    await until(find, f"card {question!r} in the panel")
    return find()


async def test_clicking_an_option_answers_the_card(api, panel_session, until):
    session = await panel_session(space="lab")
    assert session.run.descriptor["space"] == "lab"
    pending = ask(api, session.run.id, question="Colour?", context="theme; blue if skipped",
                  options=[{"label": "red"}, {"label": "blue"}])
    view = await card_view(session.panel, until, "Colour?")
    assert [b.description for b in view.option_buttons] == ["red", "blue"]
    assert view.skip_button in view.children[-1].children
    view.option_buttons[1].click()
    _, result = await asyncio.wait_for(pending, WAIT)
    assert result["ok"] and result["data"]["answer"] == "blue"
    await until(lambda: not session.panel.cards, "the answered card leaving the panel")
    await until(lambda: any("#1 answered: blue" in line for line in session.panel.transcript.lines),
                "the answer in the transcript")


async def test_checkboxes_text_and_skip(api, panel_session, until):
    session = await panel_session(space="lab")
    pending = ask(api, session.run.id, question="Which?", multi_select=True, allow_free_text=True,
                  options=[{"label": "a"}, {"label": "b"}, {"label": "c"}])
    view = await card_view(session.panel, until, "Which?")
    view.checkboxes[0].value = view.checkboxes[2].value = True
    view.text.value = "and quickly"
    view.submit_button.click()
    _, result = await asyncio.wait_for(pending, WAIT)
    assert result["data"]["selected"] == ["a", "c"] and result["data"]["text"] == "and quickly"

    pending = ask(api, session.run.id, question="Anything else?")
    view = await card_view(session.panel, until, "Anything else?")
    assert view.option_buttons == [] and view.text in view.children
    view.skip_button.click()
    _, result = await asyncio.wait_for(pending, WAIT)
    assert result["data"]["status"] == "skipped"


async def test_an_empty_answer_is_shown_and_the_card_stays(api, panel_session, until):
    session = await panel_session(space="lab")
    pending = ask(api, session.run.id, question="Name?")
    view = await card_view(session.panel, until, "Name?")
    view.submit_button.click()  # nothing typed
    await until(lambda: "empty" in view.status.value, "the server's refusal on the card")
    assert not view.submit_button.disabled and view.id in session.panel.cards
    view.text.value = "ok"
    view.submit_button.click()
    _, result = await asyncio.wait_for(pending, WAIT)
    assert result["data"]["text"] == "ok"


async def test_permission_buttons_show_the_call_in_full(api, panel_session, jp_root_dir, until):
    session = await panel_session(space="lab", approvals="ask")
    pending = ask(api, session.run.id, tool="write", path="p.txt", content="secret plan\n")
    view = await card_view(session.panel, until, "Allow write (write tier)?")
    assert "secret plan" in view.children[1].value
    assert [b.description for b in view.option_buttons] == [
        "Allow once", "Allow this tool for this run", "Deny"]
    view.option_buttons[2].click()
    _, result = await asyncio.wait_for(pending, WAIT)
    assert result["error"]["code"] == "permission_denied" and not (jp_root_dir / "p.txt").exists()

    await until(lambda: not session.panel.cards, "the denied card leaving the panel")
    pending = ask(api, session.run.id, tool="write", path="p.txt", content="ok\n")
    view = await card_view(session.panel, until, "Allow write (write tier)?")
    view.option_buttons[0].click()
    _, result = await asyncio.wait_for(pending, WAIT)
    assert result["ok"] and (jp_root_dir / "p.txt").read_text() == "ok\n"
    await until(lambda: any(line.startswith("✓ write") for line in session.panel.transcript.lines),
                "the write in the transcript")


async def test_cards_of_other_runs_in_the_space_show_too(api, panel_session, until):
    session = await panel_session(space="shared")
    _, other = await api("POST", "runs", {"space": "shared"})
    pending = ask(api, other["id"], question="From the other run?", options=[{"label": "yes"}])
    view = await card_view(session.panel, until, "From the other run?")
    assert view.card["run_id"] == other["id"]
    view.option_buttons[0].click()
    _, result = await asyncio.wait_for(pending, WAIT)
    assert result["data"]["answer"] == "yes"


async def test_closing_the_panel_leaves_nobody_to_ask(api, panel_session, until):
    session = await panel_session(space="lab")
    humans = {}

    async def poll_status():
        _, status = await api("GET", "status")
        humans.update(status["resources"]["questions"]["humans"])
        return humans

    assert (await poll_status())["lab"] == 1
    await asyncio.to_thread(session.close)
    humans.clear()

    async def gone():
        while "lab" in await poll_status():
            humans.clear()
            await asyncio.sleep(0.02)

    await asyncio.wait_for(gone(), WAIT)
    _, result = await api("POST", f"runs/{session.run.id}/calls",
                          {"tool": "ask_user", "args": {"question": "Still there?"}})
    assert result["error"]["code"] == "no_human"


def test_diff_html_colors_lines():
    html = diff_html("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old <tag>\n+new\n same\n")
    assert "background:#ffebe9" in html and "background:#e6ffec" in html
    assert "&lt;tag&gt;" in html and "color:#06c" in html


async def test_opening_the_panel_again_replaces_it(api, panel_session):
    first = await panel_session(space="lab")
    second = await panel_session(space="lab")
    assert not first.link.connected.is_set() and second.link.connected.is_set()

    async def humans():
        _, status = await api("GET", "status")
        return status["resources"]["questions"]["humans"].get("lab")

    async def settled():
        while await humans() != 1:
            await asyncio.sleep(0.02)

    await asyncio.wait_for(settled(), WAIT)
