"""Run tokens: secrets that authenticate a worker process for its own run's routes only.

The runtime issues one to a child run whose backend is an outside process (a worker), so
that process's tool calls go through that run's gate and nowhere else. A token dies with
its run.
"""

from __future__ import annotations

import hmac
import secrets


class RunTokens:
    """Issued run tokens, by run id."""

    def __init__(self) -> None:
        self._by_run: dict[str, str] = {}

    def issue(self, run_id: str) -> str:
        """A new token for `run_id` (replacing any earlier one)."""
        token = secrets.token_urlsafe(32)
        self._by_run[run_id] = token
        return token

    def run_id_for(self, presented: str) -> str | None:
        """The run a presented token belongs to, or None when it is no run token."""
        found = None
        # Compare against every token (no early exit) so timing says nothing about which.
        for run_id, token in self._by_run.items():
            if hmac.compare_digest(presented.encode(), token.encode()):
                found = run_id
        return found

    def drop(self, run_id: str) -> None:
        self._by_run.pop(run_id, None)
