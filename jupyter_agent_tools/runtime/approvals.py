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

    async def request_permission(self, run: RunView, tool: Tool, args: dict[str, Any]) -> Permission:
        """Show a permission card in the run's space and wait for the human's choice.

        Raises ToolError(no_human) when nobody is connected to the space.
        """
        ...


class ApprovalGate:
    """Per-run approval state: the policy plus the tools allowed for the rest of the run."""

    def __init__(self, policy: Approvals) -> None:
        self.policy = policy
        self.allowed_for_run: set[str] = set()

    async def check(self, run: RunView, tool: Tool, args: dict[str, Any]) -> None:
        """Return when the call may proceed; raise ToolError(permission_denied | no_human)."""
        if tool.tier is Tier.READ or self.policy is Approvals.AUTO:
            return
        if self.policy is Approvals.DENY:
            raise ToolError(
                ErrorCode.PERMISSION_DENIED,
                f"{tool.name} is a {tool.tier.value}-tier tool and this run's approvals are "
                "'deny'. Use read-tier tools, or ask the user to start a run with approvals "
                "'ask' or 'auto'.",
            )
        if tool.name in self.allowed_for_run:
            return
        asker: PermissionAsker | None = run.resources.get(Resource.QUESTIONS)
        if asker is None or Resource.SPACE not in run.resources:
            raise ToolError(
                ErrorCode.PERMISSION_DENIED,
                f"{tool.name} needs approval (this run's approvals are 'ask') but the run has no "
                "question port with a target space to ask in. Create the run with a `space` "
                "where a human is connected, or with approvals 'auto'.",
            )
        answer = await asker.request_permission(run, tool, args)
        if answer is Permission.ALLOW_RUN:
            self.allowed_for_run.add(tool.name)
        elif answer is not Permission.ALLOW_ONCE:
            raise ToolError(
                ErrorCode.PERMISSION_DENIED,
                f"The user denied this {tool.name} call. Do not retry it as is; ask the user "
                "what they want instead, or continue without it.",
            )
