"""Human in the loop: question and permission cards, the humans of a space, their answers."""

from .cards import Card, CardJSON, CardKind, CardOption, CardStatus
from .errors import (
    CardClosed,
    CardNotFound,
    CardTimedOut,
    FrontEndClosed,
    InvalidAnswer,
    NoHuman,
    QuestionError,
    TooManyOpenCards,
)
from .port import HumanFrontEnd, QuestionLimits, QuestionPort, RunQuestions

__all__ = [
    "Card", "CardClosed", "CardJSON", "CardKind", "CardNotFound", "CardOption", "CardStatus",
    "CardTimedOut", "FrontEndClosed", "HumanFrontEnd", "InvalidAnswer", "NoHuman",
    "QuestionError", "QuestionLimits", "QuestionPort", "RunQuestions", "TooManyOpenCards",
]
