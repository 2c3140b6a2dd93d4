"""The question port: cards shown to the humans connected to a run's space, and their answers.

A run gets the port only when it has a target space (`create_run(space=...)`). Human front
ends (the notebook panel, the JupyterLab panel, any WebSocket client, `Runtime.connect_human`)
connect to a space; a card of any run targeting that space is shown to all of them and the
first answer wins. With nobody connected, asking fails at once with `no_human`.
"""

from __future__ import annotations

import asyncio
import re
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from traitlets import Float, Int

from ..runtime.approvals import Permission
from ..runtime.config import RenamedConfig, renamed_to
from ..runtime.resources import ResourceProvider
from ..runtime.tool import Resource
from .cards import PERMISSION_OPTIONS, Card, CardJSON, CardKind, CardOption, CardStatus
from .errors import CardNotFound, CardTimedOut, FrontEndClosed, NoHuman, TooManyOpenCards

if TYPE_CHECKING:
    from ..runtime.run import Run, RunOptions
    from ..runtime.tiers import Tier
    from ..runtime.tool import Tool


def _question_key(question: str) -> str:
    """Questions that differ only in case, spacing or final punctuation are the same question."""
    return re.sub(r"\s+", " ", question).strip().rstrip("?.!").casefold()


@dataclass(frozen=True)
class QuestionLimits:
    """The bounds a run's cards live within (the port's config)."""

    timeout_seconds: float
    max_pending_per_run: int
    max_closed_cards: int


class QuestionPort(RenamedConfig, ResourceProvider):
    """Shows cards to the humans of a space and waits for their answers."""

    resource = Resource.QUESTIONS

    timeout_seconds = Float(
        600.0, help="How long a question or permission card waits for an answer before the "
        "call fails with `timeout`.",
    ).tag(config=True)
    max_pending_per_run = Int(
        20, help="Most cards one run may have open at once; asking more is refused.",
    ).tag(config=True)
    max_closed_cards = Int(
        50, help="Answered cards remembered per run, so a late second answer gets a clear 409.",
    ).tag(config=True)
    closed_cards_kept = renamed_to("max_closed_cards", Int)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._humans: dict[str, set[HumanFrontEnd]] = {}

    # -- ResourceProvider -----------------------------------------------------------------

    def attaches(self, options: RunOptions) -> bool:
        """Cards go to a space: a run without one gets no questions."""
        return bool(options.space)

    def attach(self, run: Run, options: RunOptions) -> RunQuestions | None:
        if not self.attaches(options) or not options.space:
            return None
        limits = QuestionLimits(timeout_seconds=self.timeout_seconds,
                                max_pending_per_run=self.max_pending_per_run,
                                max_closed_cards=self.max_closed_cards)
        return RunQuestions(self, limits, run, options.space)

    async def release(self, run: Run, handle: RunQuestions) -> None:  # noqa: ARG002 - interface
        handle.cancel_all()

    async def status(self) -> dict[str, Any]:
        return {
            "available": True,
            "timeout_seconds": self.timeout_seconds,
            "humans": {space: len(humans) for space, humans in self._humans.items() if humans},
        }

    # -- humans ---------------------------------------------------------------------------

    async def connect_human(self, space: str, run_id: str | None = None) -> HumanFrontEnd:
        """Declare a human front end on `space`; it sees the space's pending and new cards.

        With `run_id` it is the human of that one run only (an MCP client answering its own
        session's cards): it sees and counts for no other run of the space.
        """
        human = HumanFrontEnd(self, space, run_id)
        self._humans.setdefault(space, set()).add(human)
        self._announce_humans(space)
        return human

    def disconnect(self, human: HumanFrontEnd) -> None:
        humans = self._humans.get(human.space, set())
        if human in humans:
            humans.discard(human)
            self._announce_humans(human.space)

    def humans(self, space: str, run_id: str | None = None) -> int:
        """How many human front ends are connected to `space` (for `run_id`'s cards, if given)."""
        return sum(1 for human in self._humans.get(space, ())
                   if human.run_id is None or human.run_id == run_id)

    def _announce_humans(self, space: str) -> None:
        self.runtime.space_bus(space).publish("humans", space=space, humans=self.humans(space))

    # -- cards across the runs of a space ---------------------------------------------------

    def handles(self, space: str) -> list[RunQuestions]:
        return [
            handle for run in list(self.runtime.runs.values())
            if isinstance(handle := run.resources.get(Resource.QUESTIONS), RunQuestions)
            and handle.space == space
        ]

    def pending_cards(self, space: str) -> list[Card]:
        """Open cards of every run targeting `space`, oldest first."""
        cards = [card for handle in self.handles(space) for card in handle.pending.values()]
        return sorted(cards, key=lambda card: card.created_at)

    def find_in_space(self, space: str, card_id: str) -> RunQuestions:
        """The run handle owning card `card_id` in `space`; not_found for any other space."""
        for handle in self.handles(space):
            if handle.knows(card_id):
                return handle
        raise CardNotFound(card_id, space)

    def publish_card(self, type_: str, card: Card, run: Run) -> None:
        """Announce a card on its run's stream and its space's, and wake the space's humans."""
        payload = card.to_json()
        run.events.publish(type_, run_id=card.run_id, space=card.space, card=payload)
        self.runtime.space_bus(card.space).publish(type_, run_id=card.run_id, space=card.space,
                                                   card=payload)
        for human in list(self._humans.get(card.space, ())):
            human.wake()


