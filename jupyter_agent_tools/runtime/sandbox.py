"""A run's sandbox: which of its surfaces run confined, how, and what this machine can do.

A run's `sandbox` option (or, per surface, `c.Runtime.sandbox`) confines what the agent runs:
`bash`, the run's own `eval` kernels, `debug` launches and worker commands (`workers`). The
user's notebook kernel a run borrows is never confined. Modes:

- `off`: not confined (unless `network` is off: then only the network is cut);
- `workspace-write`: reads everywhere but Jupyter's runtime directory; writes only in the
  run's folder, its private temp folder (TMPDIR) and a few devices (/dev/null, ...);
- `read-only`: the same reads; writes only in the private temp folder and the devices.

`network` False cuts the network off for every surface (so each is confined). The confinement itself is
`jupyter_agent_tools/sandbox.py` (Landlock, a network namespace); here is the run's side:
the policy per surface, the temp folder, and the check that refuses a run this machine
cannot confine (never run it unconfined instead).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import sandbox as launcher
from ..files.denied import denied_folders


class SandboxMode(str, Enum):
    OFF = "off"
    WORKSPACE_WRITE = "workspace-write"
    READ_ONLY = "read-only"


#: The surfaces a sandbox confines (keys of `c.Runtime.sandbox`).
SURFACES = ("bash", "eval", "debug", "workers")
# Network off in a namespace of their own where permitted (loopback inside only). Kernels and
# worker commands talk to the server over TCP: Landlock's rules, their ports allowed, instead.
_NAMESPACED = ("bash", "debug")


class SandboxUnavailable(Exception):
    """This machine cannot confine what the run asked for; the message says what to change."""


@lru_cache(maxsize=1)
def support() -> dict[str, Any]:
    """What this machine can confine (probed once, in a child process): Landlock's ABI
    version (0: none) and whether a network namespace may be made. Blocking."""
    if not sys.platform.startswith("linux"):
        return {"landlock_abi": 0, "network_namespace": False}
    try:
        done = subprocess.run([sys.executable, "-I", "-S", launcher.SCRIPT, "--probe"],
                              capture_output=True, text=True, timeout=30, check=True)
        found = json.loads(done.stdout)
    except (OSError, ValueError, subprocess.SubprocessError):
        return {"landlock_abi": 0, "network_namespace": False}
    return {"landlock_abi": int(found["landlock_abi"]),
            "network_namespace": bool(found["network_namespace"])}


def describe_support() -> dict[str, Any]:
    """`status`'s word on sandboxes: what can be confined here, and how."""
    found = support()
    abi = found["landlock_abi"]
    namespace = found["network_namespace"]
    return {
        "available": abi > 0,
        "landlock_abi": abi,
        "network": {
            "bash": "namespace" if namespace else "landlock" if abi >= 4 else None,
            "workers": "landlock" if abi >= 4 else None,
            "eval": "landlock" if abi >= 4 else None,
            "debug": "namespace" if namespace else None,
        },
        "reason": None if abi > 0 else (
            "this kernel has no Landlock (Linux 5.13 or later, enabled in the 'lsm' boot "
            "option); runs that ask for a sandbox are refused"),
    }


def parse_mode(value: str, where: str) -> SandboxMode:
    try:
        return SandboxMode(value)
    except ValueError:
        raise ValueError(f"{where} is off|workspace-write|read-only, not {value!r}") from None


