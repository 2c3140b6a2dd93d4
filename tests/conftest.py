"""Shared fixtures: an embedded Runtime over a temporary root, and a real Jupyter server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from traitlets.config import Config

from jupyter_agent_tools import Runtime

pytest_plugins = ["pytest_jupyter.jupyter_server"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty server root."""
    directory = tmp_path / "root"
    directory.mkdir()
    return directory


@pytest.fixture
def runtime_factory(root: Path, jp_asyncio_loop):
    """`runtime_factory(config, **traits)` → an embedded Runtime over `root`, shut down after.

    Async tests and fixtures run on pytest-jupyter's loop (`jp_asyncio_loop`): fixtures are
    plain functions that drive it with `run_until_complete`.
    """
    made: list[Runtime] = []

    def make(config: dict | Config | None = None, **traits: object) -> Runtime:
        runtime = Runtime(root_dir=str(root), config=Config(config or {}), **traits)
        made.append(runtime)
        return runtime

    yield make
    for runtime in made:
        jp_asyncio_loop.run_until_complete(runtime.shutdown())


@pytest.fixture
def runtime(runtime_factory):
    """An embedded Runtime over `root` with the default configuration."""
    return runtime_factory()


@pytest.fixture
def jp_server_config(jp_server_config):
    """The server under test: our extension enabled, running as root allowed (CI is root)."""
    return {
        "ServerApp": {
            "jpserver_extensions": {"jupyter_agent_tools": True},
            "allow_root": True,
        }
    }


@pytest.fixture
def api(jp_fetch):
    """Call agent-tools routes: `await api("POST", "runs", {...})` → (status, JSON or None)."""

    async def call(method: str, path: str, body=None, **params):
        response = await jp_fetch(
            "agent-tools", "api", *path.split("/"),
            method=method,
            body=None if body is None else json.dumps(body),
            params=params or None,
            raise_error=False,
            allow_nonstandard_methods=True,
        )
        payload = json.loads(response.body) if response.body else None
        return response.code, payload

    return call


@pytest.fixture
def thread_hops_of(monkeypatch) -> Callable[[str], list[str]]:
    """`thread_hops_of("pkg.module")`: the names of the functions that module sends to a worker
    thread with `asyncio.to_thread`, in order (they still run there)."""
    def spy(module: str) -> list[str]:
        hops: list[str] = []
        to_thread = asyncio.to_thread

        def counted(function, /, *args, **kwargs):
            hops.append(function.__name__)
            return to_thread(function, *args, **kwargs)

        monkeypatch.setattr(f"{module}.asyncio.to_thread", counted)
        return hops

    return spy


@pytest.fixture
def runtime_of(jp_serverapp):
    """The server's Runtime (to look at runs the way a test must: from outside MCP)."""
    return jp_serverapp.web_app.settings["agent_tools_runtime"]


@pytest.fixture
def mcp_url(jp_http_port, jp_base_url, http_server_client):
    """`mcp_url(path="agent-tools/mcp", **query)` → the endpoint's full URL (server listening)."""

    def url(path: str = "agent-tools/mcp", **query: Any) -> str:
        suffix = f"?{urlencode(query)}" if query else ""
        return f"http://localhost:{jp_http_port}{jp_base_url}{path}{suffix}"

    return url


@pytest.fixture
def auth_headers(jp_serverapp):
    return {"Authorization": f"token {jp_serverapp.identity_provider.token}"}
