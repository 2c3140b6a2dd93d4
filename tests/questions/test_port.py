"""ask_user and permission cards, embedded: a Runtime in this process and a Python human."""

from __future__ import annotations

import asyncio

import pytest
from traitlets.config import Config

from jupyter_agent_tools import Runtime

WAIT = 30  # seconds: a bound on waits that should end at once, never an assertion


def ask(run, question="Which colour?", **more):
    args = {"question": question, "context": "Picking a theme; I assume blue if skipped.",
            "options": [{"label": "red"}, {"label": "blue", "description": "the default"}]}
    args.update(more)
    return asyncio.ensure_future(run.call("ask_user", args))


async def test_ask_user_is_registered_only_with_a_space(runtime):
    assert "ask_user" not in (await runtime.create_run()).tool_names()
    assert "ask_user" in (await runtime.create_run(space="lab")).tool_names()
    assert "ask_user" in (await runtime.create_run(space="lab", surface="plan")).tool_names()


async def test_answer_with_an_option(runtime):
    run = await runtime.create_run(space="lab")
    async with await runtime.connect_human("lab") as human:
        call = ask(run)
        card = await human.next_card(timeout=WAIT)
        assert card["number"] == 1 and card["kind"] == "question" and card["run_id"] == run.id
        assert card["context"].startswith("Picking") and [o["label"] for o in card["options"]] == ["red", "blue"]
        answered = await human.answer(card["id"], answer="blue")
        assert answered["status"] == "answered"
        result = await asyncio.wait_for(call, WAIT)
    assert result.ok, result.text
    assert result.data["answer"] == "blue" and "blue" in result.text


async def test_multi_select_and_numbers_count_up(runtime):
    run = await runtime.create_run(space="lab")
    async with await runtime.connect_human("lab") as human:
        first = ask(run, "First?")
        card = await human.next_card(timeout=WAIT)
        await human.answer(card["id"], answer="red")
        await first
        call = ask(run, "Which ones?", multi_select=True)
        card = await human.next_card(timeout=WAIT)
        assert card["number"] == 2 and card["multi_select"]
        await human.answer(card["id"], answer=["red", "blue"])
        result = await asyncio.wait_for(call, WAIT)
    assert result.data["answer"] == ["red", "blue"] and result.data["selected"] == ["red", "blue"]


async def test_free_text(runtime):
    run = await runtime.create_run(space="lab")
    async with await runtime.connect_human("lab") as human:
        call = asyncio.ensure_future(run.call("ask_user", {"question": "Name the module?"}))
        card = await human.next_card(timeout=WAIT)
        assert card["allow_free_text"] and card["options"] == []
        await human.answer(card["id"], text="  mathutils  ")
        result = await asyncio.wait_for(call, WAIT)
    assert result.ok and result.data["text"] == "mathutils" and "mathutils" in result.text


async def test_a_wrong_answer_is_refused_and_the_card_stays_open(runtime):
    run = await runtime.create_run(space="lab")
    async with await runtime.connect_human("lab") as human:
        call = ask(run)
        card = await human.next_card(timeout=WAIT)
        for bad in ({"answer": "green"}, {"answer": ["red", "blue"]}, {"text": "purple"}, {}):
            with pytest.raises(Exception, match=r"invalid_arguments|not an option|single|no free text|empty"):
                await human.answer(card["id"], **bad)
        assert [c["id"] for c in human.pending()] == [card["id"]]
        await human.answer(card["id"], answer="red")
        assert (await call).data["answer"] == "red"
        with pytest.raises(Exception, match="already answered"):
            await human.answer(card["id"], answer="blue")


async def test_skip_then_asking_again_returns_the_skip_at_once(runtime):
    run = await runtime.create_run(space="lab")
    async with await runtime.connect_human("lab") as human:
        call = ask(run)
        card = await human.next_card(timeout=WAIT)
        await human.skip(card["id"])
        result = await asyncio.wait_for(call, WAIT)
    assert result.ok and result.data["status"] == "skipped"
    assert "stated assumption" in result.text and "do not ask" in result.text
    # Nobody is connected any more: the re-ask still answers, from the recorded skip.
    again = await run.call("ask_user", {"question": "which colour"})
    assert again.ok and again.data["repeated"] and again.data["card"] == card["number"]


async def test_no_human_fails_at_once(runtime):
    run = await runtime.create_run(space="lab")
    async with await runtime.connect_human("elsewhere"):
        result = await run.call("ask_user", {"question": "Anyone?"})
    assert result.code == "no_human" and "open_panel" in result.error["message"]
    assert result.error["message"].endswith("and ask again."), result.error["message"]


