"""`regression_run()`: a fresh run on the server, over a fresh copy of a project, in one line.

Under the pytest plugin the kernel's environment names the server (see server.py); in a
notebook opened by hand it is the newest running Jupyter server of this user, and the copies
go beside the notebook — inside the user's repository when the server was started at a
checkout (Binder). There they must stay visible to the run's own tools, which honour
.gitignore, yet out of `git status`: the checkout's local exclude file lists the folder.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..client import AgentToolsClient, RemoteRun
from ..demo.tour import SAMPLE_PROJECT
from .server import ENV_ROOT, ENV_TOKEN, ENV_URL

#: Where the projects of regression runs are copied, under the server's root.
RUNS_FOLDER = "agent-tools-runs"


class SkipNotebook(Exception):  # the name is what the plugin recognises
    """Raise in a cell to skip it and the rest of its notebook (the reason is reported)."""


@dataclass
class RegressionRun(RemoteRun):
    """A `RemoteRun` that also knows where its project copy lives (`path`) and removes it."""

    path: Path = field(default_factory=Path)

    def require(self, *tools: str) -> None:
        """Skip the rest of the notebook unless this run has every one of `tools`."""
        missing = sorted(set(tools) - set(self.tool_names()))
        if missing:
            raise SkipNotebook(f"this install has no {', '.join(missing)}")

    def close(self) -> None:
        """Release the run on the server, then remove its project copy."""
        try:
            super().close()
        finally:
            shutil.rmtree(self.path, ignore_errors=True)


def server_client() -> tuple[AgentToolsClient, Path]:
    """The server to test against, and its root directory."""
    url, token, root = os.environ.get(ENV_URL), os.environ.get(ENV_TOKEN), os.environ.get(ENV_ROOT)
    if url and root:
        return AgentToolsClient(url, token or ""), Path(root)
    from jupyter_server.serverapp import list_running_servers

    servers = sorted(list_running_servers(), key=lambda info: info.get("pid", 0))
    if not servers:
        raise RuntimeError("No Jupyter server to test against: run this notebook through "
                           "`pytest NOTEBOOK` (the agent-tools plugin starts one), or in JupyterLab.")
    info = servers[-1]
    return AgentToolsClient(info["url"], info.get("token", "")), Path(info["root_dir"])


def regression_run(project: str | Path | None = "sample", **options: Any) -> RegressionRun:
    """A new run whose working directory is a fresh copy of `project`.

    `project`: "sample" (the bundled sample project), a directory to copy, or None (empty).
    `options` are the contract's run options (surface, approvals, space, vibe,
    conversation_id); a conversation id is made up when none is given, so `debug` works.
    """
    client, root = server_client()
    root = root.resolve()
    parent = _runs_folder(root)
    workdir = Path(tempfile.mkdtemp(prefix="run-", dir=parent))
    if project is not None:
        source = SAMPLE_PROJECT if project == "sample" else Path(project)
        shutil.copytree(source, workdir, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    options.setdefault("conversation_id", f"regression-{uuid.uuid4().hex[:8]}")
    descriptor = client.request("POST", "runs", {"cwd": workdir.relative_to(root).as_posix(),
                                                 **options})
    run = RegressionRun(client, descriptor["id"], descriptor, path=workdir)
    atexit.register(_close_quietly, run)
    return run


def _runs_folder(root: Path) -> Path:
    """Under the plugin, the server's scratch root; by hand, beside the notebook (if inside)."""
    here = Path.cwd().resolve()
    base = here if here.is_relative_to(root) and ENV_ROOT not in os.environ else root
    folder = base / RUNS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    _exclude_from_git_status(folder)
    return folder


def _exclude_from_git_status(folder: Path) -> None:
    """List `folder` in its git checkout's `info/exclude` (local to the clone, never
    committed, not read by the tools' walker), so scratch copies never show as untracked."""
    try:
        found = subprocess.run(
            ["git", "rev-parse", "--show-toplevel", "--path-format=absolute",
             "--git-path", "info/exclude"],
            cwd=folder, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return  # no git here: nothing lists untracked files
    lines = found.stdout.splitlines()
    if found.returncode != 0 or len(lines) != 2:
        return  # not inside a git checkout
    top, exclude = Path(lines[0]), Path(lines[1])
    pattern = f"/{folder.resolve().relative_to(top.resolve()).as_posix()}/"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    existing = exclude.read_text() if exclude.is_file() else ""
    if pattern not in existing.splitlines():
        with exclude.open("a") as handle:
            handle.write(("\n" if existing and not existing.endswith("\n") else "")
                         + f"# scratch copies of agent-tools regression runs\n{pattern}\n")


def _close_quietly(run: RegressionRun) -> None:
    """At kernel exit: the server may already be gone, which is fine."""
    try:
        run.close()
    except Exception:  # noqa: BLE001 — best effort at exit; the server releases runs anyway
        shutil.rmtree(run.path, ignore_errors=True)
