"""`ScriptedHuman`: a human front end that answers a space's cards by script, for tests.

It joins the space over the same WebSocket the panels use (so `ask_user` finds a human) and
answers over the questions route, on a thread of its own: the cell that called `ask_user`
may block while it answers.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import quote

import websocket

from ..client import AgentToolsClient

#: An answer: an option label, a list of labels, or a body for the questions route
#: ({"answer": ..., "text": ...} or {"skip": true}); None picks the first option.
Answer = str | list[str] | dict[str, Any] | None


class ScriptedHuman:
    """Use as a context manager: connected on entry, gone on exit; `cards` lists what it saw."""

    def __init__(self, client: AgentToolsClient, space: str,
                 answers: Iterable[Answer] | Callable[[dict[str, Any]], Answer] = (),
                 timeout: float = 30.0) -> None:
        self.client = client
        self.space = space
        self.timeout = timeout
        self._decide = answers if callable(answers) else _in_order(list(answers))
        self.cards: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self._socket: websocket.WebSocket | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> ScriptedHuman:
        url = self.client.url.replace("http", "ws", 1)
        self._socket = websocket.create_connection(
            f"{url}agent-tools/api/spaces/{quote(self.space, safe='')}/events",
            header=[f"Authorization: token {self.client.token}"], timeout=self.timeout,
        )
        backlog = []
        while True:  # the server counts this human before it announces `humans`
            event = json.loads(self._socket.recv())
            if event.get("type") == "humans":
                break
            backlog.append(event)
        self._socket.settimeout(None)
        self._thread = threading.Thread(target=self._serve, args=(backlog,), daemon=True,
                                        name=f"scripted-human-{self.space}")
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._socket is not None:
            self._socket.close()
        if self._thread is not None:
            self._thread.join(self.timeout)

    def _serve(self, backlog: list[dict[str, Any]]) -> None:
        for event in backlog:
            self._handle(event)
        assert self._socket is not None
        while True:
            try:
                event = json.loads(self._socket.recv())
            except (websocket.WebSocketException, OSError, ValueError):
                return  # closed by __exit__ or by the server
            self._handle(event)

    def _handle(self, event: dict[str, Any]) -> None:
        if event.get("type") != "question_asked":
            return
        card = event["card"]
        self.cards.append(card)
        body = _body(card, self._decide(card))
        try:
            self.client.request("POST", f"runs/{card['run_id']}/questions/{card['id']}", body)
        except Exception as exc:  # noqa: BLE001 — recorded for the test to assert on
            self.errors.append(f"card {card.get('number')}: {exc}")


def _in_order(answers: list[Answer]) -> Callable[[dict[str, Any]], Answer]:
    remaining = list(answers)
    return lambda _card: remaining.pop(0) if remaining else None


def _body(card: dict[str, Any], answer: Answer) -> dict[str, Any]:
    if isinstance(answer, dict):
        return answer
    if answer is not None:
        return {"answer": answer}
    options = card.get("options") or []
    return {"answer": options[0]["label"]} if options else {"text": "ok"}
