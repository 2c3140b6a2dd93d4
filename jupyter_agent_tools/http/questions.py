"""HTTP routes for cards, and the WebSocket where a human front end joins a space."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..questions.errors import CardClosed, CardNotFound, InvalidAnswer, QuestionError
from ..questions.port import HumanFrontEnd, QuestionPort, RunQuestions
from ..runtime import ErrorCode, Resource, Run, ToolError
from ..runtime.events import EventBus
from .base import AgentToolsHandler, ApiError, Operation
from .handlers import RUN_ID, EventStreamHandler, ended_run
from .models import AnswerRequest, QuestionCard


def _questions(run: Run) -> RunQuestions | None:
    handle = run.resources.get(Resource.QUESTIONS)
    return handle if isinstance(handle, RunQuestions) else None


class QuestionsHandler(AgentToolsHandler):
    """GET the pending cards of a run (none when it has no space)."""

    agent_token_methods = frozenset({"GET"})  # answering them is the human's (QuestionHandler)

    operations: ClassVar[dict[str, Operation]] = {"get": Operation(
        "Pending question cards (an ended run's: those it left unanswered, status ended)",
        {200: list[QuestionCard]})}

    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        if run_id not in self.runtime.runs:
            await self.respond(await _ended_cards(self, run_id))
            return
        questions = _questions(self.get_run(run_id))
        cards = [] if questions is None else [card.to_json() for card in questions.pending.values()]
        await self.respond(cards)


class QuestionHandler(AgentToolsHandler):
    """POST `{answer}`, `{text}`, `{answer, text}` or `{skip: true}` to a card of this run."""

    # A worker's run token may read its cards but never answer them: no self-approval.
    run_token_methods = frozenset({"GET"})
    # 409: the card is closed already (answered, skipped, timed out or cancelled).
    operations: ClassVar[dict[str, Operation]] = {"post": Operation("Answer or skip a card (by id or number)", {200: QuestionCard},
                                    body=AnswerRequest, errors=frozenset({409}))}

    @web.authenticated
    @authorized
    async def post(self, run_id: str, qid: str) -> None:
        if run_id not in self.runtime.runs:
            await self.parse_body(AnswerRequest)
            cards = await _ended_cards(self, run_id)
            stored = next((c for c in cards if qid in (c["id"], str(c["number"]))), None)
            if stored is None:
                raise ToolError(ErrorCode.NOT_FOUND, f"Run {run_id} has no unanswered card "
                                f"{qid!r}. List its cards first.")
            ended = await ended_run(self, run_id)
            raise ApiError(409, ErrorCode.FAILED,
                           f"Card {stored['number']} can no longer be answered: its run ended "
                           f"({ended['ended_by']}) before anyone answered, and the agent that "
                           "asked is gone. Nothing to do; a new run asks again if it needs to.")
        run = self.get_run(run_id)
        request = await self.parse_body(AnswerRequest)
        questions = _questions(run)
        if questions is None:
            raise ToolError(ErrorCode.NOT_FOUND,
                            f"Run {run_id} has no space, so it has no cards.")
        try:
            if request.skip:
                card = questions.skip(qid)
            else:
                card = questions.answer(qid, request.answer, request.text)
        except QuestionError as exc:
            raise _answer_error(exc) from None
        await self.respond(card.to_json())


async def _ended_cards(handler: AgentToolsHandler, run_id: str) -> list[dict[str, Any]]:
    """The cards an ended run left unanswered, each with status ended (404: no such run)."""
    await ended_run(handler, run_id)
    assert handler.runtime.run_store is not None  # it answered
    return [{**card, "status": "ended"} for card in await handler.runtime.run_store.cards(run_id)]


def _answer_error(exc: QuestionError) -> ToolError:
    """What an answer the card refuses means to the front end that sent it."""
    match exc:
        case CardNotFound(card_id=card_id):
            return ToolError(ErrorCode.NOT_FOUND,
                             f"This run has no card {card_id!r}. List its pending cards first.")
        case CardClosed(number=number, status=status):  # 409: answered elsewhere first
            return ToolError(ErrorCode.FAILED, f"Card {number} is already {status}; nothing "
                             "to do. Refresh the pending cards.")
        case InvalidAnswer():
            return ToolError(ErrorCode.INVALID_ARGUMENTS, str(exc))
    return ToolError(ErrorCode.FAILED, str(exc))


class SpaceEventsHandler(EventStreamHandler):
    """A human front end: while this socket is open, a human is connected to the space.

    It first receives `humans` (how many are connected), then the space's pending cards
    (`question_asked` with `replay: true`), then every new card and closure; answers go over
    the questions route.
    """

    operations: ClassVar[dict[str, Operation]] = {"get": Operation(
        "WebSocket for a human front end: the cards of every run targeting the space",
        {101: None}, websocket=True)}

    def _port(self) -> QuestionPort:
        port = self.runtime.provider(Resource.QUESTIONS)
        if not isinstance(port, QuestionPort):
            raise ToolError(ErrorCode.NOT_FOUND, "This server has no question port.")
        return port

    def event_bus(self, space: str) -> EventBus:  # type: ignore[override]
        self._port()
        return self.runtime.space_bus(space)

    async def on_opened(self, space: str) -> None:  # type: ignore[override]
        port = self._port()
        # Let the pump task (scheduled just before this hook) subscribe first, so this socket
        # also hears its own `humans` event and every card from here on.
        await asyncio.sleep(0)
        self._human: HumanFrontEnd | None = await port.connect_human(space)
        for card in port.pending_cards(space):
            self.send_event({"type": "question_asked", "time": card.created_at, "replay": True,
                             "run_id": card.run_id, "space": space, "card": card.to_json()})

    def on_close(self) -> None:
        super().on_close()
        human = getattr(self, "_human", None)
        if human is not None:
            self._human = None
            human.detach()


handlers: list[tuple[str, type]] = [
    (rf"agent-tools/api/runs/{RUN_ID}/questions", QuestionsHandler),
    (rf"agent-tools/api/runs/{RUN_ID}/questions/(?P<qid>[\w.-]+)", QuestionHandler),
    (r"agent-tools/api/spaces/(?P<space>.+)/events", SpaceEventsHandler),
]
