"""Hosted by a server whose kernels live on a remote kernel gateway (a real Jupyter Kernel
Gateway in a child process): eval runs there, and cells still call tools back."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kernel_helpers import free_port, wait_for_gateway

from jupyter_agent_tools.processes import signal_process_group


@dataclass
class KernelGateway:
    url: str
    token: str


@pytest.fixture
def kernel_gateway(tmp_path: Path, fresh_gateway_client) -> Iterator[KernelGateway]:
    """A Jupyter Kernel Gateway on loopback whose python3 kernel is this environment's."""
    token = secrets.token_hex(16)
    port = free_port()
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "gateway-runtime"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    log = (tmp_path / "gateway.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "kernel_gateway", "--ip=127.0.0.1", f"--port={port}",
         "--port_retries=0", f"--KernelGatewayApp.auth_token={token}"],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp_path, start_new_session=True)
    gateway = KernelGateway(f"http://127.0.0.1:{port}", token)
    try:
        wait_for_gateway(process, gateway.url, token, tmp_path / "gateway.log")
        yield gateway
    finally:
        signal_process_group(process.pid)
        process.wait()
        log.close()


@pytest.fixture(autouse=True)
def jp_server_cleanup(kernel_gateway, jp_server_cleanup):
    """pytest-jupyter's server clean-up, made to run while the gateway still answers."""
    yield


@pytest.fixture
def jp_server_config(jp_server_config, kernel_gateway):
    return {**jp_server_config,
            "GatewayClient": {"url": kernel_gateway.url, "auth_token": kernel_gateway.token},
            "KernelFactory": {"warm_pool": {}, "idle_timeout_seconds": 2.0}}


def cell(code: str) -> dict:
    return {"tool": "eval", "args": {"code": code, "description": "run this cell on the gateway"}}


async def test_eval_runs_on_the_gateway_and_its_cells_call_tools(api, jp_root_dir):
    (jp_root_dir / "data.txt").write_text("from the server's disk\n")
    _, run = await api("POST", "runs", {})
    code, first = await api("POST", f"runs/{run['id']}/calls", cell("answer = 41"))
    assert code == 200 and first["ok"], first
    assert first["data"]["where"] == "gateway"

    code, second = await api("POST", f"runs/{run['id']}/calls",
                             cell("print(tool('read', {'path': 'data.txt'}).text)\nanswer + 1"))
    assert second["ok"], second
    assert "from the server's disk" in second["text"] and second["text"].endswith("42")
    _, transcript = await api("GET", f"runs/{run['id']}/transcript")
    assert [(e["tool"], e["origin"]) for e in transcript][-1] == ("read", "cell")


async def test_a_quiet_gateway_cell_is_interrupted_and_the_kernel_kept(api):
    _, run = await api("POST", "runs", {})
    assert (await api("POST", f"runs/{run['id']}/calls", cell("kept = 'yes'")))[1]["ok"]
    _, slow = await api("POST", f"runs/{run['id']}/calls", cell("import time\ntime.sleep(60)"))
    assert slow["error"]["code"] == "timeout", slow
    _, after = await api("POST", f"runs/{run['id']}/calls", cell("kept"))
    assert after["ok"] and after["text"] == "'yes'", after


async def test_a_javascript_cell_on_the_gateway_calls_tools(api, jp_root_dir):
    (jp_root_dir / "data.txt").write_text("read from deno\n")
    _, run = await api("POST", "runs", {})
    code, result = await api("POST", f"runs/{run['id']}/calls", {"tool": "eval", "args": {
        "code": "tool('read', {path: 'data.txt'}).text.includes('read from deno')",
        "description": "run this cell on the gateway", "language": "javascript"}})
    assert code == 200 and result["ok"] and result["text"] == "true", result
    assert result["data"]["where"] == "gateway"


async def test_a_run_borrows_a_notebooks_gateway_kernel(api, jp_fetch, jp_root_dir):
    """The gateway's kernelspec is its JSON model: still known as a Python kernel."""
    (jp_root_dir / "data.txt").write_text("read in the notebook's kernel\n")
    (jp_root_dir / "sales.ipynb").write_text(json.dumps(
        {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    response = await jp_fetch("api", "sessions", method="POST", body=json.dumps(
        {"path": "sales.ipynb", "name": "sales.ipynb", "type": "notebook",
         "kernel": {"name": "python3"}}))
    kernel_id = json.loads(response.body)["kernel"]["id"]
    code, run = await api("POST", "runs", {"notebook": "sales.ipynb"})
    assert code == 201, run
    _, result = await api("POST", f"runs/{run['id']}/calls",
                          cell("tool('read', {'path': 'data.txt'}).text"))
    assert result["ok"] and "read in the notebook's kernel" in result["text"], result
    assert result["data"]["kernel_id"] == kernel_id and result["data"]["user_kernel"]
