"""What can go wrong with cards and their answers, as plain facts.

The tools (`ask_user`), the approval gate and the HTTP routes word them for their reader.
The three ways a card goes unanswered are also the approval gate's own
`PermissionUnanswered` family (runtime/approvals.py), so the gate understands them without
knowing this package.
"""

from __future__ import annotations

from ..runtime.approvals import NoAnswerInTime, NobodyToAsk, PermissionUnanswered, TooManyOpen


class QuestionError(Exception):
    """Base class of the question port's errors."""


# -- a card that gets no answer ----------------------------------------------------------


class NoHuman(QuestionError, NobodyToAsk):
    """Nobody is connected to the space (for this run's cards) to show the card to."""


class TooManyOpenCards(QuestionError, TooManyOpen):
    """The run has its limit of open cards."""


class CardTimedOut(QuestionError, NoAnswerInTime):
    """Nobody answered the card in time."""


# -- answering ---------------------------------------------------------------------------


class CardNotFound(QuestionError):
    """No card `card_id` in `space` (or, with `space` None, in this run)."""

    def __init__(self, card_id: str, space: str | None = None) -> None:
        super().__init__(f"No card {card_id!r} in space {space!r}" if space is not None
                         else f"This run has no card {card_id!r}")
        self.card_id = card_id
        self.space = space


class CardClosed(QuestionError):
    """The card was answered, skipped, timed out or cancelled already."""

    def __init__(self, number: int, status: str) -> None:
        super().__init__(f"Card {number} is already {status}")
        self.number = number
        self.status = status


class InvalidAnswer(QuestionError):
    """An answer that does not fit its card; the message says how (for the human)."""


class FrontEndClosed(QuestionError):
    """A human front end was asked for a card after it closed."""

    def __init__(self) -> None:
        super().__init__("This front end is closed")


__all__ = [
    "CardClosed", "CardNotFound", "CardTimedOut", "FrontEndClosed", "InvalidAnswer", "NoHuman",
    "PermissionUnanswered", "QuestionError", "TooManyOpenCards",
]