class RunQuestions:
    """A run's cards: numbering, the open ones, recent answers, and skipped questions."""

    def __init__(self, port: QuestionPort, limits: QuestionLimits, run: Run, space: str) -> None:
        self.port = port
        self.limits = limits
        self.run = run
        self.space = space
        self.pending: dict[str, Card] = {}
        self._closed: deque[Card] = deque(maxlen=max(1, limits.max_closed_cards))
        self._count = 0
        self._skipped: dict[str, int] = {}

    async def ask(self, question: str, context: str = "", options: list[CardOption] | None = None,
                  allow_free_text: bool = False, multi_select: bool = False) -> Card:
        """Show a question card and wait; a skip is recorded so asking again returns it."""
        card = await self._show(CardKind.QUESTION, question=question, context=context,
                                options=list(options or []), allow_free_text=allow_free_text,
                                multi_select=multi_select)
        if card.status is CardStatus.SKIPPED:
            self._skipped[_question_key(question)] = card.number
        return card

    def skipped_card(self, question: str) -> int | None:
        """The number of the card where this same question was skipped, if it was."""
        return self._skipped.get(_question_key(question))

    async def request_permission(self, run: Run, tool: Tool, args: dict[str, Any],
                                 parsed: Any, tier: Tier) -> Permission:
        """Show a permission card with the call in full; the gate acts on the choice."""
        label = tool.label(parsed)
        context = tool.approval_context(run, parsed)
        card = await self._show(
            CardKind.PERMISSION, question=f"Allow {tool.name} ({tier.value} tier)?",
            context=context, options=[CardOption(**o) for o in PERMISSION_OPTIONS],
            tool=tool.name, tier=tier.value, label=label, args=args,
        )
        return card.permission()

    async def _show(self, kind: CardKind, **fields: Any) -> Card:
        if self.port.humans(self.space, self.run.id) == 0:
            raise NoHuman(self.space)
        if len(self.pending) >= self.limits.max_pending_per_run:
            raise TooManyOpenCards(len(self.pending))
        self._count += 1
        card = Card(number=self._count, run_id=self.run.id, space=self.space, kind=kind, **fields)
        self.pending[card.id] = card
        # Kept in the run store while unanswered: after a restart it shows as ended.
        self.run.record.card_opened(card.id, card.created_at, dict(card.to_json()))
        self.port.publish_card("question_asked", card, self.run)
        timeout = self.limits.timeout_seconds
        try:
            await asyncio.wait_for(card.closed.wait(), timeout)
        except asyncio.TimeoutError:
            card.close(CardStatus.TIMED_OUT)
        finally:
            card.close(CardStatus.CANCELLED)  # no-op unless the wait itself was cancelled
            self.pending.pop(card.id, None)
            if not self.run.closed:  # a card its run's end cut short stays: shown as ended
                self.run.record.card_closed(card.id)
            self._closed.append(card)
            self.port.publish_card("question_closed", card, self.run)
        if card.status is CardStatus.TIMED_OUT:
            raise CardTimedOut(card.number, card.id, card.status.value, timeout)
        return card

    # -- answering (by card id, or by its number within this run) -----------------------------

    def knows(self, qid: str) -> bool:
        return any(card.id == qid for card in self.pending.values()) or any(
            card.id == qid for card in self._closed)

    def find(self, qid: str) -> Card:
        for cards in (self.pending.values(), reversed(self._closed)):
            for card in cards:
                if qid in (card.id, str(card.number)):
                    return card
        raise CardNotFound(qid)

    def answer(self, qid: str, answer: Any = None, text: str | None = None) -> Card:
        card = self.find(qid)
        card.resolve(answer, text)
        return card

    def skip(self, qid: str) -> Card:
        card = self.find(qid)
        card.skip()
        return card

    def cancel_all(self) -> None:
        for card in list(self.pending.values()):
            card.close(CardStatus.CANCELLED)


class HumanFrontEnd:
    """A human connected to a space: sees its cards, answers or skips them (CONTRACT.md)."""

    def __init__(self, port: QuestionPort, space: str, run_id: str | None = None) -> None:
        self.port = port
        self.space = space
        self.run_id = run_id
        self.closed = False
        self._seen: set[str] = set()
        self._wakeup = asyncio.Event()

    def wake(self) -> None:
        self._wakeup.set()

    async def next_card(self, timeout: float | None = None) -> CardJSON:
        """The oldest pending card of the space not yet returned here; waits for one.

        Raises TimeoutError after `timeout` seconds (None: until the next card).
        """
        async def first_unseen() -> CardJSON:
            while not self.closed:
                self._wakeup.clear()
                pending = self._cards()
                self._seen &= {card.id for card in pending}
                for card in pending:
                    if card.id not in self._seen:
                        self._seen.add(card.id)
                        return card.to_json()
                await self._wakeup.wait()
            raise FrontEndClosed()

        return await asyncio.wait_for(first_unseen(), timeout)

    def pending(self) -> list[CardJSON]:
        """Every pending card of the space, oldest first."""
        return [card.to_json() for card in self._cards()]

    def _cards(self) -> list[Card]:
        cards = self.port.pending_cards(self.space)
        if self.run_id is None:
            return cards
        return [card for card in cards if card.run_id == self.run_id]

    async def answer(self, card_id: str, answer: Any = None, text: str | None = None) -> CardJSON:
        """Answer with a label (`answer="a"`), labels (`answer=["a", "b"]`) and/or `text`."""
        return self.port.find_in_space(self.space, card_id).answer(card_id, answer, text).to_json()

    async def skip(self, card_id: str) -> CardJSON:
        return self.port.find_in_space(self.space, card_id).skip(card_id).to_json()

    async def close(self) -> None:
        """Disconnect: from now on this human no longer counts as present."""
        self.detach()

    def detach(self) -> None:
        """`close` for synchronous callers (a WebSocket's on_close)."""
        self.closed = True
        self._wakeup.set()
        self.port.disconnect(self)

    async def __aenter__(self) -> HumanFrontEnd:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
