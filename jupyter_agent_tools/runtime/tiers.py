"""Tiers (what a tool may do) and surfaces (which tiers an agent may even see)."""

from __future__ import annotations

from enum import Enum


class Tier(str, Enum):
    READ = "read"
    WRITE = "write"
    EXEC = "exec"


class Surface(str, Enum):
    """Where the agent runs. The surface's ceiling decides which tools exist for it."""

    FULL = "full"
    PLAN = "plan"
    READONLY = "readonly"

    @property
    def tiers(self) -> frozenset[Tier]:
        if self is Surface.FULL:
            return frozenset(Tier)
        return frozenset({Tier.READ})

    def allows(self, tier: Tier) -> bool:
        return tier in self.tiers


class Approvals(str, Enum):
    """How write and exec calls are gated. Read calls are never gated."""

    AUTO = "auto"
    ASK = "ask"
    DENY = "deny"
