"""Human in the loop: question and permission cards, the humans of a space, their answers."""

from .cards import Card, CardJSON, CardKind, CardOption, CardStatus
from .port import HumanFrontEnd, QuestionPort, RunQuestions

__all__ = [
    "Card", "CardJSON", "CardKind", "CardOption", "CardStatus", "HumanFrontEnd", "QuestionPort",
    "RunQuestions",
]
