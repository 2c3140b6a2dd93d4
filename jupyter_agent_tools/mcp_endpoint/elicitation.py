"""Cards put to an MCP client's own user through MCP elicitation.

When the client declared the elicitation capability, its session connects a human front end
for its run alone (`QuestionPort.connect_human(space, run_id=…)`): the run's cards go to that
front end as `elicitation/create` requests — options as an enum, free text as a string — and
the answers come back through it like a panel's. Decline or cancel is a skip. A card that
times out (or is answered in the JupyterLab panel first) withdraws its request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ..questions import CardJSON, CardStatus, HumanFrontEnd, QuestionError, RunQuestions
from .sdk import types

#: Sends one elicitation request to the client (on the right channel) and returns its answer.
Elicit = Callable[[str, dict[str, Any]], Awaitable[types.ElicitResult]]


def card_message(card: CardJSON) -> str:
    """What the client shows above the form: the question and why it is asked."""
    parts = [f"[card {card['number']}] {card['question']}"]
    if card.get("context"):
        parts.append(card["context"])
    return "\n\n".join(parts)


def card_schema(card: CardJSON) -> dict[str, Any]:
    """The form of a card: `answer` (an enum of the option labels) and/or `text` (a string)."""
    labels = [option["label"] for option in card["options"]]
    properties: dict[str, Any] = {}
    required: list[str] = []
    if labels:
        described = "; ".join(f"{o['label']}: {o['description']}" for o in card["options"]
                              if o.get("description"))
        choice: dict[str, Any] = {"type": "string", "title": "Choose", "enum": labels}
        if card["multi_select"]:
            choice = {"type": "array", "title": "Choose any", "items": {"type": "string",
                                                                        "enum": labels}}
        if described:
            choice["description"] = described
        properties["answer"] = choice
        if not card["allow_free_text"]:
            required.append("answer")
    if card["allow_free_text"]:
        properties["text"] = {"type": "string", "title": "Your answer" if not labels else "Or write"}
        if not labels:
            required.append("text")
    return {"type": "object", "properties": properties, "required": required}


class CardElicitor:
    """Pumps one run's cards to its MCP client until closed."""

    def __init__(self, human: HumanFrontEnd, questions: RunQuestions, elicit: Elicit,
                 log: logging.Logger) -> None:
        self.human = human
        self.questions = questions
        self.elicit = elicit
        self.log = log
        self._pump: asyncio.Task[None] | None = None
        self._puts: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        self._pump = asyncio.ensure_future(self._next_cards())

    async def close(self) -> None:
        self.human.detach()
        tasks = [task for task in (self._pump, *self._puts) if task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _next_cards(self) -> None:
        while not self.human.closed:
            try:
                card = await self.human.next_card()
            except QuestionError:  # the front end closed
                return
            # One task per card: a slow answer must not hold the run's other cards back.
            task = asyncio.ensure_future(self._put(card))
            self._puts.add(task)
            task.add_done_callback(self._puts.discard)

    async def _put(self, card: CardJSON) -> None:
        closed = self.questions.find(card["id"]).closed
        request = asyncio.ensure_future(self.elicit(card_message(card), card_schema(card)))
        withdrawn = asyncio.ensure_future(closed.wait())
        try:
            await asyncio.wait({request, withdrawn}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            withdrawn.cancel()
            if not request.done():
                request.cancel()  # timed out, or answered elsewhere first
        if not request.done() or request.cancelled() or closed.is_set():
            return
        try:
            result = request.result()
        except Exception as exc:  # noqa: BLE001 - the card stays open: the panel may answer, or it times out
            self.log.info("agent-tools mcp: elicitation for card %s failed: %s", card["id"], exc)
            return
        await self._apply(card, result)

    async def _apply(self, card: CardJSON, result: types.ElicitResult) -> None:
        content = result.content or {}
        try:
            if result.action == "accept":
                text = content.get("text")  # the form's schema makes it a string
                await self.human.answer(card["id"], answer=content.get("answer"),
                                        text=text if isinstance(text, str) and text else None)
            else:  # decline or cancel: the user chose not to answer
                await self.human.skip(card["id"])
        except QuestionError as error:
            # An answer that does not fit the card (or one that came too late) counts as a skip
            # so the agent is not left waiting for a form the user already closed.
            self.log.info("agent-tools mcp: card %s: %s", card["id"], error)
            if self.questions.find(card["id"]).status is CardStatus.PENDING:
                await self.human.skip(card["id"])
