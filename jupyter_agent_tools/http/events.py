"""The events on the WebSockets, one model per kind (`type` tells which).

The runtime and the resources publish plain dicts on their buses (they know nothing of HTTP);
these models are the wire format: the sockets send each event through `AnyEvent`, and the
OpenAPI document lists every kind under components/schemas.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from .models import QuestionCard, ResponseModel, WorkerDescriptor


class Event(ResponseModel):
    time: float = Field(description="When it was published (seconds since the epoch).")


class RunEvent(Event):
    run_id: str


class CallStarted(RunEvent):
    """A call entered the dispatch path."""

    type: Literal["call_started"]
    call_id: str
    tool: str
    label: str
    origin: str


class CallFinished(RunEvent):
    """A call ended; its result is in the HTTP answer and the transcript."""

    type: Literal["call_finished"]
    call_id: str
    tool: str
    label: str
    origin: str
    ok: bool
    error_code: str | None
    duration_ms: float | None


class RunClosed(RunEvent):
    """The run was closed; the socket sends nothing more of it."""

    type: Literal["run_closed"]


class EditStaged(RunEvent):
    """`ast_edit` staged a rewrite, or `lsp` a language server's edit (see
    `GET runs/{id}/edits/{edit_id}`)."""

    type: Literal["edit_staged"]
    edit_id: str
    files: list[str]
    counts: dict[str, int]
    replacements: int


class EditResolved(RunEvent):
    """A staged edit was accepted, discarded, or found stale."""

    type: Literal["edit_resolved"]
    edit_id: str
    action: Literal["accepted", "discarded", "stale"]
    files: list[str]
    counts: dict[str, int]
    replacements: int


class LspProgress(RunEvent):
    """A step of a project-wide check (`lsp diagnostics` on '*')."""

    type: Literal["lsp_progress"]
    call_id: str
    check: str
    step: int
    of: int
    state: Literal["started", "done"]


class CardEvent(RunEvent):
    space: str
    card: QuestionCard


class QuestionAsked(CardEvent):
    """A card waits for a human; `replay` marks a pending card sent to a socket that joined late."""

    type: Literal["question_asked"]
    replay: bool = False


class QuestionClosed(CardEvent):
    """A card was answered, skipped, timed out or cancelled."""

    type: Literal["question_closed"]


class Humans(Event):
    """How many human front ends are connected to a space (space sockets only)."""

    type: Literal["humans"]
    space: str
    humans: int


class WorkerState(RunEvent, WorkerDescriptor):
    """A background worker (vibe mode) changed state (`GET runs/{id}/workers` lists them)."""

    type: Literal["worker_state"]


EVENT_MODELS: tuple[type[Event], ...] = (
    CallStarted, CallFinished, RunClosed, EditStaged, EditResolved, LspProgress,
    QuestionAsked, QuestionClosed, Humans, WorkerState,
)

AnyEvent = Annotated[
    CallStarted | CallFinished | RunClosed | EditStaged | EditResolved | LspProgress
    | QuestionAsked | QuestionClosed | Humans | WorkerState,
    Field(discriminator="type"),
]
EVENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(AnyEvent)
