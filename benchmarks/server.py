"""A real Jupyter server with the extension, started for a benchmark on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from jupyter_agent_tools.testing.server import JupyterServerProcess


@contextmanager
def jupyter_server(root: Path, *extra: str) -> Iterator[tuple[str, str]]:
    """Yield (base_url, token) of a server over `root`; stop it afterwards."""
    server = JupyterServerProcess(root, extra_args=list(extra)).start()
    try:
        yield server.url.rstrip("/") + "/", server.token
    finally:
        server.stop()
