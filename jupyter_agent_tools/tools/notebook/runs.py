"""Running a notebook's cells in its own kernel (exec tier), restarting it, listing notebooks.

Cells run in the kernel of the notebook's session, the one the human's view shows (started
through the server's session manager when the notebook has none). Outputs go into the cell
as the kernel sends them: live in an open notebook's shared document, saved into a closed
notebook's file when each cell ends. The agent reads each cell's outputs as eval's result
blocks, bounded. A cell that fails, times out or loses its kernel stops the run there.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from jupyter_core.utils import ensure_async
from tornado.web import HTTPError

from ...files.order import bytes_sha256
from ...kernels import errors as kernel_errors
from ...kernels.interpreters import RunInterpreters
from ...kernels.outputs import CellOutput, message_text
from ...kernels.session import CellEnd, KernelSession
from ...notebooks import (
    CellGone,
    FileCells,
    LiveOutputs,
    OutputChange,
    StaleNotebook,
    open_shared_notebook,
    write_run_state,
)
from ...notebooks.current import open_notebook_paths
from ...runtime import CallContext, ErrorCode, Resource, ToolError, ToolResult
from ..eval import kernel_error, paused_result
from ..notebook_errors import notebook_error
from .cells import OpenedNotebook, save


@dataclass
class _CellRun:
    number: int
    cell_id: str
    end: CellEnd
    output: CellOutput
    execution_count: int | None
    cut: bool = False
    gone: bool = False  # deleted while it ran: its outputs went nowhere


@dataclass
class _Runs:
    done: list[_CellRun] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (number, cell type)
    not_run: int = 0  # cells after the one that stopped the run


def timeout_of(ctx: CallContext, requested: float | None) -> float:
    runtime = ctx.runtime
    limit = runtime.max_notebook_run_timeout_seconds
    if requested is not None and requested > limit:
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"timeout_seconds {requested:g} is over this server's limit of "
                        f"{limit:g} s (c.Runtime.max_notebook_run_timeout_seconds). Ask for "
                        "less, or split the work into smaller cells.")
    return requested or runtime.notebook_run_timeout_seconds


async def _session(ctx: CallContext, opened: OpenedNotebook) -> KernelSession:
    interpreters: RunInterpreters = ctx.run.resources[Resource.KERNELS]
    try:
        return await interpreters.notebook_session(opened.api_path, opened.kernel_name,
                                                   opened.path.parent)
    except kernel_errors.KernelError as exc:
        raise kernel_error(exc) from None


async def run_cells(ctx: CallContext, opened: OpenedNotebook, numbers: list[int],
                    timeout: float, *, named: bool = True) -> ToolResult:
    """Run the cells numbered `numbers`, in order, stopping at the first that does not end
    well; the result blocks of each, and the ToolError of the one that stopped the run.
    `named`: the agent named these cells, so one with nothing to run is worth a word."""
    if isinstance(opened.editor, FileCells) and opened.editor.ensure_ids():
        # A closed notebook's run finds its cells again by id.
        await save(ctx, opened, code_changed=False)
    interpreters: RunInterpreters = ctx.run.resources[Resource.KERNELS]
    session = await _session(ctx, opened)
    if session.debug_stop.is_set():
        raise kernel_error(kernel_errors.CellPaused(session.kernel_id,
                                                    session.debug_stop_place))
    # With a debugger attached, a stop at a breakpoint answers now; the cells run on.
    result = await session.watched(_run_targets(ctx, opened, interpreters, session, numbers,
                                                timeout, named))
    if result is None:
        return paused_result({"path": opened.shown, "kernel_id": session.kernel_id,
                              "stopped": session.debug_stop_place})
    return result


async def _run_targets(ctx: CallContext, opened: OpenedNotebook, interpreters: RunInterpreters,
                       session: KernelSession, numbers: list[int], timeout: float,
                       named: bool) -> ToolResult:
    targets = [(number, *opened.editor.cell_at(number)) for number in numbers]
    deadline = time.monotonic() + timeout
    runs = _Runs()
    for position, (number, cell_id, cell_type) in enumerate(targets):
        if cell_type != "code" or cell_id is None:
            if named:
                runs.skipped.append((number, cell_type))
            continue
        if not named and not opened.editor.source(number).strip():
            # As JupyterLab runs all: an empty cell is not sent to the kernel (whose count
            # it would repeat beside the next cell's).
            continue
        cell = await _run_one(ctx, opened, interpreters, session, cell_id,
                              deadline - time.monotonic())
        runs.done.append(cell)
        if cell.end is not CellEnd.OK:
            runs.not_run = sum(t[2] == "code" for t in targets[position + 1:])
            break
    return _result(opened, session, runs, timeout)


async def _run_one(ctx: CallContext, opened: OpenedNotebook, interpreters: RunInterpreters,
                   session: KernelSession, cell_id: str, time_left: float) -> _CellRun:
    number = opened.editor.number_of(cell_id)
    if number is None:
        return _CellRun(0, cell_id, CellEnd.OK, CellOutput(), None, gone=True)
    source = opened.editor.source(number)
    runtime = ctx.runtime
    live = LiveOutputs(opened.editor, cell_id, max_bytes=runtime.max_cell_output_bytes)
    output = CellOutput(max_chars=runtime.max_output_chars,
                        max_images=interpreters.limits.max_images)

    def listener(msg_type: str, content: dict[str, Any]) -> None:
        live.take(msg_type, content)  # into the notebook
        ctx.say(message_text(msg_type, content))  # the call's output so far, if it runs long

    end = CellEnd.TIMEOUT
    if time_left > 0:
        ctx.say(f"[cell {number}, id {cell_id}]\n")
        end = await session.execute(source, output, interpreters.limits.idle_timeout_seconds,
                                    listener=listener, time_limit=time_left, history=True)
    if end is CellEnd.DIED or (end is not CellEnd.OK and not await session.alive_once_settled(
            interpreters.limits.idle_timeout_seconds)):
        end = CellEnd.DIED
        live.note(f"agent-tools: the kernel stopped while this cell ran "
                  f"({session.death_reason or 'it died'})")
    live.end()
    gone = opened.editor.number_of(cell_id) is None
    if live.started and not gone:
        gone = not await _save_outputs(ctx, opened, live)
    number = opened.editor.number_of(cell_id) or number
    return _CellRun(number, cell_id, end, output, live.execution_count, live.cut, gone)


async def _save_outputs(ctx: CallContext, opened: OpenedNotebook, live: LiveOutputs) -> bool:
    """A closed notebook: write the cell's outputs into the file (or, if it was opened in
    JupyterLab meanwhile, into its shared document, which is then used from here on).
    False when the cell is gone from the notebook."""
    if opened.file is None:
        return True
    shared = await open_shared_notebook(ctx.runtime.parent, opened.api_path)
    if shared is not None:
        if shared.number_of(live.cell_id) is None:
            return False
        shared.begin_execution(live.cell_id)
        for output in live.outputs:
            shared.change_outputs(live.cell_id, OutputChange("append", output=output))
        shared.end_execution(live.cell_id, live.execution_count)
        opened.editor, opened.file = shared, None
        return True
    runtime = ctx.runtime
    try:
        # Read afresh and written in the file's order: other runs' changes are kept.
        async with runtime.file_locks.hold([opened.path]):
            base, written = await asyncio.to_thread(_save_run_state, ctx, opened, live)
        ctx.run.seen_files.changed_bytes(opened.path, base, written)
    except CellGone:
        return False
    except StaleNotebook as exc:
        raise notebook_error(exc) from None
    return True


def _save_run_state(ctx: CallContext, opened: OpenedNotebook,
                    live: LiveOutputs) -> tuple[str, str]:
    """write_run_state in a worker thread: the hashes of the bytes read and written."""
    runtime = ctx.runtime
    base, written = write_run_state(runtime.root_path, opened.path, opened.shown,
                                    runtime.max_notebook_bytes, live.cell_id, live.outputs,
                                    live.execution_count)
    return base, bytes_sha256(written)


def _result(opened: OpenedNotebook, session: KernelSession, runs: _Runs,
            timeout: float) -> ToolResult:
    texts: list[str] = []
    blocks: list[dict[str, Any]] = []
    cells: list[dict[str, Any]] = []
    for number, cell_type in runs.skipped:
        texts.append(f"[cell {number} is a {cell_type} cell: nothing to run]")
    for cell in runs.done:
        head = (f"[cell {cell.number} (id {cell.cell_id}) was deleted while it ran: its "
                "outputs were not written]" if cell.gone else
                f"[cell {cell.number}, id {cell.cell_id}"
                + (f", In [{cell.execution_count}]" if cell.execution_count else "") + "]")
        text, cell_blocks, data = cell.output.render()
        texts.append(head + ("\n" + text if text else ""))
        blocks += [{"type": "text", "text": head}, *cell_blocks]
        cells.append({"cell": cell.number, "id": cell.cell_id,
                      "execution_count": cell.execution_count, "status": cell.end.value,
                      **({"error": data["error"]} if "error" in data else {}),
                      **({"outputs_cut": True} if cell.cut else {})})
    last = runs.done[-1] if runs.done else None
    data = {"path": opened.shown, "cells": cells, "kernel_id": session.kernel_id,
            "shared_document": opened.shared,
            "execution_count": last.execution_count if last else None}
    if opened.shared:
        texts.append("[outputs are in the open notebook's shared document]")
    text = "\n".join(texts) or "(no code cells to run)"
    if last is None or last.end is CellEnd.OK:
        return ToolResult.success(text, data, blocks)
    after = (f" The {runs.not_run} code cell{'s' if runs.not_run > 1 else ''} after it "
             "did not run." if runs.not_run else "")
    where = f"{opened.shown} [cell {last.number}]"
    match last.end:
        case CellEnd.ERROR:
            error = last.output.error or {}
            raise ToolError(ErrorCode.FAILED,
                            f"{where} raised {error.get('ename') or 'an error'}; the traceback "
                            "is above and in the notebook. Fix the cell (set_source) and run it "
                            f"again.{after}", text=text, data=data, blocks=blocks)
        case CellEnd.TIMEOUT:
            raise ToolError(ErrorCode.TIMEOUT,
                            f"{where} ran past timeout_seconds ({timeout:g} s) or produced no "
                            "output for too long, so the kernel was interrupted; what it "
                            "produced is above and in the notebook. Make it faster, split it, "
                            f"or give a longer timeout_seconds.{after}",
                            text=text, data=data, blocks=blocks)
        case CellEnd.BUSY | CellEnd.QUEUED:
            raise ToolError(ErrorCode.BUSY,
                            f"The kernel of {opened.shown} stayed busy with another cell (the "
                            f"user's) past the call's time, so {where} did not run"
                            + (" (it is queued and runs when that cell ends; its outputs will "
                               "not reach you)" if last.end is CellEnd.QUEUED else "")
                            + ". Call again once the kernel is idle, or ask the user to "
                            "interrupt their cell.", text=text, data=data, blocks=blocks)
    raise ToolError(ErrorCode.KERNEL_DIED,
                    f"The kernel of {opened.shown} stopped while {where} ran "
                    f"({session.death_reason or 'it died'}); the cell's outputs say so. Its "
                    f"variables are gone: run the notebook again (run_all) once it is back.{after}",
                    text=text, data=data, blocks=blocks)


async def restart(ctx: CallContext, opened: OpenedNotebook) -> ToolResult:
    interpreters: RunInterpreters = ctx.run.resources[Resource.KERNELS]
    try:
        session = await interpreters.restart_notebook(opened.api_path, opened.kernel_name,
                                                      opened.path.parent)
    except kernel_errors.KernelError as exc:
        raise kernel_error(exc) from None
    return ToolResult.success(
        f"Restarted the kernel of {opened.shown} ({session.kernel_id}): its variables are "
        "gone. Run the cells again (run_all) to get them back.",
        {"path": opened.shown, "kernel_id": session.kernel_id})


async def list_notebooks(ctx: CallContext) -> ToolResult:
    """The notebooks open in JupyterLab (shared documents, and sessions with a kernel) and
    the server's kernels."""
    server = ctx.runtime.parent
    notebooks: dict[str, dict[str, Any]] = {}
    for api_path in open_notebook_paths(server):
        notebooks.setdefault(api_path, {"path": api_path, "open": True, "kernel": None})
    sessions = getattr(server, "session_manager", None)
    for model in (await ensure_async(sessions.list_sessions()) if sessions else []):
        if model.get("type") not in (None, "notebook") or not model.get("kernel"):
            continue
        entry = notebooks.setdefault(model["path"], {"path": model["path"], "open": False,
                                                     "kernel": None})
        kernel = model["kernel"]
        entry["kernel"] = {"id": kernel.get("id"), "name": kernel.get("name"),
                           "state": kernel.get("execution_state")}
    manager = getattr(server, "kernel_manager", None)
    models: list[dict[str, Any]] = []
    unlisted = ""
    try:
        models = await ensure_async(manager.list_kernels()) if manager else []
    except HTTPError as exc:  # a kernel gateway's refusal (Enterprise Gateway's default)
        unlisted = (f"The kernel gateway did not list its kernels ({exc.log_message or exc}). "
                    "Enterprise Gateway lists them only with EG_LIST_KERNELS=True "
                    "(c.EnterpriseGatewayApp.list_kernels); the notebooks' kernels are above.")
    kernels = [{"id": k.get("id"), "name": k.get("name"), "state": k.get("execution_state"),
                "connections": k.get("connections")} for k in models]
    listed = sorted(notebooks.values(), key=lambda entry: entry["path"])
    lines = [f"{entry['path']}: " + ("open in JupyterLab" if entry["open"] else "not open")
             + (f", kernel {entry['kernel']['name']} {entry['kernel']['id']} "
                f"({entry['kernel']['state']})" if entry["kernel"] else ", no kernel")
             for entry in listed]
    if server is None:
        lines.append("(no Jupyter server: this runtime is embedded, so no notebook is open; "
                     "notebook run starts a kernel of the run's own)")
    if unlisted:
        lines.append(unlisted)
    else:
        lines.append(f"{len(kernels)} kernel{'' if len(kernels) == 1 else 's'} running on the "
                     "server" + "".join(f"\n  {k['id']} {k['name']} ({k['state']})"
                                        for k in kernels))
    return ToolResult.success("\n".join(lines), {"notebooks": listed, "kernels": kernels})
