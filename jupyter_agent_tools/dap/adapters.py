"""Debug adapters as data: how to find and start each one, and what it needs from a checkout.

An adapter can serve a run when both hold (the same intersection rule as language servers):
one of its root markers is in the run's directory or above it (up to the server root), and
its binary is found and answers its version probe (see `discovery`).
`DebugSupervisor.adapters` (config) adds specs or overrides fields.
"""

from __future__ import annotations

import asyncio
import glob
import logging
import os
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from subprocess import DEVNULL
from typing import Any, Literal

from pydantic import Field

from ..discovery import BinaryFinder, Spec, find_root, load_specs, missing_marker
from ..processes import ManagedProcess


class AdapterSpec(Spec):
    """One debug adapter. Placeholders in `command`: {binary}, {socket}."""

    adapter_id: str = Field(description="The adapterID sent in `initialize`.")
    binaries: list[str] = Field(
        description="Candidates for {binary}: names on PATH, globs of names on PATH "
        "(lldb-dap-*), or absolute globs (/usr/lib/llvm-*/bin/lldb-dap). Highest version wins."
    )
    command: list[str] = Field(description="argv of the adapter.")
    version_args: list[str] = Field(
        default_factory=list,
        description="Arguments that make the binary print its version and exit 0; a found "
        "binary counts only when they do. Empty: no probe.")
    markers: list[str] = Field(description="Root markers, any of which makes a project.")
    program_suffixes: list[str] = Field(
        default_factory=list,
        description="Program suffixes that pick this adapter for `launch` ('' = no suffix).",
    )
    transport: Literal["stdio", "unix"] = Field(
        "stdio", description="stdio, or a unix socket the adapter listens on at {socket}."
    )
    python: bool = Field(
        False, description="The binary is a Python interpreter: the project's .venv/venv first."
    )
    launch_arguments: dict[str, Any] = Field(
        default_factory=dict, description="Extra `launch` arguments besides program/args/cwd."
    )
    attach_arguments: dict[str, Any] = Field(
        default_factory=dict, description="`attach` arguments; the string '{port}' is the port."
    )
    attach_transport: Literal["adapter", "tcp"] = Field(
        "adapter", description="attach through our adapter process, or (tcp) talk DAP straight "
        "to the debuggee's own adapter listening on 127.0.0.1:{port}."
    )
    exception_filters: list[str] = Field(
        default_factory=list,
        description="Exception breakpoint filters to set (those the adapter advertises).",
    )
    evaluate_context: str = Field("repl", description="`evaluate` context for expressions.")

    def matches_program(self, program: Path) -> bool:
        return program.suffix in self.program_suffixes


DEBUGPY_ENTRY = str(Path(__file__).with_name("debugpy_adapter.py"))

BUILTIN_ADAPTERS: dict[str, AdapterSpec] = {
    spec.name: spec
    for spec in (
        AdapterSpec(
            name="debugpy",
            adapter_id="debugpy",
            binaries=["python3", "python"],
            python=True,
            # debugpy's adapter with quick ACKs to its debuggees (see debugpy_adapter.py).
            command=["{binary}", DEBUGPY_ENTRY],
            markers=["pyproject.toml", "setup.py", "requirements.txt"],
            program_suffixes=[".py"],
            launch_arguments={
                "console": "internalConsole", "justMyCode": True,
                # The debuggee starts through that file too: its frames are not the program's.
                "rules": [{"path": DEBUGPY_ENTRY, "include": False}],
            },
            # `debugpy --listen` runs its own adapter: the client connects to it directly.
            attach_transport="tcp",
            attach_arguments={"justMyCode": True},
            exception_filters=["uncaught"],
            evaluate_context="repl",
            install="pip install 'jupyter-agent-tools[debug]'",
        ),
        AdapterSpec(
            name="lldb",
            adapter_id="lldb-dap",
            binaries=["lldb-dap", "lldb-dap-*", "/usr/lib/llvm-*/bin/lldb-dap"],
            command=["{binary}"],
            version_args=["--version"],
            markers=["Cargo.toml", "CMakeLists.txt"],
            program_suffixes=["", ".out", ".exe"],
            attach_arguments={"gdb-remote-port": "{port}"},
            # lldb-dap's `repl` context runs lldb commands; `watch` gives clean values.
            evaluate_context="watch",
            install="apt-get install lldb-19 (or your system's lldb with lldb-dap)",
        ),
        AdapterSpec(
            name="delve",
            adapter_id="go",
            binaries=["dlv"],
            # dlv dap has no stdio transport; a unix socket opens no port.
            command=["{binary}", "dap", "--listen=unix:{socket}"],
            version_args=["version"],
            transport="unix",
            markers=["go.mod"],
            program_suffixes=[".go"],
            launch_arguments={"mode": "debug"},
            # a `dlv --headless --accept-multiclient` server speaks DAP itself
            attach_transport="tcp",
            attach_arguments={"mode": "remote"},
            evaluate_context="repl",
            install="go install github.com/go-delve/delve/cmd/dlv@latest",
        ),
        AdapterSpec(
            name="dart",
            adapter_id="dart",
            binaries=["dart"],
            command=["{binary}", "debug_adapter"],
            version_args=["--version"],
            markers=["pubspec.yaml"],
            program_suffixes=[".dart"],
            attach_arguments={"vmServiceUri": "http://127.0.0.1:{port}/"},
            evaluate_context="repl",
            install="install the Dart SDK (https://dart.dev/get-dart)",
        ),
    )
}


