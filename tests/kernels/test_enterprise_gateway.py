"""Hosted by a server whose kernels live on a real Jupyter Enterprise Gateway 3.x (local process
proxies, in a child process): eval and its cells' tool() calls, notebook runs through the
server's session manager, and a run borrowing a notebook's gateway kernel.

Enterprise Gateway pins jupyter_server<2 and jupyter_client<7, so it cannot share this
environment: scripts/setup.sh installs it into a virtualenv of its own,
.tools/enterprise-gateway. Its kernels are this environment's (the kernelspecs below).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from jupyter_core.paths import jupyter_path
from kernel_helpers import free_port, wait_for_gateway
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_agent_tools.client import AgentToolsClient
from jupyter_agent_tools.processes import signal_process_group
from jupyter_agent_tools.testing.server import JupyterServerProcess

ENTERPRISE_GATEWAY = (Path(__file__).resolve().parents[2] / ".tools" / "enterprise-gateway"
                      / "bin" / "jupyter-enterprisegateway")
# A kernel start through the gateway waits this long (generous: two shared cores); the silent
# kernel's test waits it out once.
START_TIMEOUT_S = 12


@dataclass
class EnterpriseGateway:
    url: str
    token: str
    log: Path


def _kernelspecs(directory: Path) -> Path:
    """python3 as this environment's interpreter (the gateway's own has no ipykernel), and
    `silent`, a process that never answers as a kernel would."""
    specs = {
        "python3": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "silent": [sys.executable, "-c", "import time; time.sleep(600)", "{connection_file}"],
    }
    for name, argv in specs.items():
        (directory / "kernels" / name).mkdir(parents=True)
        (directory / "kernels" / name / "kernel.json").write_text(json.dumps(
            {"argv": argv, "display_name": name, "language": "python"}))
    return directory


@pytest.fixture(scope="module")
def enterprise_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EnterpriseGateway]:
    if not ENTERPRISE_GATEWAY.exists():
        pytest.skip(f"{ENTERPRISE_GATEWAY} is absent: run scripts/setup.sh")
    scratch = tmp_path_factory.mktemp("enterprise-gateway")
    token = secrets.token_hex(16)
    gateway = EnterpriseGateway(f"http://127.0.0.1:{free_port()}", token, scratch / "gateway.log")
    # The Deno kernelspec (registered in this environment) comes after ours.
    data = os.pathsep.join([str(_kernelspecs(scratch / "data")), *jupyter_path()])
    env = {**os.environ, "JUPYTER_PATH": data, "JUPYTER_RUNTIME_DIR": str(scratch / "runtime")}
    with gateway.log.open("wb") as log:
        process = subprocess.Popen(
            [str(ENTERPRISE_GATEWAY), "--ip=127.0.0.1", f"--port={gateway.url.rsplit(':', 1)[1]}",
             "--port_retries=0", f"--EnterpriseGatewayApp.auth_token={token}"],
            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=scratch, start_new_session=True)
    try:
        wait_for_gateway(process, gateway.url, token, gateway.log)
        yield gateway
    finally:
        # Asked first, the gateway shuts its kernels down: they run in sessions of their own,
        # out of reach of its process group.
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(30)
        signal_process_group(process.pid)
        process.wait()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory,
           enterprise_gateway: EnterpriseGateway) -> Iterator[JupyterServerProcess]:
    root = tmp_path_factory.mktemp("enterprise-gateway-root")
    (root / "data.txt").write_text("from the server's disk\n")
    # Enterprise Gateway refuses kernels to root unless told whose they are, as a hub's
    # single-user server tells it (KERNEL_USERNAME, forwarded by GatewayClient).
    with JupyterServerProcess(root, env={"KERNEL_USERNAME": "alice"}, extra_args=[
            f"--GatewayClient.url={enterprise_gateway.url}",
            f"--GatewayClient.auth_token={enterprise_gateway.token}",
            "--KernelFactory.warm_pool={}",
            f"--KernelFactory.start_timeout_seconds={START_TIMEOUT_S}"]) as process:
        yield process


@pytest.fixture
def client(server: JupyterServerProcess, enterprise_gateway: EnterpriseGateway
           ) -> Iterator[AgentToolsClient]:
    client = server.client(timeout=120)
    yield client
    client.close()
    # Shown by pytest when the test failed: what the server and the gateway said.
    print(server.log_tail(), enterprise_gateway.log.read_text()[-4_000:])


def _notebook(path: Path, kernel: str, *sources: str) -> None:
    nbformat.write(new_notebook(cells=[new_code_cell(s) for s in sources], metadata={
        "kernelspec": {"name": kernel, "display_name": kernel, "language": "python"}}), path)


def _eval(code: str, language: str = "python") -> dict:
    return {"code": code, "description": "run this cell on the gateway", "language": language}


def test_eval_runs_on_enterprise_gateway_and_its_cells_call_tools(client):
    run = client.create_run()
    first = run.call("eval", _eval("answer = 41"))
    assert first.ok and first.data["where"] == "gateway", first.text
    second = run.call("eval", _eval("print(tool('read', {'path': 'data.txt'}).text)\nanswer + 1"))
    assert second.ok, second.text
    assert "from the server's disk" in second.text and second.text.endswith("42")
    assert [(e["tool"], e["origin"]) for e in run.transcript()][-1] == ("read", "cell")
    javascript = run.call("eval", _eval("tool('read', {path: 'data.txt'}).text", "javascript"))
    assert javascript.ok and "from the server's disk" in javascript.text, javascript.text
    assert javascript.data["where"] == "gateway"


def test_notebook_cells_run_in_their_gateway_kernel_which_a_run_can_borrow(client, server):
    path = server.root_dir / "sales.ipynb"
    _notebook(path, "python3", "sales = [3, 5, 8]", "print('total', sum(sales))")
    run = client.create_run()
    ran = run.call("notebook", {"action": "run_all", "path": "sales.ipynb"})
    assert ran.ok and "total 16" in ran.text, ran.text
    assert nbformat.read(path, 4).cells[1].outputs[0]["text"] == "total 16\n"
    kernel_id = ran.data["kernel_id"]

    # A run on the notebook's kernel: the bridge goes into the gateway's kernel, beside the
    # notebook's variables.
    borrowing = client.create_run(notebook="sales.ipynb")
    borrowed = borrowing.call("eval", _eval(
        "print(tool('read', {'path': 'data.txt'}).text)\nsum(sales) * 2"))
    assert borrowed.ok and borrowed.text.endswith("32"), borrowed.text
    assert borrowed.data["kernel_id"] == kernel_id and borrowed.data["user_kernel"]
    borrowing.close()
    again = run.call("notebook", {"action": "run", "path": "sales.ipynb", "cell": 2})
    assert again.ok and again.data["kernel_id"] == kernel_id, again.text

    # Enterprise Gateway does not list its kernels by default: the notebooks are still listed.
    listed = run.call("notebook", {"action": "list"})
    assert listed.ok, listed.text
    assert f"sales.ipynb: not open, kernel python3 {kernel_id}" in listed.text
    assert "EG_LIST_KERNELS=True" in listed.text


def test_a_notebook_kernel_that_never_answers_is_unavailable_not_a_crash(client, server):
    _notebook(server.root_dir / "silent.ipynb", "silent", "1 + 1")
    run = client.create_run()
    result = run.call("notebook", {"action": "run_all", "path": "silent.ipynb"})
    assert result.code == "unavailable", result.text
    assert "did not answer" in result.error["message"], result.error
