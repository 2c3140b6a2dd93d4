"""Helpers of the memory tests (issue 46): a real server's process tree, measured."""

from __future__ import annotations

import time
from pathlib import Path

import psutil

from jupyter_agent_tools.testing.server import JupyterServerProcess

MIB = 2**20
DESCRIPTION = "a small sum to start the kernel"
EMPTY_NOTEBOOK = (
    '{"cells": [], "metadata": {"kernelspec": {"name": "python3", "language": "python",'
    ' "display_name": "Python 3"}, "language_info": {"name": "python"}}, "nbformat": 4,'
    ' "nbformat_minor": 5}')
#: Within this much of the idle tree once everything is given back (issue 46: +60 MiB).
RETURN_MARGIN = 60 * MIB
#: Longest we poll for the release (the server's idle_release_seconds is 2 s here).
RELEASE_BOUND_SECONDS = 60.0


def tree(pid: int) -> list[psutil.Process]:
    process = psutil.Process(pid)
    return [process, *process.children(recursive=True)]


def tree_rss(pid: int) -> int:
    total = 0
    for process in tree(pid):
        try:
            total += process.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return total


def children(pid: int) -> set[int]:
    return {child.pid for child in psutil.Process(pid).children(recursive=True)
            if child.status() != psutil.STATUS_ZOMBIE}


def wait_for(predicate, bound: float = RELEASE_BOUND_SECONDS) -> bool:
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.25)
    return predicate()


def command_lines(pid: int) -> list[str]:
    lines = []
    for process in tree(pid)[1:]:
        try:
            lines.append(" ".join(process.cmdline()))
        except psutil.NoSuchProcess:
            continue
    return lines


WORKER = "jupyter_agent_tools.structural.worker"
TY = "ty server"


def kernels(pid: int) -> list[str]:
    return [line for line in command_lines(pid) if "ipykernel" in line]


def project(root: Path, files: int = 400) -> None:
    """A Python project: a marker for the language servers, a script to debug, and enough
    modules that a structural search fills its workers' tree caches."""
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    (root / "app.py").write_text("total = 0\nfor i in range(3):\n    total += i\nprint(total)\n")
    package = root / "pkg"
    package.mkdir()
    body = "".join(f"def f{i}(x: int) -> int:\n    y = x + {i}\n    return y * 2\n\n"
                   for i in range(200))
    for index in range(files):
        (package / f"m{index}.py").write_text(body)


def server_pid(server: JupyterServerProcess) -> int:
    assert server._process is not None
    return server._process.pid
