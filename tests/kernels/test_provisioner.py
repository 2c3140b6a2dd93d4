"""The server's default kernel provisioner: jupyter_client's local one, its Popen off the loop."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import KernelProvisionerFactory
from traitlets.config import Config, Configurable

from jupyter_agent_tools.kernels.provisioner import (
    NAME,
    OffLoopLocalProvisioner,
    launch_kernels_off_the_loop,
)


@pytest.fixture
def fresh_provisioner_factory() -> Iterator[None]:
    """The provisioner factory is a process-wide singleton: each test here starts from none."""
    KernelProvisionerFactory.clear_instance()
    yield
    KernelProvisionerFactory.clear_instance()


async def test_the_extension_makes_it_the_default_for_every_kernel(fresh_provisioner_factory,
                                                                   tmp_path):
    assert launch_kernels_off_the_loop(Configurable())
    # Registered as an entry point (pyproject.toml), as jupyter_client finds provisioners.
    assert KernelProvisionerFactory.instance()._get_provisioner(NAME).load() is OffLoopLocalProvisioner
    manager = AsyncKernelManager(kernel_name="python3",
                                 connection_file=str(tmp_path / "kernel.json"))
    await manager.start_kernel(cwd=str(tmp_path))
    try:
        assert isinstance(manager.provisioner, OffLoopLocalProvisioner)
        assert await manager.is_alive()
    finally:
        await manager.shutdown_kernel(now=True)


def test_a_configured_default_provisioner_is_kept(fresh_provisioner_factory):
    server = Configurable(config=Config(
        {"KernelProvisionerFactory": {"default_provisioner_name": "local-provisioner"}}))
    assert not launch_kernels_off_the_loop(server)
    assert KernelProvisionerFactory.instance(parent=server).default_provisioner_name == \
        "local-provisioner"


async def test_a_kernel_it_starts_runs_code_in_its_cwd_and_stops(tmp_path):
    """Named by a kernelspec, whatever the default."""
    spec = tmp_path / "kernels" / "offloop-python"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python (provisioned off the loop)", "language": "python",
        "metadata": {"kernel_provisioner": {"provisioner_name": NAME}},
    }))
    manager = AsyncKernelManager(kernel_name="offloop-python",
                                 kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(tmp_path / "kernels")]),
                                 connection_file=str(tmp_path / "kernel.json"))
    await manager.start_kernel(cwd=str(tmp_path))
    try:
        assert isinstance(manager.provisioner, OffLoopLocalProvisioner)
        assert manager.provisioner.pid == manager.provisioner.process.pid
        client = manager.client()
        client.start_channels()
        try:
            await client.wait_for_ready(timeout=60)
            reply = await client.execute_interactive("import os; print(os.getcwd())", timeout=60,
                                                     output_hook=_collect(outputs := []))
            assert reply["content"]["status"] == "ok"
            assert "".join(outputs).strip() == str(tmp_path)
        finally:
            client.stop_channels()
    finally:
        await manager.shutdown_kernel(now=True)
    assert not await manager.is_alive()


def _collect(outputs: list[str]):
    def hook(message: dict) -> None:
        if message["msg_type"] == "stream":
            outputs.append(message["content"]["text"])

    return hook
