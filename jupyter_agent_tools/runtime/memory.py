"""The memory limit the server runs under, and whether a child was killed for memory.

The limit is the smallest of: the memory cgroup's (v2 `memory.max`, v1
`memory.limit_in_bytes`, of the server's own cgroup and its ancestors), JupyterHub's
`MEM_LIMIT` (bytes, as spawners set it; a K/M/G/T suffix is read too) and the address-space
limit (RLIMIT_AS). Caches and pools size themselves from it; a child that died of SIGKILL
while the cgroup counted an OOM kill (or, where that cannot be read, under a limit) is said
to have been killed for memory.
"""

from __future__ import annotations

import os
import resource
import signal
from dataclasses import dataclass
from pathlib import Path

_CGROUP_ROOT = Path("/sys/fs/cgroup")
_UNLIMITED = 2**60  # v1 says "no limit" with a number near 2**63
_SUFFIXES = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


@dataclass(frozen=True)
class MemoryLimit:
    """A limit in bytes and where it comes from (said in messages and status)."""

    bytes: int
    source: str

    @property
    def mib(self) -> int:
        return self.bytes // 2**20

    def describe(self) -> str:
        return f"{self.mib} MiB ({self.source})"


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _own_cgroups(proc_cgroup: Path = Path("/proc/self/cgroup")) -> tuple[str | None, str | None]:
    """This process's cgroup path in the v2 hierarchy and in v1's memory controller."""
    text = _read(proc_cgroup) or ""
    v2 = v1 = None
    for line in text.splitlines():
        hierarchy, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hierarchy == "0" and controllers == "":
            v2 = path
        elif "memory" in controllers.split(","):
            v1 = path
    return v2, v1


def cgroup_memory_dir(root: Path = _CGROUP_ROOT) -> tuple[Path, Path, int] | None:
    """This process's memory cgroup: its folder, the hierarchy's root folder and its version
    (2 or 1); None where there is none (or it is the root, which has no limit)."""
    v2, v1 = _own_cgroups()
    if v2 is not None:
        for base in (root, root / "unified"):
            here = base / v2.lstrip("/")
            if (here / "memory.max").exists():
                return here, base, 2
    if v1 is not None:
        base = root / "memory"
        here = base / v1.lstrip("/")
        if (here / "memory.limit_in_bytes").exists():
            return here, base, 1
    return None


def cgroup_limit(root: Path = _CGROUP_ROOT) -> int | None:
    """The smallest memory limit of this process's cgroup and its ancestors (bytes)."""
    found = cgroup_memory_dir(root)
    if found is None:
        return None
    here, base, version = found
    name = "memory.max" if version == 2 else "memory.limit_in_bytes"
    limits = []
    for folder in [here, *here.parents]:
        if folder != base and base not in folder.parents:
            break
        text = _read(folder / name)
        if text and text.isdigit() and int(text) < _UNLIMITED:
            limits.append(int(text))
    return min(limits) if limits else None


def parse_size(text: str) -> int | None:
    """Bytes of '1073741824', '1G', '512M', '1.5Gi'; None for what is not a size."""
    text = text.strip().lower().removesuffix("ib").removesuffix("i").removesuffix("b")
    if not text:
        return None
    factor = _SUFFIXES.get(text[-1], 1)
    number = text[:-1] if text[-1] in _SUFFIXES else text
    try:
        value = float(number)
    except ValueError:
        return None
    return int(value * factor) if value > 0 else None


def memory_limit() -> MemoryLimit | None:
    """The smallest limit the server runs under, or None when there is none."""
    found = []
    in_cgroup = cgroup_limit()
    if in_cgroup is not None:
        found.append(MemoryLimit(in_cgroup, "the cgroup's memory limit"))
    env = parse_size(os.environ.get("MEM_LIMIT", ""))
    if env is not None:
        found.append(MemoryLimit(env, "MEM_LIMIT"))
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY and soft > 0:
        found.append(MemoryLimit(soft, "the address-space limit, ulimit -v"))
    return min(found, key=lambda limit: limit.bytes) if found else None


def oom_kills() -> int | None:
    """How many processes the OOM killer ended in this cgroup so far (None: not readable)."""
    found = cgroup_memory_dir()
    if found is None:
        return None
    here, _, version = found
    text = _read(here / ("memory.events" if version == 2 else "memory.oom_control"))
    if text is None:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill" and value.strip().isdigit():
            return int(value)
    return None


def killed_for_memory(returncode: int | None, oom_kills_before: int | None) -> bool:
    """Whether a child that exited with `returncode` was (most likely) killed for memory: it
    died of SIGKILL (not sent by us: the caller knows) and the cgroup counted an OOM kill
    since `oom_kills_before`, or, where that count cannot be read, a limit applies."""
    if returncode not in (-signal.SIGKILL, 128 + signal.SIGKILL):
        return False
    now = oom_kills()
    if now is not None and oom_kills_before is not None:
        return now > oom_kills_before
    return memory_limit() is not None


def share_of_limit(configured_mb: int, fraction: float, limit: MemoryLimit | None = None
                   ) -> int:
    """`configured_mb`, or `fraction` of the memory limit when that is smaller (MiB)."""
    limit = limit if limit is not None else memory_limit()
    if limit is None:
        return configured_mb
    return max(0, min(configured_mb, int(limit.mib * fraction)))


def memory_cause(oom_kills_before: int | None) -> str:
    """", killed for memory (...)" when the cgroup's OOM killer ended a process since
    `oom_kills_before` was read, else "": appended to why a child stopped."""
    now = oom_kills()
    if now is None or oom_kills_before is None or now <= oom_kills_before:
        return ""
    limit = memory_limit()
    within = f" of {limit.describe()}" if limit is not None else ""
    return f", killed for memory (the OOM killer ended it under the memory limit{within})"
