"""ask_user: the agent's one way to ask the human (registered when the run has a space)."""

from __future__ import annotations

from pydantic import Field, model_validator

from ..questions import (
    CardOption,
    CardStatus,
    CardTimedOut,
    NoHuman,
    QuestionError,
    RunQuestions,
    TooManyOpenCards,
)
from ..runtime import CallContext, ErrorCode, Resource, Tier, Tool, ToolArgs, ToolError, ToolResult
from ..runtime.approvals import too_many_open
from .outputs import AskUserOutput


class AskOption(ToolArgs):
    label: str = Field(min_length=1, max_length=200, description="What the button says.")
    description: str | None = Field(None, max_length=1000, description="What choosing it means.")


class AskUserArgs(ToolArgs):
    question: str = Field(min_length=1, max_length=2000, description="One clear question.")
    context: str | None = Field(
        None, max_length=4000,
        description="Why you ask, what depends on the answer, and the assumption you will "
        "proceed on if the user skips.",
    )
    options: list[AskOption] = Field(
        default_factory=list, max_length=20,
        description="Choices shown as buttons. Without options the user types an answer.",
    )
    allow_free_text: bool = Field(False, description="Also offer a text box beside the options.")
    multi_select: bool = Field(False, description="Let the user tick several options.")

    @model_validator(mode="after")
    def _distinct_labels(self) -> AskUserArgs:
        labels = [option.label for option in self.options]
        if len(set(labels)) != len(labels):
            raise ValueError("option labels must be distinct")
        if self.multi_select and not self.options:
            raise ValueError("multi_select needs options")
        return self


class AskUser(Tool):
    name = "ask_user"
    tier = Tier.READ
    requires = frozenset({Resource.QUESTIONS, Resource.SPACE})
    description = (
        "Ask the human a question and wait for the answer. This is the only way to ask the "
        "human anything: they do not read your messages while you work. Offer options when "
        "you can, and say in `context` what you will assume if they skip. A skipped question "
        "means: proceed on your stated assumption and do not ask it again. Fails at once with "
        "no_human when nobody is watching."
    )
    Args = AskUserArgs
    Output = AskUserOutput

    def label(self, args: AskUserArgs) -> str:
        return f"ask_user {args.question[:60]}"

    async def call(self, ctx: CallContext, args: AskUserArgs) -> ToolResult:
        questions: RunQuestions = ctx.run.resources[Resource.QUESTIONS]
        earlier = questions.skipped_card(args.question)
        if earlier is not None:
            return _skipped(earlier, again=True)
        try:
            card = await questions.ask(
                args.question, context=args.context or "",
                options=[_card_option(option) for option in args.options],
                allow_free_text=args.allow_free_text, multi_select=args.multi_select,
            )
        except QuestionError as exc:
            raise _tool_error(exc) from None
        if card.status is CardStatus.SKIPPED:
            return _skipped(card.number)
        if card.status is not CardStatus.ANSWERED:
            raise ToolError(ErrorCode.UNAVAILABLE,
                            f"Card {card.number} was {card.status.value} (the run is closing). "
                            "Stop here.")
        parts = []
        if card.selected:
            parts.append("The user chose: " + ", ".join(card.selected))
        if card.text:
            parts.append(f"The user wrote: {card.text}")
        return ToolResult.success(
            "\n".join(parts),
            {"card": card.number, "card_id": card.id, "status": card.status.value,
             "answer": card.answer, "selected": card.selected, "text": card.text},
        )


def _tool_error(exc: QuestionError) -> ToolError:
    """What a question that got no answer means to the agent: its code and what to do next."""
    match exc:
        case NoHuman(space=space):
            return ToolError(ErrorCode.NO_HUMAN,
                             f"Nobody is connected to space {space!r} to ask the user. Continue "
                             "on your stated assumption, or tell the user to open the agent "
                             "panel there (notebook: jupyter_agent_tools.notebook.open_panel()) "
                             "and ask again.")
        case TooManyOpenCards():
            return too_many_open(exc)
        case CardTimedOut(card_number=number, card_id=card_id, status=status,
                          timeout_seconds=timeout):
            return ToolError(ErrorCode.TIMEOUT,
                             f"Nobody answered card {number} within {timeout:g} s. Continue on "
                             "your stated assumption and do not ask this again.",
                             data={"card": number, "card_id": card_id, "status": status})
    return ToolError(ErrorCode.UNAVAILABLE, f"The question could not be asked: {exc}. Continue "
                     "on your stated assumption.")


def _card_option(option: AskOption) -> CardOption:
    card_option = CardOption(label=option.label)
    if option.description is not None:
        card_option["description"] = option.description
    return card_option


def _skipped(number: int, again: bool = False) -> ToolResult:
    already = " You asked this already (card {number}) and it was skipped." if again else ""
    return ToolResult.success(
        f"The user skipped card {number}.{already.format(number=number)} Continue on your stated "
        "assumption and do not ask this again.",
        {"card": number, "status": "skipped", "repeated": again, "answer": None, "selected": [],
         "text": None},
    )
