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
        return _SURFACE_TIERS[self]

    def allows(self, tier: Tier) -> bool:
        return tier in _SURFACE_TIERS[self]


# Looked up on every call (Run.call), so built once.
_SURFACE_TIERS = {surface: frozenset(Tier) if surface is Surface.FULL else frozenset({Tier.READ})
                  for surface in Surface}


class Approvals(str, Enum):
    """How write and exec calls are gated. Read calls are never gated."""

    AUTO = "auto"
    ASK = "ask"
    DENY = "deny"
