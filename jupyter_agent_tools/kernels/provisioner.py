"""A local kernel provisioner that starts the kernel's process off the server's event loop.

jupyter_client's `LocalProvisioner` starts a kernel with `subprocess.Popen` on the loop, and
Popen waits there until the child has exec'd: on a busy machine that held the loop for
hundreds of milliseconds, every request waiting. This one is the same provisioner with that
one call made in a thread. The extension makes it the server's default provisioner (see
`AgentToolsApp.kernel_launch_off_loop`), for our kernels and the users' alike, unless a
default is configured; a kernelspec naming its own provisioner keeps it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pathlib
from importlib.metadata import entry_points
from typing import Any

from jupyter_client.connect import KernelConnectionInfo
from jupyter_client.launcher import launch_kernel
from jupyter_client.provisioning import KernelProvisionerFactory, LocalProvisioner
from traitlets.config import Configurable

from ..processes import sandboxed

#: The entry-point name (pyproject.toml, `jupyter_client.kernel_provisioners`).
NAME = "agent-tools-local-provisioner"


#: In a kernel's launch environment: the sandbox policy (sandbox.py) to confine it by. Taken
#: out before the kernel starts; the kernel's own ports and connection file are added to it.
SANDBOX_ENV = "JUPYTER_AGENT_TOOLS_SANDBOX"
_PORTS = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")


class OffLoopLocalProvisioner(LocalProvisioner):
    """`LocalProvisioner`, its `Popen` in a thread (the rest as jupyter_client 8 does it).

    A kernel whose launch environment has `SANDBOX_ENV` runs confined (a run's own kernel in a
    sandboxed run): the launcher (sandbox.py) in front of its command, allowing it its own
    connection file and ports. `sandboxed` says it was; the factory checks it."""

    sandboxed = False

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> KernelConnectionInfo:
        env = kwargs.get("env")
        policy = env.get(SANDBOX_ENV) if isinstance(env, dict) else None
        if isinstance(env, dict) and policy is not None:
            # The kernel does not see it; the launch arguments a restart uses keep it.
            kwargs["env"] = {name: value for name, value in env.items() if name != SANDBOX_ENV}
            cmd = sandboxed(self._with_kernel_needs(policy), cmd)
            self.sandboxed = True
        popen_kwargs = LocalProvisioner._scrub_kwargs(kwargs)
        self.process = await asyncio.to_thread(launch_kernel, cmd, **popen_kwargs)
        self.pid = self.process.pid
        self.pgid = None
        if hasattr(os, "getpgid"):
            with contextlib.suppress(OSError):
                self.pgid = os.getpgid(self.process.pid)
        self.cwd = kwargs.get("cwd", pathlib.Path.cwd())
        return self.connection_info

    def _with_kernel_needs(self, policy: str) -> str:
        """`policy` plus what the kernel needs of its own: its connection file (in Jupyter's
        runtime directory, which is denied), its TCP ports (it binds them), or, for ipc, the
        folder its sockets go in."""
        rules = json.loads(policy)
        info: dict[str, Any] = dict(self.connection_info)
        connection_file = getattr(self.parent, "connection_file", "")
        if connection_file:
            rules["read"] = [*rules.get("read", []), connection_file]
        if info.get("transport", "tcp") == "tcp":
            rules["ports"] = [*rules.get("ports", []),
                              *(int(info[name]) for name in _PORTS if info.get(name))]
        elif connection_file:
            rules["write"] = [*rules.get("write", []), os.path.dirname(connection_file)]
        return json.dumps(rules)


def launch_kernels_off_the_loop(server: Configurable) -> bool:
    """Make this provisioner the default of the server's kernels, unless one is configured.

    The factory is a process-wide singleton: set here, it holds for every kernel manager.
    """
    configured = server.config.get("KernelProvisionerFactory", {})
    if ("default_provisioner_name" in configured
            or os.environ.get(KernelProvisionerFactory.default_provisioner_name_env)):
        return False
    # An install that predates the entry point (an editable one not reinstalled) has none:
    # naming it would make every kernel start fail.
    if not entry_points(group="jupyter_client.kernel_provisioners", name=NAME):
        return False
    KernelProvisionerFactory.instance(parent=server).default_provisioner_name = NAME
    return True
