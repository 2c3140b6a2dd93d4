"""The WebSocket frames are the event models of the document: every kind, every key declared."""

from __future__ import annotations

import asyncio
import json

from jupyter_agent_tools.http.events import EVENT_ADAPTER

WAIT = 30  # seconds: a bound on waits that should end at once, never an assertion


async def frames_until(ws, last_type: str) -> list[dict]:
    frames = []
    while not frames or frames[-1]["type"] != last_type:
        message = await asyncio.wait_for(ws.read_message(), WAIT)
        assert message is not None, "the socket closed"
        frames.append(json.loads(message))
    return frames


def assert_declared(frame: dict) -> None:
    """The frame validates as its model, and the model names each of its keys."""
    model = type(EVENT_ADAPTER.validate_python(frame))
    assert set(frame) <= set(model.model_fields), (frame["type"], set(frame) - set(model.model_fields))


async def test_run_and_space_events_are_typed(api, jp_ws_fetch, jp_root_dir):
    (jp_root_dir / "a.py").write_text("print(1)\n")
    _, run = await api("POST", "runs", {"space": "lab"})
    run_id = run["id"]
    space_ws = await jp_ws_fetch("agent-tools", "api", "spaces", "lab", "events")
    space_frames = await frames_until(space_ws, "humans")
    run_ws = await jp_ws_fetch("agent-tools", "api", "runs", run_id, "events")
    # the run socket is live once it hears a call made after it opened
    while True:
        await api("POST", f"runs/{run_id}/calls", {"tool": "read", "args": {"path": "a.py"}})
        first = json.loads(await asyncio.wait_for(run_ws.read_message(), WAIT))
        if first["type"] == "call_started":
            break
    run_frames = [first, *await frames_until(run_ws, "call_finished")]

    edit = {"pattern": "print($A)", "rewrite": "show($A)", "path": "a.py"}
    await api("POST", f"runs/{run_id}/calls", {"tool": "ast_edit", "args": edit})
    await api("POST", f"runs/{run_id}/calls",
              {"tool": "resolve", "args": {"edit_id": "edit_1", "action": "accept"}})
    asking = asyncio.ensure_future(api("POST", f"runs/{run_id}/calls",
                                       {"tool": "ask_user", "args": {"question": "Go on?"}}))
    space_frames += await frames_until(space_ws, "question_asked")
    code, _ = await api("POST", f"runs/{run_id}/questions/1", {"text": "yes"})
    assert code == 200
    space_frames += await frames_until(space_ws, "question_closed")
    await asyncio.wait_for(asking, WAIT)
    await api("DELETE", f"runs/{run_id}")
    run_frames += await frames_until(run_ws, "run_closed")

    kinds = {frame["type"] for frame in run_frames + space_frames}
    assert {"call_started", "call_finished", "edit_staged", "edit_resolved", "question_asked",
            "question_closed", "run_closed", "humans"} <= kinds
    for frame in run_frames + space_frames:
        assert_declared(frame)
    run_ws.close()
    space_ws.close()


async def test_worker_events_are_typed(runtime_factory):
    async def agent(brief: str, run) -> str:
        return "done: " + brief

    runtime = runtime_factory({"WorkerPool": {"backend": "python"},
                               "PythonBackend": {"agent": agent}})
    parent = await runtime.create_run(vibe=True)
    async with parent.events.subscribe() as queue:
        await parent.call("vibe_spawn", {"brief": "x", "label": "quick"})
        await parent.call("vibe_wait", {"worker_id": "w1"})
        events = [queue.get_nowait() for _ in range(queue.qsize())]
    states = [event for event in events if event["type"] == "worker_state"]
    assert [event["status"] for event in states] == ["queued", "running", "done"]
    for event in events:
        assert_declared(event)
