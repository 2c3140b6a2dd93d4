"""Round trip of a card: the agent asks, a human front end sees it and answers, the agent reads.

Compared in the same run against the real alternatives:
- embedded: `ask_user` answered by `Runtime.connect_human` vs a bare asyncio queue hand-off
  (the floor any in-process question/answer needs);
- over a real server: `ask_user` over HTTP answered by a WebSocket human (the notebook and lab
  panels' protocol) vs one plain HTTP `read` call;
- permission prompts: a `write` with approvals `ask` answered at once vs the same ungated write.

Run: python -m benchmarks.bench_questions [--cards N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

import httpx
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from jupyter_agent_tools import Runtime

from .server import jupyter_server
from .stats import line, summarize

QUESTION = {"question": "Proceed?", "options": [{"label": "yes"}, {"label": "no"}]}


async def _message(ws: WebSocketClientConnection) -> str | bytes:
    message = await ws.read_message()
    assert message is not None, "the events socket closed"
    return message


async def _bare_handoff(cards: int) -> list[float]:
    asked: asyncio.Queue[str] = asyncio.Queue()
    answered: asyncio.Queue[str] = asyncio.Queue()

    async def human() -> None:
        for _ in range(cards):
            await asked.get()
            answered.put_nowait("yes")

    task = asyncio.ensure_future(human())
    samples = []
    for _ in range(cards):
        start = time.perf_counter()
        asked.put_nowait("Proceed?")
        await answered.get()
        samples.append(time.perf_counter() - start)
    await task
    return samples


async def _embedded(root: Path, cards: int, tool: str, approvals: str) -> list[float]:
    runtime = Runtime(root_dir=str(root))
    run = await runtime.create_run(space="bench", approvals=approvals)
    human = await runtime.connect_human("bench")

    async def answer_all() -> None:
        while True:
            card = await human.next_card()
            await human.answer(card["id"], answer=card["options"][0]["label"])

    answering = asyncio.ensure_future(answer_all())
    samples = []
    for i in range(cards):
        args = dict(QUESTION, question=f"Proceed {i}?") if tool == "ask_user" else {
            "path": "out.txt", "content": f"{i}\n"}
        start = time.perf_counter()
        result = await run.call(tool, args)
        samples.append(time.perf_counter() - start)
        assert result.ok, result.text
    answering.cancel()
    await human.close()
    await runtime.shutdown()
    return samples


async def _over_server(url: str, token: str, cards: int) -> tuple[list[float], list[float]]:
    headers = {"Authorization": f"token {token}"}
    async with httpx.AsyncClient(base_url=url + "agent-tools/api/", headers=headers) as http:
        run_id = (await http.post("runs", json={"space": "bench"})).json()["id"]
        ws_url = url.replace("http", "ws", 1) + "agent-tools/api/spaces/bench/events"
        ws = await websocket_connect(HTTPRequest(ws_url, headers=headers))
        while json.loads(await _message(ws))["type"] != "humans":
            pass
        asked, plain = [], []
        for i in range(cards):
            start = time.perf_counter()
            call = asyncio.ensure_future(http.post(f"runs/{run_id}/calls", json={
                "tool": "ask_user", "args": dict(QUESTION, question=f"Proceed {i}?")}))
            while (event := json.loads(await _message(ws)))["type"] != "question_asked":
                pass
            await http.post(f"runs/{run_id}/questions/{event['card']['id']}", json={"answer": "yes"})
            assert (await call).json()["ok"]
            asked.append(time.perf_counter() - start)
            start = time.perf_counter()
            assert (await http.post(f"runs/{run_id}/calls", json={
                "tool": "read", "args": {"path": "small.txt"}})).json()["ok"]
            plain.append(time.perf_counter() - start)
        ws.close()
    return asked, plain


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cards", type=int, default=500)
    cards = parser.parse_args().cards
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "small.txt").write_text("hello\n")
        rows = {
            "bare asyncio queue hand-off": summarize(asyncio.run(_bare_handoff(cards))),
            "ask_user, embedded human": summarize(
                asyncio.run(_embedded(root, cards, "ask_user", "auto"))),
            "write, approvals auto": summarize(asyncio.run(_embedded(root, cards, "write", "auto"))),
            "write, approvals ask (allow once)": summarize(
                asyncio.run(_embedded(root, cards, "write", "ask"))),
        }
        with jupyter_server(root) as (url, token):
            asyncio.run(_over_server(url, token, 20))  # warm the server and connections
            asked, plain = asyncio.run(_over_server(url, token, cards))
        rows["ask_user over HTTP + WS human"] = summarize(asked)
        rows["read over HTTP (one request)"] = summarize(plain)
    print(f"card round trips, {cards} each")
    for name, summary in rows.items():
        print(line(name, summary))
    p50 = {name: summary["p50_ms"] for name, summary in rows.items()}
    print(f"embedded ask_user / bare hand-off p50: "
          f"{p50['ask_user, embedded human'] / p50['bare asyncio queue hand-off']:.1f}x   "
          f"permission card / ungated write p50: "
          f"{p50['write, approvals ask (allow once)'] / p50['write, approvals auto']:.1f}x   "
          f"server card / one HTTP read p50: "
          f"{p50['ask_user over HTTP + WS human'] / p50['read over HTTP (one request)']:.1f}x")


if __name__ == "__main__":
    main()
