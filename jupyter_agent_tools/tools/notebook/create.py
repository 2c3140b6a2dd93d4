"""notebook create: a new notebook as JupyterLab writes one, so its cell numbers hold.

JupyterLab adds an empty cell to a notebook that has none when it opens it, which shifts
every number an agent was told; so a new notebook always has a cell (the cells given, else
one empty code cell). Its metadata are those JupyterLab writes: the kernelspec
(display_name, language, name) and language_info; cells have ids (nbformat 4.5).
"""

from __future__ import annotations

import asyncio
import platform
import sys
from pathlib import Path
from typing import Any

from ...files import write_files_atomically
from ...files.order import bytes_sha256
from ...notebooks import is_notebook_path
from ...runtime import CallContext, ErrorCode, ToolError, ToolResult
from .args import Create

# What JupyterLab writes as language_info once a Python kernel answered (ipykernel's).
_PYTHON_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
}


async def create(ctx: CallContext, action: Create) -> ToolResult:
    """Write the new notebook; refused when anything is at `path` already."""
    path = await asyncio.to_thread(ctx.run.resolve, action.path)
    shown = ctx.run.relpath(path)
    if not is_notebook_path(path.name):
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"{shown} is not a notebook name: give the path with the .ipynb suffix.")
    kernelspec, language_info = await _kernel_metadata(ctx, action.kernel)
    text = _new_notebook(kernelspec, language_info, action.cells or [""])
    data = text.encode("utf-8")
    async with ctx.runtime.file_locks.hold([path]):
        if await asyncio.to_thread(path.exists):
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"{shown} exists already; nothing was written. Add cells to it "
                            "with insert, or create the notebook under another name.")
        # based_on None: created only if no file took the name meanwhile (stale_edit else).
        await asyncio.to_thread(write_files_atomically, {path: data},
                                root=ctx.runtime.root_path, based_on={path: None},
                                relpath=ctx.run.relpath)
    ctx.run.seen_files.saw_bytes(path, bytes_sha256(data))
    ctx.wrote(path, created=[path])
    import nbformat

    cells = nbformat.reads(text, as_version=4).cells
    api_path = path.relative_to(ctx.runtime.root_path).as_posix()
    ctx.run.notebooks.saw(api_path, [(cell.id, cell.cell_type, cell.source, number)
                                     for number, cell in enumerate(cells, 1)])
    refs = [{"cell": number, "id": cell.id} for number, cell in enumerate(cells, 1)]
    given = (f"{len(cells)} code cell{'' if len(cells) == 1 else 's'}" if action.cells
             else "one empty code cell (so JupyterLab adds none and numbers hold)")
    return ToolResult.success(
        f"Created {shown} with {given}, kernel {kernelspec['display_name']} "
        f"({kernelspec['name']}). Cells are numbered from 1; add more with insert.",
        {"path": shown, "cells": refs, "cell_count": len(cells), "shared_document": False,
         "created": True, "kernel": kernelspec["name"]})


def _new_notebook(kernelspec: dict[str, Any], language_info: dict[str, Any],
                  sources: list[str]) -> str:
    """The notebook's JSON as JupyterLab (through nbformat) writes it."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    notebook = new_notebook(cells=[new_code_cell(source) for source in sources],
                            metadata={"kernelspec": kernelspec,
                                      "language_info": language_info})
    text = nbformat.writes(notebook, version=4)
    return text if text.endswith("\n") else text + "\n"


async def _kernel_metadata(ctx: CallContext, kernel: str | None
                           ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(kernelspec, language_info) for the kernel named `kernel` (default: the server's
    default kernel); invalid_arguments naming the kernels there are when it is unknown."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
    from jupyter_core.utils import ensure_async

    server = ctx.runtime.parent
    specs = getattr(server, "kernel_spec_manager", None) or KernelSpecManager()
    default = getattr(getattr(server, "kernel_manager", None), "default_kernel_name", None)
    name = kernel or default or "python3"
    try:
        spec = await ensure_async(specs.get_kernel_spec(name))
    except (NoSuchKernel, KeyError):
        spec = None
    if spec is None:
        try:
            known = sorted(await ensure_async(specs.find_kernel_specs()))
        except Exception:  # noqa: BLE001 - only for the message: a gateway may not list them
            known = []
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"There is no kernel {name!r} on this server; nothing was created. "
                        + (f"Kernels: {', '.join(known)}." if known else
                           "notebook list shows the kernels running."))
    language = str(getattr(spec, "language", "") or "python")
    kernelspec = {"display_name": str(getattr(spec, "display_name", name)),
                  "language": language, "name": name}
    info: dict[str, Any] = {"name": language}
    if language == "python":
        info = dict(_PYTHON_INFO)
        argv = list(getattr(spec, "argv", []) or [])
        if argv and (argv[0] in ("python", "python3", "{python}")
                     or Path(argv[0]).resolve() == Path(sys.executable).resolve()):
            info["version"] = platform.python_version()
    return kernelspec, info
