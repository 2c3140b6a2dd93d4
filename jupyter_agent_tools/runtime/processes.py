"""Ending what we started: one way to signal a child's whole process group."""

from __future__ import annotations

import contextlib
import os
import signal


def signal_process_group(pgid: int, sig: signal.Signals = signal.SIGKILL) -> None:
    """Send `sig` to process group `pgid`; a group that is already gone is not an error.

    Children are started with `start_new_session=True`, so their pid is their group id and
    this reaches every process they spawned.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
