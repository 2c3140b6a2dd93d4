"""Finding what a language server or a debug adapter needs: a root marker and a binary that runs.

One rule for both: a tool can serve a place when one of its root markers is in a folder from
that place up to a stop folder, AND its binary is found (on PATH, then in the Python
environment's bin folder, where pip put ours) and answers its version probe. The wording of
what lacks is one too. Specs are pydantic models validated when config loads; a bad one is
logged and left out, and the others still load (as jupyter-lsp does).
"""

from __future__ import annotations

import asyncio
import glob
import logging
import os
import re
import shutil
import stat
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .processes import DEVNULL, ManagedProcess

_PROBE_STDERR_BYTES = 4096


class Spec(BaseModel):
    """The base of server and adapter specs: strict fields, no unknown ones, immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    install: str = Field(
        "", description="What installs the binary (e.g. pip install 'jupyter-agent-tools[lsp]'), "
        "said whenever it is missing.")


SpecT = TypeVar("SpecT", bound=Spec)


# -- root markers -----------------------------------------------------------------------------


# How a name's status is asked: `stat_on_disk` (blocking, in a worker thread) or, on the event
# loop, a `files.cached.CachedLookup`, which raises rather than wait for the disk.
StatOf = Callable[[Path], "os.stat_result | None"]


def stat_on_disk(path: Path) -> os.stat_result | None:
    """`os.stat(path)` following links, None where it fails (as `os.path.exists` says no)."""
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def find_root(markers: Sequence[str], path: Path, stop: Path,
              stat_of: StatOf = stat_on_disk) -> tuple[Path, str] | None:
    """The nearest folder from `path` up to `stop` holding one of `markers`, and that marker."""
    found = stat_of(path)
    folder = path if found is not None and stat.S_ISDIR(found.st_mode) else path.parent
    while True:
        for marker in markers:
            if stat_of(folder / marker) is not None:
                return folder, marker
        if folder == stop or stop not in folder.parents:
            return None
        folder = folder.parent


def missing_marker(markers: Sequence[str], where: str) -> str:
    """Why no root was found: the markers looked for and where (e.g. 'between the file and
    the run's cwd')."""
    return f"no root marker ({', '.join(markers)}) {where}"


# -- binaries -----------------------------------------------------------------------------


def search_path(path: str | None = None) -> str:
    """PATH (or `path`), then the Python environment's bin folder."""
    own = str(Path(sys.prefix) / "bin")
    return os.pathsep.join([os.environ.get("PATH", "") if path is None else path, own])


def find_executable(names: Iterable[str], path: str | None = None) -> str | None:
    """The first of `names` found: a name on the search path, a glob of names there
    (`clangd-*`), or an absolute glob (`/usr/lib/llvm-*/bin/lldb-dap`). When a glob matches
    several, the highest version wins."""
    search = search_path(path)
    for name in names:
        if os.path.isabs(name):
            matches = [m for m in glob.glob(name) if os.access(m, os.X_OK)]
        elif glob.has_magic(name):
            matches = [m for folder in search.split(os.pathsep) if folder
                       for m in glob.glob(os.path.join(folder, name)) if os.access(m, os.X_OK)]
        else:
            found = shutil.which(name, path=search)
            matches = [found] if found else []
        if matches:
            # An absolute glob's version is in its folders (llvm-19); a name's in the name.
            return max(matches, key=lambda m: _version(m if os.path.isabs(name) else
                                                        os.path.basename(m)))
    return None


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", text))


def missing_binary(names: Sequence[str], install: str = "") -> str:
    """Why a binary is missing, and what installs it when that is known."""
    return (f"no binary ({', '.join(names)}) found on PATH or in the Python environment's "
            "bin folder" + (f"; to add it: {install}" if install else ""))


@dataclass(frozen=True)
class BinaryCheck:
    """A binary's path when it is found and runs, else why not."""

    path: str | None
    problem: str | None = None


