"""Helpers of the kernel tests (a unique module name: test folders are not packages)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
