"""Worker fixtures: a server whose workers run tests/workers/scripted_agent.py, and embedded
runtimes whose workers are python callables."""

from __future__ import annotations

import sys

import pytest
from worker_helpers import AGENT

from jupyter_agent_tools import Runtime


@pytest.fixture
def pool_config() -> dict:
    """Extra c.WorkerPool settings for the server under test (override per module/test)."""
    return {}


@pytest.fixture
def jp_server_config(jp_server_config, pool_config):
    config = dict(jp_server_config)
    config["WorkerPool"] = {"backend": "command", **pool_config}
    config["CommandBackend"] = {
        "argv": {"fast": [sys.executable, str(AGENT)], "good": [sys.executable, str(AGENT)]},
        "kill_grace_seconds": 1.0,
    }
    return config


@pytest.fixture
def server_runtime(jp_serverapp) -> Runtime:
    return jp_serverapp.web_app.settings["agent_tools_runtime"]


@pytest.fixture
def tool(api):
    """`await tool(run_id, name, args)` → the result JSON (asserting HTTP 200)."""

    async def call(run_id: str, name: str, args: dict | None = None) -> dict:
        code, result = await api("POST", f"runs/{run_id}/calls", {"tool": name, "args": args or {}})
        assert code == 200, result
        return result

    return call


@pytest.fixture
def make_runtime(runtime_factory):
    """`make_runtime(agent, **worker_pool_settings)`: an embedded Runtime with python workers."""

    def make(agent, **pool) -> Runtime:
        return runtime_factory({"WorkerPool": {"backend": "python", **pool},
                                "PythonBackend": {"agent": agent}})

    return make


@pytest.fixture
def as_worker(jp_fetch):
    """`await as_worker(token, method, path)` → status, sending only that token."""

    async def call(token: str, method: str, path: str) -> int:
        response = await jp_fetch("agent-tools", "api", *path.split("/"), method=method,
                                  headers={"Authorization": f"token {token}"}, raise_error=False)
        return response.code, response.body

    return call
