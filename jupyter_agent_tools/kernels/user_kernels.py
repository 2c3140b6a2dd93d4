"""A user's kernel for a run: one the server already runs (a notebook's), found and checked.

A run created with `kernel_id` or `notebook` evaluates its Python cells there, beside the
user's variables. The run borrows the kernel: it never restarts or shuts it down.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_client.kernelspec import NoSuchKernel
from jupyter_core.utils import ensure_async

from ..runtime import ErrorCode, ToolError


@dataclass(frozen=True)
class UserKernel:
    """Which kernel a run borrows, and the notebook whose session named it (if any)."""

    kernel_id: str
    notebook: str | None = None  # API path (relative to the server root), as JupyterLab's


async def find_user_kernel(runtime: Any, *, kernel_id: str | None,
                           notebook: Path | None) -> UserKernel:
    """The kernel `kernel_id` names, or the one of `notebook`'s session; a ToolError when
    there is none, or it is not a Python kernel."""
    manager = runtime.kernel_manager
    if manager is None:
        raise ToolError(ErrorCode.UNAVAILABLE,
                        "kernel_id and notebook need a Jupyter server's kernels, and this runtime "
                        "is embedded (no server kernel manager). Run the agent in the server "
                        "(jupyter lab / jupyter server), or create the run without them.")
    api_path = None
    if notebook is not None:
        api_path = notebook.relative_to(runtime.root_path).as_posix()
        kernel_id = await _notebook_kernel(runtime, api_path)
    assert kernel_id is not None
    if kernel_id not in manager.list_kernel_ids():
        raise ToolError(ErrorCode.NOT_FOUND,
                        f"The server has no kernel {kernel_id!r}. List the running kernels "
                        "(GET api/kernels) and pass one of their ids, or pass notebook instead.")
    language = await _language(manager, kernel_id)
    if language != "python":
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"Kernel {kernel_id} is a {language or 'non-Python'} kernel; eval can "
                        "borrow only a Python kernel. Create the run without kernel_id/notebook.")
    return UserKernel(kernel_id, api_path)


async def _notebook_kernel(runtime: Any, api_path: str) -> str:
    # Hosted, the runtime's parent is the ServerApp, which holds the sessions of open notebooks.
    sessions = getattr(runtime.parent, "session_manager", None)
    found = []
    if sessions is not None:
        found = [s for s in await ensure_async(sessions.list_sessions())
                 if s.get("path") == api_path and s.get("kernel")]
    if not found:
        raise ToolError(ErrorCode.NOT_FOUND,
                        f"No kernel is running for notebook {api_path!r}. Open it in JupyterLab "
                        "(or start its kernel), then create the run again.")
    return str(found[0]["kernel"]["id"])


async def _language(manager: Any, kernel_id: str) -> str:
    name = getattr(manager.get_kernel(kernel_id), "kernel_name", "")
    try:
        spec = await ensure_async(manager.kernel_spec_manager.get_kernel_spec(name))
    except (NoSuchKernel, KeyError):
        return ""
    return str(getattr(spec, "language", "")).lower()