async def probe_binary(binary: str, args: Sequence[str], timeout: float) -> str | None:
    """Run `binary args` (bounded in time and output); None when it exits 0, else why not."""
    command = f"{os.path.basename(binary)} {' '.join(args)}"
    try:
        process = await ManagedProcess.start([binary, *args], stdout=DEVNULL)
    except OSError as exc:
        return f"{binary} does not run ({exc.strerror or exc})"
    done = await process.collect(timeout, _PROBE_STDERR_BYTES)
    if done.timed_out:
        return f"{binary} does not run: `{command}` did not finish within {timeout:g}s"
    if done.returncode == 0:
        return None
    said = next((line.strip() for line in done.stderr.text().splitlines() if line.strip()), "")
    # rustup's proxy for a component the toolchain lacks says so this way.
    hint = (f". Install it (for a rustup shim: rustup component add "
            f"{os.path.basename(binary)})" if "rustup" in said or "Unknown binary" in said
            else ". Install it, or name another binary in its spec")
    return (f"{binary} does not run: `{command}` exited with status {done.returncode}"
            + (f" ({said[:300]})" if said else "") + hint)


class BinaryFinder:
    """Finds binaries at call time, so an install or a removal shows, cheaply.

    A found binary is remembered and re-checked with one stat; a missing one is looked up
    again (in a worker thread) on every call. A found one is run once with its version
    arguments (bounded by `probe_timeout`), again only when the file changes.
    """

    def __init__(self, probe_timeout: float) -> None:
        self.probe_timeout = probe_timeout
        self._found: dict[tuple[tuple[str, ...], str], str | None] = {}
        self._probes: dict[tuple[str, int, int, tuple[str, ...]], str | None] = {}

    async def check(self, names: Sequence[str], version_args: Sequence[str] = (),
                    install: str = "") -> BinaryCheck:
        """`install` (what adds the binary) is said when it is missing."""
        key = (tuple(names), os.environ.get("PATH", ""))
        known = self._found.get(key)
        if not (known and os.access(known, os.X_OK)):
            known = self._found[key] = await asyncio.to_thread(find_executable, names)
        if known is None:
            return BinaryCheck(None, missing_binary(names, install))
        problem = await self._probe(known, tuple(version_args)) if version_args else None
        return BinaryCheck(None if problem else known, problem)

    async def _probe(self, binary: str, args: tuple[str, ...]) -> str | None:
        try:
            stat = os.stat(binary)
        except OSError as exc:
            return f"{binary} cannot be read ({exc.strerror})"
        key = (binary, stat.st_mtime_ns, stat.st_size, args)
        if key not in self._probes:
            self._probes[key] = await probe_binary(binary, args, self.probe_timeout)
        return self._probes[key]


# -- specs from config ------------------------------------------------------------------------


def describe_invalid(exc: Exception) -> str:
    """One line per wrong field ('root_markers: Input should be a valid tuple')."""
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(str(part) for part in error['loc']) or 'spec'}: "
                         f"{error['msg']}" for error in exc.errors())
    return f"{type(exc).__name__}: {exc}"


def load_specs(
    model: type[SpecT], builtins: Iterable[SpecT], overrides: Mapping[str, Any],
    log: logging.Logger, what: str, entry_point_group: str | None = None,
) -> tuple[dict[str, SpecT], dict[str, str]]:
    """Built-ins, then entry points, then config: a known name overrides only the fields
    given, a new one adds a spec. Each bad spec is logged and left out, with why, by name."""
    specs = {spec.name: spec for spec in builtins}
    errors: dict[str, str] = {}
    for ep in entry_points(group=entry_point_group) if entry_point_group else ():
        try:
            loaded = ep.load()
            loaded = loaded() if callable(loaded) and not isinstance(loaded, model) else loaded
            for item in loaded if isinstance(loaded, (list, tuple)) else [loaded]:
                spec = item if isinstance(item, model) else _validated(model, ep.name, item, None)
                specs[spec.name] = spec
        except Exception as exc:  # one bad plug-in never takes the others down
            log.exception("could not load %s spec %s", what, ep.name)
            errors[ep.name] = describe_invalid(exc)
    for name, data in overrides.items():
        try:
            specs[name] = _validated(model, name, data, specs.get(name))
        except (ValidationError, TypeError) as exc:
            log.error("invalid %s config %s: %s", what, name, describe_invalid(exc))
            errors[name] = describe_invalid(exc)
    return specs, errors


def _validated(model: type[SpecT], name: str, data: Any, base: SpecT | None) -> SpecT:
    if not isinstance(data, Mapping):
        raise TypeError(f"a spec is a mapping of fields, not {type(data).__name__}")
    fields = base.model_dump() if base is not None else {}
    return model.model_validate({**fields, **data, "name": name})

