"""A real Jupyter server with the extension, started for a benchmark on loopback."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import httpx


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def jupyter_server(root: Path, *extra: str):
    """Yield (base_url, token) of a server over `root`; stop it afterwards."""
    port, token = _free_port(), secrets.token_hex(16)
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server", f"--ServerApp.root_dir={root}",
         f"--ServerApp.port={port}", "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
         "--ServerApp.allow_root=True", "--ServerApp.open_browser=False", *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ},
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(url + "api/status", headers={"Authorization": f"token {token}"}).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("the Jupyter server did not start")
            time.sleep(0.2)
        yield url, token
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