def merge_specs(overrides: dict[str, Any], log: logging.Logger) -> tuple[
    dict[str, AdapterSpec], dict[str, str]
]:
    """The built-in specs with config applied: a known name overrides fields, a new one adds;
    an invalid one is logged and left out (its name → why, in the second dict)."""
    return load_specs(AdapterSpec, BUILTIN_ADAPTERS.values(), overrides, log, "debug adapter")


@dataclass(frozen=True)
class Availability:
    """Whether an adapter can serve a directory, and why not when it cannot."""

    spec: AdapterSpec
    project_root: Path | None
    binary: str | None
    reason: str | None

    @property
    def usable(self) -> bool:
        return self.reason is None


def project_python(*directories: Path) -> Path | None:
    """The interpreter of the project's own virtualenv (.venv, then venv), if any."""
    for directory in directories:
        for venv in (".venv", "venv"):
            candidate = directory / venv / "bin" / "python"
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate
    return None


def has_debugpy(python: Path) -> bool:
    """Whether a virtualenv interpreter can import debugpy (looked up on disk, no process)."""
    venv = python.parent.parent
    return any(glob.glob(str(venv / "lib" / "python*" / "site-packages" / "debugpy")))


async def availability(spec: AdapterSpec, cwd: Path, root: Path,
                       binaries: BinaryFinder) -> Availability:
    """Apply the marker-and-binary rule to one adapter for a run's directory."""
    found = await asyncio.to_thread(find_root, spec.markers, cwd, root)
    project = found[0] if found else None
    venv_python = None
    if spec.python:
        venv_python = await asyncio.to_thread(
            project_python, *(d for d in (project, cwd) if d is not None))
    binary: str | None
    problem: str | None
    if venv_python is not None:
        binary, problem = str(venv_python), None
    else:
        check = await binaries.check(spec.binaries, spec.version_args, spec.install)
        binary, problem = check.path, check.problem
    reasons = []
    if project is None:
        reasons.append(missing_marker(spec.markers, "in the working directory or above it"))
    if problem is not None:
        reasons.append(problem)
    return Availability(spec, project, binary, " and ".join(reasons) or None)


class LauncherScripts:
    """The interpreter a launcher script on PATH (pyenv's or asdf's shim) picks for a folder.

    A shim is a shell script that chooses a Python by folder and then execs it; given to
    debugpy it would run before both the launcher and the debuggee (60-90 ms each here). An
    ELF binary is used as it is; a script is asked once per folder for `sys.executable`,
    and each later use asks again in the background, so a changed `.python-version` shows
    from the next launch on. When the question fails, the script itself is used.
    """

    _QUESTION = ("-c", "import sys; print(sys.executable)")

    def __init__(self, timeout: float, spawn: Callable[[Coroutine[Any, Any, None]], None]) -> None:
        self.timeout = timeout
        self._spawn = spawn
        self._known: dict[tuple[str, Path], str] = {}

    async def interpreter(self, python: str, folder: Path) -> str:
        key = (python, folder)
        known = self._known.get(key)
        script, known_runs = await asyncio.to_thread(
            lambda: (_is_script(python), known is not None and _runnable(known)))
        if not script:
            return python
        if known is not None and known_runs:
            self._spawn(self._ask(python, folder))
            return known
        await self._ask(python, folder)
        return self._known.get(key, python)

    async def _ask(self, python: str, folder: Path) -> None:
        try:
            process = await ManagedProcess.start([python, *self._QUESTION], cwd=folder,
                                                 stderr=DEVNULL)
        except OSError:
            return
        done = await process.collect(self.timeout, 4096)
        answer = done.stdout.text().strip()
        if done.returncode == 0 and await asyncio.to_thread(_runnable, answer):
            self._known[(python, folder)] = answer
        else:
            self._known.pop((python, folder), None)


def _runnable(path: str) -> bool:
    return os.path.isabs(path) and os.access(path, os.X_OK)


def _is_script(path: str) -> bool:
    try:
        with open(path, "rb") as file:
            return file.read(2) == b"#!"
    except OSError:
        return False


def adapter_python(debuggee_python: str) -> str:
    """The interpreter that runs debugpy's adapter: the project's own when it has debugpy,
    else ours (debugpy is our dependency). The debuggee keeps the project's interpreter."""
    if has_debugpy(Path(debuggee_python)):
        return debuggee_python
    return sys.executable
