"""The approval gate: which write and exec calls may proceed, and who is asked."""

from __future__ import annotations

from enum import Enum
from typing import Any, Protocol

from .protocols import Resource, RunView
from .results import ErrorCode, ToolError
from .tiers import Approvals, Tier
from .tool import Tool


class Permission(str, Enum):
    ALLOW_ONCE = "allow_once"
    ALLOW_RUN = "allow_run"
    DENY = "deny"


class PermissionAsker(Protocol):
    """What the question port offers the gate (delivered by the questions resource)."""

    async def request_permission(self, run: RunView, tool: Tool, args: dict[str, Any],
                                 parsed: Any, tier: Tier) -> Permission:
        """Show a permission card in the run's space and wait for the human's choice of a call
        of `tier` (`args` as given, `parsed` as the tool validated and prepared them).

        Raises a PermissionUnanswered when the card gets no answer.
        """
        ...


class PermissionUnanswered(Exception):
    """Raised by a PermissionAsker (as plain facts) when a card gets no answer."""


class NobodyToAsk(PermissionUnanswered):
    def __init__(self, space: str) -> None:
        super().__init__(f"nobody is connected to space {space!r}")
        self.space = space


class TooManyOpen(PermissionUnanswered):
    def __init__(self, open_cards: int) -> None:
        super().__init__(f"{open_cards} cards of this run are still open")
        self.open_cards = open_cards


class NoAnswerInTime(PermissionUnanswered):
    def __init__(self, card_number: int, card_id: str, status: str,
                 timeout_seconds: float) -> None:
        super().__init__(f"nobody answered card {card_number} within {timeout_seconds:g} s")
        self.card_number = card_number
        self.card_id = card_id
        self.status = status
        self.timeout_seconds = timeout_seconds


class ApprovalGate:
    """Per-run approval state: the policy plus the tools allowed for the rest of the run."""

    def __init__(self, policy: Approvals) -> None:
        self.policy = policy
        # (tool, tier) allowed for the rest of the run: allowing a notebook's cell changes
        # does not allow running its cells.
        self.allowed_for_run: set[tuple[str, Tier]] = set()

    def passes_unasked(self, tool: Tool, tier: Tier) -> bool:
        """Whether a call of `tool` at `tier` proceeds without a card or a refusal."""
        return (tier is Tier.READ or self.policy is Approvals.AUTO
                or (self.policy is Approvals.ASK and (tool.name, tier) in self.allowed_for_run))

    async def check(self, run: RunView, tool: Tool, args: dict[str, Any], parsed: Any,
                    tier: Tier) -> None:
        """Return when a call of `tool` at `tier` may proceed; raise
        ToolError(permission_denied | no_human)."""
        if tier is Tier.READ or self.policy is Approvals.AUTO:
            return
        if self.policy is Approvals.DENY:
            raise ToolError(
                ErrorCode.PERMISSION_DENIED,
                f"{tool.name} is a {tier.value}-tier call and this run's approvals are "
                "'deny'. Use read-tier tools, or ask the user to start a run with approvals "
                "'ask' or 'auto'.",
            )
        if (tool.name, tier) in self.allowed_for_run:
            return
        asker: PermissionAsker | None = run.resources.get(Resource.QUESTIONS)
        if asker is None or Resource.SPACE not in run.resources:
            raise ToolError(
                ErrorCode.PERMISSION_DENIED,
                f"{tool.name} needs approval (this run's approvals are 'ask') but the run has no "
                "question port with a target space to ask in. Create the run with a `space` "
                "where a human is connected, or with approvals 'auto'.",
            )
        try:
            answer = await asker.request_permission(run, tool, args, parsed, tier)
        except PermissionUnanswered as exc:
            raise _unanswered(exc, tool.name) from None
        if answer is Permission.ALLOW_RUN:
            self.allowed_for_run.add((tool.name, tier))
        elif answer is not Permission.ALLOW_ONCE:
            raise ToolError(
                ErrorCode.PERMISSION_DENIED,
                f"The user denied this {tool.name} call. Do not retry it as is; ask the user "
                "what they want instead, or continue without it.",
            )


def too_many_open(exc: TooManyOpen) -> ToolError:
    """A run at its limit of open cards, whether the new card is a question or a permission."""
    return ToolError(ErrorCode.UNAVAILABLE,
                     f"{exc.open_cards} cards of this run are still open; wait for their answers "
                     "before asking more.")


def _unanswered(exc: PermissionUnanswered, tool: str) -> ToolError:
    """What a permission card that got no answer means to the agent."""
    match exc:
        case NobodyToAsk(space=space):
            return ToolError(
                ErrorCode.NO_HUMAN,
                f"Nobody is connected to space {space!r} to approve {tool}, so the call did not "
                "run. Tell the user to open the agent panel there (notebook: "
                "jupyter_agent_tools.notebook.open_panel()), then call it again.",
            )
        case TooManyOpen():
            return too_many_open(exc)
        case NoAnswerInTime(card_number=number, card_id=card_id, status=status,
                            timeout_seconds=timeout):
            return ToolError(
                ErrorCode.TIMEOUT,
                f"Nobody answered card {number} within {timeout:g} s. The {tool} call did not "
                "run; continue without it or ask the user in the conversation.",
                data={"card": number, "card_id": card_id, "status": status},
            )
    return ToolError(ErrorCode.NO_HUMAN, f"The permission card got no answer ({exc}), so the "
                     f"{tool} call did not run. Call it again once someone can answer in "
                     "the agent panel.")
