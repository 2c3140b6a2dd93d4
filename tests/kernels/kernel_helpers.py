"""Helpers of the kernel tests (a unique module name: test folders are not packages)."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import httpx


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_gateway(process: subprocess.Popen[bytes], url: str, token: str, log: Path,
                     timeout: float = 60.0) -> None:
    """Until the gateway at `url` lists its kernelspecs; its log in the failure if it exits
    or never answers."""
    deadline = time.monotonic() + timeout
    while True:
        assert process.poll() is None, log.read_text()
        try:
            if httpx.get(f"{url}/api/kernelspecs", timeout=5,
                         headers={"Authorization": f"token {token}"}).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)