async def test_timeout_is_an_error_with_the_same_instruction(root):
    rt = Runtime(root_dir=str(root), config=Config({"QuestionPort": {"timeout_seconds": 0.2}}))
    try:
        run = await rt.create_run(space="lab")
        async with await rt.connect_human("lab") as human:
            result = await run.call("ask_user", {"question": "Quick?"})
            assert result.code == "timeout" and "stated assumption" in result.error["message"]
            assert human.pending() == []
    finally:
        await rt.shutdown()


async def test_another_space_or_run_cannot_answer_your_card(runtime):
    mine = await runtime.create_run(space="lab")
    other = await runtime.create_run(space="other")
    same_space = await runtime.create_run(space="lab")
    async with await runtime.connect_human("lab") as human, \
            await runtime.connect_human("other") as stranger:
        call = ask(mine)
        card = await human.next_card(timeout=WAIT)
        with pytest.raises(Exception, match="No card"):
            await stranger.answer(card["id"], answer="red")
        from jupyter_agent_tools import Resource

        for run in (other, same_space):
            with pytest.raises(Exception, match="no card"):
                run.resources[Resource.QUESTIONS].answer(card["id"], "red")
        await human.answer(card["id"], answer="red")
        assert (await call).ok


async def test_closing_the_run_ends_its_pending_card(runtime):
    run = await runtime.create_run(space="lab")
    async with await runtime.connect_human("lab") as human:
        call = ask(run)
        await human.next_card(timeout=WAIT)
        await runtime.close_run(run.id)
        result = await asyncio.wait_for(call, WAIT)
        assert not result.ok and human.pending() == []


async def test_cards_are_published_on_the_run_and_space_streams(runtime):
    run = await runtime.create_run(space="lab")
    async with run.events.subscribe() as run_events, runtime.space_bus("lab").subscribe() as space_events:
        async with await runtime.connect_human("lab") as human:
            call = ask(run)
            card = await human.next_card(timeout=WAIT)
            await human.answer(card["id"], answer="red")
            await call
        seen_run = [e for e in _drain(run_events) if e["type"].startswith("question")]
        seen_space = [e["type"] for e in _drain(space_events)]
    assert [e["type"] for e in seen_run] == ["question_asked", "question_closed"]
    assert seen_run[1]["card"]["answer"] == "red"
    assert seen_space == ["humans", "question_asked", "question_closed", "humans"]


def _drain(queue):
    events = []
    while not queue.empty():
        events.append(queue.get_nowait())
    return events


@pytest.mark.parametrize("choice, ok, cards_after", [
    ("Allow once", True, 1), ("allow_run", True, 0), ("Deny", False, 1),
])
async def test_permission_card_for_a_write(runtime, root, choice, ok, cards_after):
    run = await runtime.create_run(space="lab", approvals="ask")
    async with await runtime.connect_human("lab") as human:
        call = asyncio.ensure_future(run.call("write", {"path": "a.txt", "content": "one\n"}))
        card = await human.next_card(timeout=WAIT)
        assert card["kind"] == "permission" and card["tool"] == "write" and card["tier"] == "write"
        assert card["args"] == {"path": "a.txt", "content": "one\n"}
        assert [o["value"] for o in card["options"]] == ["allow_once", "allow_run", "deny"]
        await human.answer(card["id"], answer=choice)
        result = await asyncio.wait_for(call, WAIT)
        assert result.ok is ok and (root / "a.txt").exists() is ok
        if not ok:
            assert result.code == "permission_denied"
        # A second write: asks again unless the tool was allowed for the run.
        second = asyncio.ensure_future(run.call("write", {"path": "b.txt", "content": "two\n"}))
        if cards_after:
            card = await human.next_card(timeout=WAIT)
            await human.answer(card["id"], answer="Allow once")
        assert (await asyncio.wait_for(second, WAIT)).ok


async def test_permission_without_a_human_is_no_human(runtime, root):
    run = await runtime.create_run(space="lab", approvals="ask")
    result = await run.call("write", {"path": "a.txt", "content": "x"})
    assert result.code == "no_human" and not (root / "a.txt").exists()
    sentences = result.error["message"].split(". ")
    assert sentences[0] == "Nobody is connected to space 'lab' to approve write, so the call did not run"
    assert all(sentence[0].isupper() for sentence in sentences), sentences


async def test_a_cancelled_call_withdraws_its_card(runtime):
    run = await runtime.create_run(space="lab")
    async with runtime.space_bus("lab").subscribe() as events, \
            await runtime.connect_human("lab") as human:
        call = ask(run)
        card = await human.next_card(timeout=WAIT)
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        assert human.pending() == []
        closed = [e for e in _drain(events) if e["type"] == "question_closed"]
        assert [(e["card"]["id"], e["card"]["status"]) for e in closed] == [(card["id"], "cancelled")]
        with pytest.raises(Exception, match="already cancelled"):
            await human.answer(card["id"], answer="red")