@dataclass
class RunSandbox:
    """What is confined in one run, and how: the policy each surface's processes run under."""

    modes: dict[str, SandboxMode]
    network: bool = True
    cwd: Path = Path(".")
    temp: Path | None = None
    _netns: bool = field(default=False, repr=False)

    @classmethod
    def plan(cls, mode: str | None, network: bool | None, defaults: dict[str, str],
             default_network: bool, cwd: Path) -> RunSandbox:
        """The run's sandbox from its options (`mode` for every surface, else each surface's
        default); ValueError naming a bad mode."""
        for surface in defaults:
            if surface not in SURFACES:
                raise ValueError(f"c.Runtime.sandbox has surface {surface!r}; surfaces are "
                                 f"{', '.join(SURFACES)}")
        modes = {surface: parse_mode(mode, "sandbox") if mode is not None else
                 parse_mode(str(defaults.get(surface, "off")), f"c.Runtime.sandbox[{surface!r}]")
                 for surface in SURFACES}
        return cls(modes, default_network if network is None else bool(network), cwd)

    def confines(self, surface: str) -> bool:
        return self.modes[surface] is not SandboxMode.OFF or not self.network

    @property
    def active(self) -> bool:
        return any(self.confines(surface) for surface in SURFACES)

    def check(self, found: dict[str, Any]) -> None:
        """SandboxUnavailable when this machine (`support()`) cannot confine as asked."""
        if not self.active:
            return
        abi, namespace = found["landlock_abi"], found["network_namespace"]
        confined = [s for s in SURFACES if self.confines(s)]
        if abi < 1:
            raise SandboxUnavailable(
                f"this run asks for a sandbox ({', '.join(confined)}) but the server's kernel "
                "has no Landlock (Linux 5.13 or later), so nothing can be confined and the run "
                "is not started; create it with sandbox 'off' and network true, or run the "
                "server on a kernel with Landlock (status shows sandbox support).")
        self._netns = namespace
        if self.network:
            return
        cannot = [s for s in confined if (s in ("eval", "workers") and abi < 4)
                  or (s == "debug" and not namespace)
                  or (s == "bash" and not namespace and abi < 4)]
        if cannot:
            raise SandboxUnavailable(
                f"this run asks for the network off, but this machine cannot cut it for "
                f"{', '.join(cannot)} (Landlock ABI {abi}; network namespaces "
                f"{'permitted' if namespace else 'not permitted'}; eval and workers need "
                "Landlock ABI 4, bash either, debug a network namespace), so the run is not "
                "started; create it with network true (the network is cut for every surface "
                "or none), or run the server where this is available (status shows it).")

    def open(self) -> None:
        """Make the run's private temp folder (mode 0700), when anything is confined."""
        if self.active and self.temp is None:
            self.temp = Path(tempfile.mkdtemp(prefix="agent-tools-run-"))

    def close(self) -> None:
        if self.temp is not None:
            shutil.rmtree(self.temp, ignore_errors=True)

    def policy(self, surface: str, *, ports: list[int] | None = None,
               read: list[str] | None = None) -> str | None:
        """The JSON policy (sandbox.py) `surface`'s processes run under; None: unconfined."""
        if not self.confines(surface):
            return None
        mode = self.modes[surface]
        temp = [str(self.temp)] if self.temp is not None else []
        if mode is SandboxMode.OFF:  # only the network is cut
            write, deny = ["/"], []
        else:
            write = [str(self.cwd), *temp] if mode is SandboxMode.WORKSPACE_WRITE else temp
            deny = list(denied_folders())
        return launcher.policy(write=write, deny=deny, read=read, network=self.network,
                               ports=ports, netns=self._netns and surface in _NAMESPACED)

    def env(self, surface: str) -> dict[str, str]:
        """Environment a confined surface's processes get: TMPDIR (and TMP, TEMP) in the run's
        private temp folder; for kernels IPython's folder there too (a kernel must not write
        the user's ~/.ipython, whose startup files the user's own kernels run)."""
        if not self.confines(surface) or self.temp is None:
            return {}
        env = {name: str(self.temp) for name in ("TMPDIR", "TMP", "TEMP")}
        if surface == "eval":
            env["IPYTHONDIR"] = str(self.temp / "ipython")
        return env

    def describe(self) -> dict[str, Any]:
        return {"modes": {s: m.value for s, m in self.modes.items()}, "network": self.network}
