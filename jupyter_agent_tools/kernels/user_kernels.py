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
from tornado.web import HTTPError

from .errors import KernelsNeedServer, NotAPythonKernel, NotebookHasNoKernel, UnknownKernel


@dataclass(frozen=True)
class UserKernel:
    """Which kernel a run borrows, and the notebook whose session named it (if any)."""

    kernel_id: str
    notebook: str | None = None  # API path (relative to the server root), as JupyterLab's


async def find_user_kernel(runtime: Any, *, kernel_id: str | None,
                           notebook: Path | None) -> UserKernel:
    """The kernel `kernel_id` names, or the one of `notebook`'s session; a KernelError when
    there is none, or it is not a Python kernel."""
    manager = runtime.kernel_manager
    if manager is None:
        raise KernelsNeedServer()
    api_path = None
    if notebook is not None:
        api_path = notebook.relative_to(runtime.root_path).as_posix()
        kernel_id = await _notebook_kernel(runtime, api_path)
    assert kernel_id is not None
    if kernel_id not in manager.list_kernel_ids():
        raise UnknownKernel(kernel_id)
    kernel_name = getattr(manager.get_kernel(kernel_id), "kernel_name", "")
    language = await kernel_spec_language(manager.kernel_spec_manager, kernel_name)
    if language != "python":
        raise NotAPythonKernel(kernel_id, language)
    return UserKernel(kernel_id, api_path)


async def _notebook_kernel(runtime: Any, api_path: str) -> str:
    # Hosted, the runtime's parent is the ServerApp, which holds the sessions of open notebooks.
    sessions = getattr(runtime.parent, "session_manager", None)
    found = []
    if sessions is not None:
        found = [s for s in await ensure_async(sessions.list_sessions())
                 if s.get("path") == api_path and s.get("kernel")]
    if not found:
        raise NotebookHasNoKernel(api_path)
    return str(found[0]["kernel"]["id"])


async def kernel_spec_language(specs: Any, kernel_name: str) -> str:
    """The language of the kernelspec `kernel_name`, lower case ("" when it is unknown).

    A local spec manager answers a KernelSpec; a gateway's answers the gateway's JSON model
    (`{"name", "spec": {"language", ...}, "resources"}`), asynchronously, over HTTP."""
    try:
        spec = await ensure_async(specs.get_kernel_spec(kernel_name))
    except (NoSuchKernel, KeyError, HTTPError):
        return ""
    if isinstance(spec, dict):
        # With KERNEL_USERNAME set, jupyter_server (2.21) asks for `kernelspecs?user=U/NAME`,
        # which a gateway answers with all its specs.
        spec = (spec.get("kernelspecs") or {}).get(kernel_name, spec)
        return str((spec.get("spec") or {}).get("language", "")).lower()
    return str(getattr(spec, "language", "")).lower()
