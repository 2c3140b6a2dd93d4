"""A card: one question (or permission prompt) shown to the humans of a space, and its answer."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, TypedDict

from ..runtime.approvals import Permission
from .errors import CardClosed, InvalidAnswer


class CardKind(str, Enum):
    QUESTION = "question"
    PERMISSION = "permission"


class CardStatus(str, Enum):
    PENDING = "pending"
    ANSWERED = "answered"
    SKIPPED = "skipped"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"


class CardOption(TypedDict, total=False):
    """One choice on a card. `value` is what a permission option means to the gate."""

    label: str
    description: str
    value: str


class CardJSON(TypedDict):
    """A card as front ends receive it (HTTP, WebSocket, `HumanFrontEnd.next_card`)."""

    id: str
    number: int
    run_id: str
    space: str
    kind: str
    question: str
    context: str
    options: list[CardOption]
    allow_free_text: bool
    multi_select: bool
    tool: str | None
    tier: str | None
    label: str | None
    args: dict[str, Any] | None
    status: str
    answer: str | list[str] | None
    text: str | None
    created_at: float


PERMISSION_OPTIONS: list[CardOption] = [
    {"label": "Allow once", "value": Permission.ALLOW_ONCE.value,
     "description": "Run this call; ask again next time."},
    {"label": "Allow this tool for this run", "value": Permission.ALLOW_RUN.value,
     "description": "Run this call and every later call of this tool in this run."},
    {"label": "Deny", "value": Permission.DENY.value,
     "description": "Do not run it; the agent is told you said no."},
]


@dataclass
class Card:
    """A pending or closed card. Resolved exactly once: answered, skipped, timed out or cancelled."""

    number: int
    run_id: str
    space: str
    kind: CardKind
    question: str
    context: str = ""
    options: list[CardOption] = field(default_factory=list)
    allow_free_text: bool = False
    multi_select: bool = False
    tool: str | None = None
    tier: str | None = None
    label: str | None = None
    args: dict[str, Any] | None = None
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    created_at: float = field(default_factory=time.time)
    status: CardStatus = CardStatus.PENDING
    answer: str | list[str] | None = None
    text: str | None = None
    closed: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    def __post_init__(self) -> None:
        # A question without options can only be answered in words.
        if not self.options:
            self.allow_free_text = True

    @property
    def labels(self) -> list[str]:
        return [option["label"] for option in self.options]

    @property
    def selected(self) -> list[str]:
        """The chosen labels, whatever `multi_select` is."""
        if self.answer is None:
            return []
        return list(self.answer) if isinstance(self.answer, list) else [self.answer]

    def permission(self) -> Permission:
        """What a closed permission card means to the approval gate (skip means deny)."""
        if self.status is CardStatus.ANSWERED:
            for option in self.options:
                if option["label"] == self.answer:
                    return Permission(option["value"])
        return Permission.DENY

    def resolve(self, answer: Any = None, text: str | None = None) -> None:
        """Record a human's answer; InvalidAnswer when it does not fit the card."""
        self._check_open()
        chosen = self._chosen_labels(answer)
        text = text.strip() if isinstance(text, str) else None
        if text and not self.allow_free_text:
            raise InvalidAnswer(f"Card {self.number} takes no free text; choose one of "
                                f"{self.labels}.")
        if not chosen and not text:
            hint = f"choose one of {self.labels}" if self.options else "type an answer"
            raise InvalidAnswer(f"The answer to card {self.number} is empty: {hint}, or skip it.")
        self.answer = chosen if self.multi_select else (chosen[0] if chosen else None)
        self.text = text or None
        self.close(CardStatus.ANSWERED)

    def skip(self) -> None:
        self._check_open()
        self.close(CardStatus.SKIPPED)

    def close(self, status: CardStatus) -> None:
        if self.status is CardStatus.PENDING:
            self.status = status
            self.closed.set()

    def _check_open(self) -> None:
        if self.status is not CardStatus.PENDING:
            raise CardClosed(self.number, self.status.value)

    def _chosen_labels(self, answer: Any) -> list[str]:
        if answer is None or answer == "" or answer == []:
            return []
        values = answer if isinstance(answer, list) else [answer]
        if not all(isinstance(v, str) for v in values):
            raise InvalidAnswer("answer must be an option label or a list of labels.")
        if len(values) > 1 and not self.multi_select:
            raise InvalidAnswer(f"Card {self.number} takes a single choice; pick one of "
                                f"{self.labels}.")
        by_value = {option.get("value"): option["label"] for option in self.options}
        chosen = []
        for value in values:
            label = value if value in self.labels else by_value.get(value)
            if label is None:
                raise InvalidAnswer(f"{value!r} is not an option of card {self.number}; "
                                    f"choose from {self.labels}.")
            if label not in chosen:
                chosen.append(label)
        return chosen

    def to_json(self) -> CardJSON:
        return {
            "id": self.id,
            "number": self.number,
            "run_id": self.run_id,
            "space": self.space,
            "kind": self.kind.value,
            "question": self.question,
            "context": self.context,
            "options": [dict(option) for option in self.options],  # type: ignore[misc]
            "allow_free_text": self.allow_free_text,
            "multi_select": self.multi_select,
            "tool": self.tool,
            "tier": self.tier,
            "label": self.label,
            "args": self.args,
            "status": self.status.value,
            "answer": self.answer,
            "text": self.text,
            "created_at": self.created_at,
        }
