"""Cards over a real Jupyter server: the questions routes and the space WebSocket."""

from __future__ import annotations

import asyncio
import json

import pytest

WAIT = 30  # seconds: a bound on waits that should end at once, never an assertion


async def join(jp_ws_fetch, space="lab"):
    """Connect a human over the space WebSocket; return once the server counts it."""
    ws = await jp_ws_fetch("agent-tools", "api", "spaces", space, "events")
    await next_event(ws, "humans")
    return ws


async def next_event(ws, type_):
    while True:
        message = await asyncio.wait_for(ws.read_message(), WAIT)
        assert message is not None, "the space socket closed"
        event = json.loads(message)
        if event["type"] == type_:
            return event


def call(api, run_id, tool, args):
    return asyncio.ensure_future(api("POST", f"runs/{run_id}/calls", {"tool": tool, "args": args}))


async def test_answer_over_http_while_a_websocket_human_watches(api, jp_ws_fetch):
    _, run = await api("POST", "runs", {"space": "notebooks/demo.ipynb"})
    assert "ask_user" in run["tools"]
    ws = await join(jp_ws_fetch, "notebooks/demo.ipynb")
    pending = call(api, run["id"], "ask_user",
                   {"question": "Which?", "options": [{"label": "a"}, {"label": "b"}],
                    "multi_select": True, "allow_free_text": True})
    asked = await next_event(ws, "question_asked")
    assert asked["card"]["space"] == "notebooks/demo.ipynb" and asked["card"]["number"] == 1
    code, cards = await api("GET", f"runs/{run['id']}/questions")
    assert code == 200 and [c["id"] for c in cards] == [asked["card"]["id"]]
    code, card = await api("POST", f"runs/{run['id']}/questions/1", {"answer": ["a", "b"], "text": "both"})
    assert code == 200 and card["status"] == "answered"
    closed = await next_event(ws, "question_closed")
    assert closed["card"]["answer"] == ["a", "b"]
    code, result = await asyncio.wait_for(pending, WAIT)
    assert result["ok"] and result["data"]["selected"] == ["a", "b"] and result["data"]["text"] == "both"
    ws.close()


async def test_a_late_human_gets_the_pending_cards_replayed(api, jp_ws_fetch):
    _, run = await api("POST", "runs", {"space": "lab"})
    first = await join(jp_ws_fetch)
    pending = call(api, run["id"], "ask_user", {"question": "Name?"})
    card = (await next_event(first, "question_asked"))["card"]
    late = await jp_ws_fetch("agent-tools", "api", "spaces", "lab", "events")
    replayed = await next_event(late, "question_asked")
    assert replayed["replay"] and replayed["card"]["id"] == card["id"]
    code, _ = await api("POST", f"runs/{run['id']}/questions/{card['id']}", {"skip": True})
    assert code == 200
    _, result = await asyncio.wait_for(pending, WAIT)
    assert result["ok"] and result["data"]["status"] == "skipped"
    first.close()
    late.close()


async def test_no_human_over_http(api):
    _, run = await api("POST", "runs", {"space": "lab"})
    _, result = await api("POST", f"runs/{run['id']}/calls",
                          {"tool": "ask_user", "args": {"question": "Anyone?"}})
    assert result["error"]["code"] == "no_human"


async def test_another_run_cannot_answer_your_card(api, jp_ws_fetch):
    _, mine = await api("POST", "runs", {"space": "lab"})
    _, other = await api("POST", "runs", {"space": "lab"})
    _, spaceless = await api("POST", "runs", {})
    ws = await join(jp_ws_fetch)
    pending = call(api, mine["id"], "ask_user", {"question": "Mine?"})
    card = (await next_event(ws, "question_asked"))["card"]
    for run in (other, spaceless):
        for qid in (card["id"], "1"):
            code, body = await api("POST", f"runs/{run['id']}/questions/{qid}", {"answer": None, "text": "x"})
            assert code == 404 and body["error"]["code"] == "not_found"
    code, body = await api("POST", f"runs/{mine['id']}/questions/{card['id']}", {"bogus": 1})
    assert code == 400
    code, _ = await api("POST", f"runs/{mine['id']}/questions/{card['id']}", {"text": "yes"})
    assert code == 200
    code, body = await api("POST", f"runs/{mine['id']}/questions/{card['id']}", {"text": "again"})
    assert code == 409 and "already answered" in body["error"]["message"]
    assert (await asyncio.wait_for(pending, WAIT))[1]["data"]["text"] == "yes"
    ws.close()


@pytest.mark.parametrize("choice, ok", [("allow_once", True), ("Allow this tool for this run", True),
                                        ("deny", False)])
async def test_permission_card_for_a_write_over_http(api, jp_ws_fetch, jp_root_dir, choice, ok):
    _, run = await api("POST", "runs", {"space": "lab", "approvals": "ask"})
    ws = await join(jp_ws_fetch)
    pending = call(api, run["id"], "write", {"path": "w.txt", "content": "hello\n"})
    card = (await next_event(ws, "question_asked"))["card"]
    assert card["kind"] == "permission" and card["args"]["content"] == "hello\n"
    code, _ = await api("POST", f"runs/{run['id']}/questions/{card['number']}", {"answer": choice})
    assert code == 200
    _, result = await asyncio.wait_for(pending, WAIT)
    assert result["ok"] is ok and (jp_root_dir / "w.txt").exists() is ok
    if not ok:
        assert result["error"]["code"] == "permission_denied"
    ws.close()


async def test_spaceless_runs_have_no_cards(api):
    _, run = await api("POST", "runs", {})
    assert "ask_user" not in run["tools"]
    assert await api("GET", f"runs/{run['id']}/questions") == (200, [])


async def test_a_run_token_reads_its_cards_but_cannot_answer_them(api, jp_ws_fetch, jp_fetch,
                                                                   jp_serverapp):
    _, run = await api("POST", "runs", {"space": "lab"})
    runtime = jp_serverapp.web_app.settings["agent_tools_runtime"]
    headers = {"Authorization": f"token {runtime.run_tokens.issue(run['id'])}"}
    ws = await join(jp_ws_fetch)
    pending = call(api, run["id"], "ask_user", {"question": "Self-approve?"})
    card = (await next_event(ws, "question_asked"))["card"]

    async def as_worker(method, *path, body=None):
        response = await jp_fetch("agent-tools", "api", "runs", run["id"], "questions", *path,
                                  method=method, headers=headers, raise_error=False,
                                  body=None if body is None else json.dumps(body))
        return response.code

    assert await as_worker("GET") == 200
    assert await as_worker("POST", card["id"], body={"text": "yes"}) == 403
    code, _ = await api("POST", f"runs/{run['id']}/questions/{card['id']}", {"text": "no"})
    assert code == 200
    assert (await asyncio.wait_for(pending, WAIT))[1]["data"]["text"] == "no"
    ws.close()
