"""What the panel's buttons do, declared: the actions a link implements and what they return."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..questions.cards import CardJSON


class Outcome(Protocol):
    """What an action returns: a concurrent.futures.Future, or an asyncio Future or Task."""

    def add_done_callback(self, fn: Callable[[Any], object], /) -> None: ...

    def exception(self) -> BaseException | None: ...

    def result(self) -> Any: ...


class PanelActions(Protocol):
    """What the panel's buttons do; each returns an Outcome, done once the answer is in."""

    def answer(self, card: CardJSON, answer: Any, text: str | None) -> Outcome: ...

    def skip(self, card: CardJSON) -> Outcome: ...

    def resolve(self, edit_id: str, action: str) -> Outcome: ...


def outcome_error(outcome: Outcome) -> BaseException | None:
    """The action's error once it is done, a cancellation included."""
    try:
        return outcome.exception()
    except BaseException as exc:  # noqa: BLE001 - a cancelled asyncio task raises instead of returning
        return exc
