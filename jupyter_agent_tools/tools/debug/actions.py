"""The `debug` tool's actions: each drives the supervisor or the live session and says, in
text an agent reads and in JSON, what happened and where execution now stands. The debug
package's errors are facts; `perform` turns them into what the agent should do next."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ...dap.adapters import AdapterSpec
from ...dap.errors import (
    AdapterGone,
    AdapterUnusable,
    DapError,
    NoSession,
    NoStoppedThread,
    NothingListening,
    ProgramFinished,
    ProgramRunning,
    RequestTimeout,
    SessionExists,
    SessionFailed,
    StaleFrame,
    StaleReference,
    StaleVariables,
    StartFailed,
)
from ...dap.kernel import (
    DEBUGGER_NOT_STARTED,
    DebuggerInUse,
    DebuggerStopped,
    KernelAttachFailed,
    KernelDebugSession,
    KernelGone,
    KernelHasNoDebugger,
    Place,
    code_lines,
)
from ...dap.protocol import StackFrame
from ...dap.session import DebugSession, State
from ...dap.supervisor import DebugSupervisor
from ...files import FilesError, read_text_inside, resolve_inside
from ...kernels import errors as kernel_errors
from ...kernels.interpreters import CellRun, RunInterpreters
from ...kernels.session import KernelSession
from ...runtime import CallContext, ErrorCode, Resource, RunView, ToolError, ToolResult
from ...runtime.limits import bound_text
from ...runtime.validation import validate_action
from ..eval import eval_result, kernel_error
from ..notebook.cells import open_notebook
from .args import (
    DEBUG_ACTIONS,
    Adapters,
    Attach,
    AttachKernel,
    Breakpoints,
    DebugAction,
    DebugArgs,
    Evaluate,
    Launch,
    Output,
    Pause,
    Resume,
    Scopes,
    Stack,
    Status,
    Terminate,
    Threads,
    Variables,
)

RESUME_COMMANDS = {"continue": "continue", "step_over": "next", "step_in": "stepIn",
                   "step_out": "stepOut"}
OUTSIDE_ROOT = "outside the server's root"
# New output shown with a stop report; the whole (bounded) output is the `output` action.
STOP_OUTPUT_CHARS = 2_000


async def perform(ctx: CallContext, args: DebugArgs) -> ToolResult:
    """Run one debug action; the debug package's failures become errors that say what to do
    next."""
    action = validate_action("debug", DEBUG_ACTIONS, args)
    supervisor: DebugSupervisor = ctx.run.resources[Resource.DEBUG]
    try:
        async with supervisor.conversation(ctx.run).lock:
            if isinstance(action, AttachKernel):
                return await attach_kernel(ctx, supervisor, action)
            if isinstance(action, Breakpoints) and _on_kernel(ctx.run, supervisor, action):
                return await kernel_breakpoints(ctx, supervisor, action)
            return await _dispatch(ctx.run, supervisor, action)
    except KernelHasNoDebugger as exc:
        raise ToolError(ErrorCode.UNAVAILABLE,
                        f"The {exc.kernel_name} kernel ({exc.language}) has no debugger: its "
                        "kernel_info does not offer the Jupyter debug protocol. Only ipykernel "
                        "(Python, with debugpy installed) kernels can be debugged; debug a "
                        "script with launch instead.") from None
    except DebuggerInUse as exc:
        raise ToolError(ErrorCode.BUSY,
                        f"Another client (most likely JupyterLab's debugger) has started the "
                        f"debugger of kernel {exc.kernel_id}. ipykernel serves one debug "
                        "client: a second would share and disturb its breakpoints and stops. "
                        "Ask the user to switch JupyterLab's debugger off for that notebook, "
                        "then attach_kernel again.") from None
    except DebuggerStopped:
        raise await _debugger_stopped(ctx.run, supervisor) from None
    except KernelAttachFailed as exc:
        raise ToolError(ErrorCode.FAILED,
                        f"Attaching to the debugger of kernel {exc.kernel_id} failed: "
                        f"{exc.reason}. Check that the kernel is alive (eval) and that debugpy "
                        "is installed in its environment, then call attach_kernel again.") \
            from None
    except KernelGone as exc:
        await supervisor.fail(ctx.run, str(exc))
        raise ToolError(ErrorCode.KERNEL_DIED,
                        f"{_capital(exc.reason)} while the debugger held it; the debug session "
                        "has ended and the kernel's variables are gone. Run the code again, then "
                        "attach_kernel again to debug it.") from None
    except kernel_errors.KernelError as exc:
        raise kernel_error(exc) from None
    except NoSession as exc:
        detail = f"The last session ended: {exc.ended_because}. " if exc.ended_because else ""
        raise ToolError(ErrorCode.NO_SESSION,
                        f"{detail}No debug session is live in this conversation; call "
                        "debug with action=launch (or attach) first, or attach_kernel to "
                        "debug a kernel.") from None
    except SessionExists as exc:
        raise ToolError(ErrorCode.SESSION_EXISTS,
                        f"A debug session ({exc.adapter}, {exc.state}) is already live in this "
                        "conversation. Use it, or call terminate first.") from None
    except AdapterUnusable as exc:
        raise ToolError(ErrorCode.UNAVAILABLE,
                        f"The {exc.adapter} adapter cannot serve {exc.directory}: {exc.reason}. "
                        "See debug action=adapters.") from None
    except StartFailed as exc:
        what = "the program path and arguments" if exc.command == "launch" else "the port"
        raise ToolError(ErrorCode.FAILED,
                        f"Could not {exc.command} with {exc.adapter}: {_failure(exc.cause)}. "
                        f"Check {what}, then call {exc.command} again.",
                        text=exc.output or None) from None
    except StaleReference as exc:
        raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"{_failure(exc)}.") from None
    except SessionFailed as exc:
        raise ToolError(ErrorCode.FAILED, f"{_capital(_failure(exc))}.") from None
    except AdapterGone as exc:
        if isinstance(supervisor.conversation(ctx.run).session, KernelDebugSession):
            await supervisor.fail(ctx.run, f"the debugged kernel stopped ({exc})")
            raise ToolError(ErrorCode.KERNEL_DIED,
                            f"The debugged kernel stopped ({exc}); its variables are gone and "
                            "the debug session has ended. Run the code again (eval starts a "
                            "fresh kernel), then attach_kernel to debug it.") from None
        await supervisor.fail(ctx.run, f"the debug adapter went away ({exc})")
        raise ToolError(ErrorCode.NO_SESSION,
                        f"The debug adapter went away ({exc}); the session has ended and its "
                        "debuggee was stopped. Call launch to start again.") from None
    except RequestTimeout as exc:
        raise ToolError(ErrorCode.TIMEOUT,
                        f"The debug adapter gave {args.action} {exc}. It may be stuck: call "
                        "status, or terminate and launch again.") from None
    except DapError as exc:
        if exc.message == DEBUGGER_NOT_STARTED:
            raise await _debugger_stopped(ctx.run, supervisor) from None
        if exc.command == "evaluate":
            # Keep the whole message: lldb's last line is only a caret under the error.
            reason = bound_text(exc.message.strip() or "failed", STOP_OUTPUT_CHARS)[0]
            raise ToolError(ErrorCode.FAILED,
                            f"Evaluating {args.expression!r} failed:\n{reason}\nFix the "
                            "expression; it runs in the frame's scope.") from None
        raise ToolError(ErrorCode.FAILED,
                        f"The debug adapter refused {exc.command}: {exc.message}. Check the "
                        "arguments (ids come from threads, stack and scopes).") from None


async def _debugger_stopped(run: RunView, supervisor: DebugSupervisor) -> ToolError:
    await supervisor.fail(run, "another client stopped the kernel's debugger")
    return ToolError(ErrorCode.FAILED,
                     "The kernel's debugger was stopped by another client (JupyterLab's "
                     "debugger switched off for that kernel): this session has ended. Call "
                     "attach_kernel again.")


def _failure(exc: Exception) -> str:
    """What happened, and for the failures an agent can act on, what to do."""
    match exc:
        case NothingListening():
            return f"{exc}; start the program with its debug server listening there first"
        case NoStoppedThread():
            return f"{exc}; pass thread_id (see threads)"
        case ProgramFinished():
            return f"{exc}. Read output, or terminate and launch again"
        case ProgramRunning():
            return f"{exc}. Call pause or set a breakpoint, then try again"
        case StaleVariables():
            return f"{exc}; call scopes or evaluate again for fresh ones"
        case StaleFrame():
            return f"{exc}; call stack again for fresh frame ids"
    return str(exc)


async def _dispatch(run: RunView, supervisor: DebugSupervisor, action: DebugAction) -> ToolResult:
    match action:
        case Adapters():
            return await adapters(run, supervisor)
        case Status():
            return await status(run, supervisor)
        case Breakpoints():
            return await breakpoints(run, supervisor, action)
        case Launch():
            return await launch(run, supervisor, action)
        case Attach():
            return await attach(run, supervisor, action)
        case Terminate():
            return await terminate(run, supervisor)
        case Resume():
            return await resume(run, supervisor, action)
        case Pause():
            return await pause(run, supervisor, action)
        case Threads():
            return await threads(run, supervisor)
        case Stack():
            return await stack(run, supervisor, action)
        case Scopes():
            return await scopes(run, supervisor, action)
        case Variables():
            return await variables(run, supervisor, action)
        case Evaluate():
            return await evaluate(run, supervisor, action)
        case Output():
            return await output(run, supervisor)
        case AttachKernel():  # answered before dispatch: it needs the call's context
            raise AssertionError("attach_kernel is not dispatched")


# -- session lifecycle ---------------------------------------------------------------------


async def adapters(run: RunView, supervisor: DebugSupervisor) -> ToolResult:
    rows, lines = [], []
    for found in await supervisor.availability(run):
        rows.append({"name": found.spec.name, "usable": found.usable, "reason": found.reason,
                     "markers": found.spec.markers,
                     "project_root": run.relpath(found.project_root) if found.project_root
                     else None})
        lines.append(f"{found.spec.name}: " + ("usable" if found.usable
                                               else f"unavailable — {found.reason}"))
    return ToolResult.success("\n".join(lines), {"adapters": rows})


async def status(run: RunView, supervisor: DebugSupervisor) -> ToolResult:
    session = supervisor.session(run)
    await session.locate_stop()
    text, data = await _stop_report(run, session, with_output=False)
    header = f"{session.spec.name} session on {session.program or 'an attached process'}"
    left = supervisor.expires_in(run)
    if left is not None:
        ends = f"{left:.0f} s" if left < 60 else f"{left / 60:.0f} min"  # never "0 min"
        text += f"\n(The session ends in {ends}, at its time limit.)"
    return ToolResult.success(f"{header}: {text}",
                              {**data, "adapter": session.spec.name, "program": session.program,
                               "pid": session.debuggee_pid, "expires_in_seconds": left})


async def breakpoints(run: RunView, supervisor: DebugSupervisor, args: Breakpoints) -> ToolResult:
    assert args.file is not None  # a cell's are a kernel's (kernel_breakpoints)
    path = run.resolve(args.file)
    if not path.is_file():
        raise ToolError(ErrorCode.NOT_FOUND, f"{args.file} is not a file. Check it with glob.")
    lines = sorted(set(args.lines))
    conversation = supervisor.conversation(run)
    if lines:
        conversation.breakpoints[path] = lines
    else:
        conversation.breakpoints.pop(path, None)
    name = run.relpath(path)
    session = conversation.session
    if session is None or session.state is State.EXITED:
        when = "set; they are sent when the program is launched" if lines else "cleared"
        return ToolResult.success(f"Breakpoints for {name} {when}: {lines or 'none'}.",
                                  {"file": name, "lines": lines, "sent": False})
    verdicts = await session.set_breakpoints(path, lines)
    shown = [{"line": v.line or line, "verified": v.verified, "message": v.message}
             for line, v in zip(lines, verdicts, strict=False)]
    unverified = [b["line"] for b in shown if not b["verified"]]
    note = f" Not verified (no code there?): {unverified}." if unverified else ""
    return ToolResult.success(f"Breakpoints for {name}: {lines or 'cleared'}.{note}",
                              {"file": name, "lines": lines, "sent": True, "breakpoints": shown})


async def launch(run: RunView, supervisor: DebugSupervisor, args: Launch) -> ToolResult:
    program = run.resolve(args.program)
    if not program.exists():
        raise ToolError(ErrorCode.NOT_FOUND, f"{args.program} does not exist. Check the path "
                        "(and build it first for compiled languages).")
    spec = await _choose(run, supervisor, args.adapter, program)
    arguments = {**spec.launch_arguments, "program": str(program), "args": list(args.args),
                 "cwd": str(run.cwd)}
    session = await supervisor.start(run, spec, "launch", arguments, run.relpath(program))
    text, data = await _stop_report(run, session)
    return ToolResult.success(f"Launched {run.relpath(program)} with {spec.name}. {text}",
                              {**data, "adapter": spec.name, "pid": session.debuggee_pid})


async def attach(run: RunView, supervisor: DebugSupervisor, args: Attach) -> ToolResult:
    spec = await _choose(run, supervisor, args.adapter, None)
    arguments = _fill_port(spec.attach_arguments, args.port)
    session = await supervisor.start(run, spec, "attach", arguments, port=args.port)
    text, data = await _stop_report(run, session)
    return ToolResult.success(f"Attached with {spec.name} to port {args.port}. {text}",
                              {**data, "adapter": spec.name})


async def terminate(run: RunView, supervisor: DebugSupervisor) -> ToolResult:
    live = supervisor.session(run)
    held = live.kernel.held_cell if isinstance(live, KernelDebugSession) else None
    session = await supervisor.terminate(run)
    if isinstance(session, KernelDebugSession):
        runs_on = "" if held is None else (
            " The stopped cell " + ("ran on to its end" if held.done() else "runs on")
            + "; its output will not reach you (check its effects with eval).")
        return ToolResult.success(f"Detached from {session.program}: its breakpoints are "
                                  f"cleared and it keeps running.{runs_on}", {"state": "ended"})
    output = session.output.take_new()
    text = ("Detached from the process (it keeps running) and ended the adapter."
            if session.attached else
            "Terminated the debuggee and the adapter; the session is over.")
    if output:
        text += "\nOutput not shown before:\n" + bound_text(output, STOP_OUTPUT_CHARS)[0]
    return ToolResult.success(text, {"state": "ended", "exit_code": session.exit_code})


# -- execution -----------------------------------------------------------------------------


async def resume(run: RunView, supervisor: DebugSupervisor, args: Resume) -> ToolResult:
    session = supervisor.session(run)
    held = session.kernel.held_cell if isinstance(session, KernelDebugSession) else None
    await session.resume(RESUME_COMMANDS[args.action], args.thread_id)
    if held is not None and held.done() and session.state is not State.STOPPED:
        return _cell_ended(held.result(), _interpreters(run).limits.idle_timeout_seconds)
    text, data = await _stop_report(run, session)
    return ToolResult.success(text, data)


def _cell_ended(ended: CellRun | ToolResult, idle_timeout: float) -> ToolResult:
    """The held cell (an eval's or a notebook run's) ran to its end: its output, as eval or
    notebook run would have answered it (a failure raises their ToolError)."""
    result = ended if isinstance(ended, ToolResult) else eval_result(ended, idle_timeout)
    result.text = "The cell ran to its end.\n" + result.text
    result.data["state"] = "running"
    return result


async def pause(run: RunView, supervisor: DebugSupervisor, args: Pause) -> ToolResult:
    session = supervisor.session(run)
    await session.pause(args.thread_id)
    text, data = await _stop_report(run, session)
    return ToolResult.success(text, data)


# -- inspection ----------------------------------------------------------------------------


async def threads(run: RunView, supervisor: DebugSupervisor) -> ToolResult:
    found = await supervisor.session(run).threads()
    rows = [{"id": t.id, "name": t.name} for t in found]
    return ToolResult.success("\n".join(f"thread {t.id}: {t.name}" for t in found)
                              or "No threads.", {"threads": rows})


async def stack(run: RunView, supervisor: DebugSupervisor, args: Stack) -> ToolResult:
    session = supervisor.session(run)
    frames = await session.stack(args.thread_id)
    rows = await _frame_rows(run, frames, session)
    text = "\n".join(f"frame {r['id']}: {r['name']} at {_where(r)}" for r in rows)
    return ToolResult.success(text or "No frames.", {"frames": rows})


async def scopes(run: RunView, supervisor: DebugSupervisor, args: Scopes) -> ToolResult:
    found = await supervisor.session(run).scopes(args.frame_id)
    rows = [{"name": s.name, "reference": s.variables_reference} for s in found]
    return ToolResult.success(
        "\n".join(f"{s['name']}: reference {s['reference']}" for s in rows) or "No scopes.",
        {"scopes": rows})


async def variables(run: RunView, supervisor: DebugSupervisor, args: Variables) -> ToolResult:
    found, more = await supervisor.session(run).variables(args.reference)
    rows = [{"name": v.name, "value": v.value, "type": v.type,
             "reference": v.variables_reference} for v in found]
    lines = [f"{r['name']}" + (f": {r['type']}" if r["type"] else "") + f" = {r['value']}"
             + (f"  [reference {r['reference']}]" if r["reference"] else "") for r in rows]
    if more:
        lines.append(f"[only the first {len(rows)} children are shown]")
    return ToolResult.success("\n".join(lines) or "No variables.",
                              {"variables": rows, "truncated": more})


async def evaluate(run: RunView, supervisor: DebugSupervisor, args: Evaluate) -> ToolResult:
    result = await supervisor.session(run).evaluate(args.expression, args.frame_id)
    text = f"{args.expression} = {result.result}"
    if result.variables_reference:
        text += f"  [reference {result.variables_reference}: expand with variables]"
    return ToolResult.success(text, {"result": result.result, "type": result.type,
                                     "reference": result.variables_reference})


async def output(run: RunView, supervisor: DebugSupervisor) -> ToolResult:
    session = supervisor.session(run)
    buffer = session.output
    buffer.take_new()
    text = buffer.text()
    note = f"[{buffer.dropped} earlier characters were dropped]\n" if buffer.dropped else ""
    return ToolResult.success(note + text if text else "(no output yet)",
                              {"output": text, "dropped_chars": buffer.dropped})


# -- helpers -------------------------------------------------------------------------------


async def _choose(run: RunView, supervisor: DebugSupervisor, name: str | None,
            program: Path | None) -> AdapterSpec:
    """The adapter named, else the one whose program suffix matches, else the first usable."""
    if name is not None:
        if name not in supervisor.specs:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"No adapter {name!r}. Known: {', '.join(supervisor.specs)}.")
        return supervisor.specs[name]
    if program is not None:
        for spec in supervisor.specs.values():
            if spec.matches_program(program):
                return spec
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"No adapter debugs {program.name} by its suffix; pass adapter "
                        f"({', '.join(supervisor.specs)}).")
    for found in await supervisor.availability(run):
        if found.usable:
            return found.spec
    raise ToolError(ErrorCode.UNAVAILABLE,
                    "No debug adapter can serve this directory; see debug action=adapters.")


def _fill_port(template: Any, port: int) -> Any:
    if template == "{port}":
        return port
    if isinstance(template, str):
        return template.replace("{port}", str(port))
    if isinstance(template, dict):
        return {key: _fill_port(value, port) for key, value in template.items()}
    if isinstance(template, list):
        return [_fill_port(value, port) for value in template]
    return template


async def _stop_report(run: RunView, session: DebugSession, with_output: bool = True
                 ) -> tuple[str, dict[str, Any]]:
    """Where execution stands, in a sentence, plus the output it printed since last shown."""
    data: dict[str, Any] = {"state": session.state.value}
    if session.state is State.STOPPED and session.stop is not None:
        stop = session.stop
        where = ""
        data.update(reason=stop.reason, thread_id=stop.thread_id, description=stop.description)
        if stop.frame is not None:
            row = (await _frame_rows(run, [stop.frame], session))[0]
            data["frame"] = row
            where = f" at {_where(row)} in {row['name']}"
            if row.get("source_line") is not None:
                where += f"\n  {row['line']} | {row['source_line']}"
        text = f"Stopped ({stop.reason}) in thread {stop.thread_id}{where}"
        if isinstance(session, KernelDebugSession):
            data["stopped"] = await session.stop_place()
    elif session.state is State.EXITED:
        data["exit_code"] = session.exit_code
        code = "" if session.exit_code is None else f" with exit code {session.exit_code}"
        text = f"The program finished{code}. Read output, or terminate to end the session"
    elif isinstance(session, KernelDebugSession):
        held = session.kernel.held_cell
        text = (f"The cell is still running after {session.limits.stop_wait:g}s. Call pause to "
                "stop it, or status to check again" if held is not None and not held.done()
                else "Attached; no cell is running. Set breakpoints, then run code with eval "
                     "or notebook run: a stop answers at once")
    else:
        text = (f"Still running after {session.limits.stop_wait:g}s. Call pause to stop it, or "
                "status to check again")
    if with_output:
        new = session.output.take_new()
        if new:
            shown = bound_text(new, STOP_OUTPUT_CHARS, what="output")[0]
            text += f"\nOutput since last shown:\n{shown}"
            data["new_output"] = shown
    return text, data


async def _frame_rows(run: RunView, frames: list[StackFrame],
                      session: DebugSession | None = None) -> list[dict[str, Any]]:
    """Frames as results show them, with their source lines read in a worker thread; in a
    kernel, a frame of a cell names the cell."""
    rows = await asyncio.to_thread(lambda: [_frame_row(run, frame) for frame in frames])
    if isinstance(session, KernelDebugSession):
        for row, frame in zip(rows, frames, strict=True):
            place = await session.place_of(frame)
            if place is not None:
                row.pop("outside_root", None)
                if place.file is None:
                    row.pop("file", None)  # a cell's file is the kernel's, not the agent's
                found = place.data(frame.line)
                if "id" in found:  # a frame's id is the frame's
                    found["cell_id"] = found.pop("id")
                row.update(found, source_line=place.line_text(frame.line),
                           where=place.shown(frame.line))
    return rows


def _frame_row(run: RunView, frame: StackFrame) -> dict[str, Any]:
    path = frame.source.path if frame.source is not None else None
    row: dict[str, Any] = {"id": frame.id, "name": frame.name, "line": frame.line,
                           "file": run.relpath(Path(path)) if path else None}
    if not path:
        return row
    try:  # the adapter may name a file outside the root (through a symlinked folder)
        real = resolve_inside(run.runtime.root_path, run.runtime.root_path, path)
    except FilesError:
        row["outside_root"] = True
        return row
    if frame.line > 0:
        row["source_line"] = _source_line(run, real, frame.line)
    return row


def _where(row: dict[str, Any]) -> str:
    if "where" in row:
        return str(row["where"])
    where = f"{row['file'] or '?'}:{row['line']}"
    return f"{where} ({OUTSIDE_ROOT})" if row.get("outside_root") else where


def _source_line(run: RunView, path: Path, line: int) -> str | None:
    try:
        lines = read_text_inside(run.runtime.root_path, path,
                                 run.runtime.max_read_bytes).splitlines()
    except FilesError:
        return None  # binary or missing: the location alone must do
    return lines[line - 1].strip()[:200] if 0 < line <= len(lines) else None


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


# -- kernels -------------------------------------------------------------------------------


def _on_kernel(run: RunView, supervisor: DebugSupervisor, args: Breakpoints) -> bool:
    """Whether breakpoints go to a kernel's debugger (a cell, or a file while attached)."""
    return args.cell is not None or isinstance(supervisor.conversation(run).session,
                                               KernelDebugSession)


def _interpreters(run: RunView) -> RunInterpreters:
    interpreters: RunInterpreters | None = run.resources.get(Resource.KERNELS)
    if interpreters is None:
        raise ToolError(ErrorCode.UNAVAILABLE, "This run has no kernels to debug (the kernels "
                        "resource is not attached); debug a script with launch instead.")
    return interpreters


async def attach_kernel(ctx: CallContext, supervisor: DebugSupervisor,
                        args: AttachKernel) -> ToolResult:
    run = ctx.run
    interpreters = _interpreters(run)
    kernel, label = await _kernel_to_debug(ctx, interpreters, args)
    session = await supervisor.attach_kernel(run, kernel, label,
                                             interpreters.eval_cells)
    text, data = await _stop_report(run, session)
    return ToolResult.success(f"Attached to the debugger of {label}. {text}.",
                              {**data, "kernel_id": kernel.kernel_id, "adapter": "ipykernel"})


async def _kernel_to_debug(ctx: CallContext, interpreters: RunInterpreters,
                           args: AttachKernel) -> tuple[KernelSession, str]:
    if args.notebook is not None:
        opened = await open_notebook(ctx, args.notebook)
        kernel = await interpreters.notebook_session(opened.api_path, opened.kernel_name,
                                                     opened.path.parent)
        return kernel, f"the kernel of {opened.shown}"
    if args.kernel_id is None:
        return await interpreters.python_session(), "the run's Python kernel"
    known = [*interpreters.sessions.values(), *interpreters.notebooks.values()]
    if interpreters.user_kernel is not None and \
            interpreters.user_kernel.kernel_id == args.kernel_id:
        return await interpreters.python_session(), f"kernel {args.kernel_id}"
    for kernel in known:
        if kernel.kernel_id == args.kernel_id:
            return kernel, f"kernel {args.kernel_id}"
    raise ToolError(ErrorCode.NOT_FOUND,
                    f"This run does not use kernel {args.kernel_id}. Attach to a notebook's "
                    "kernel with notebook=<path>, or to the run's own with neither.")


async def kernel_breakpoints(ctx: CallContext, supervisor: DebugSupervisor,
                             args: Breakpoints) -> ToolResult:
    run = ctx.run
    session = supervisor.session(run)
    if not isinstance(session, KernelDebugSession):
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        "Breakpoints in a cell need a kernel's debugger, and this "
                        f"conversation's session is {session.spec.name}'s. Terminate it, then "
                        "attach_kernel.")
    place, path = await _place(ctx, args)
    lines = sorted(set(args.lines))
    if lines:
        holding = await asyncio.to_thread(code_lines, place.source)
        empty = [line for line in lines if line not in holding]
        if empty:
            shown = place.name
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"No code on line(s) {empty} of {shown} (blank, a comment, past "
                            "its end, or the code does not compile): a breakpoint there would "
                            f"never stop. Lines with code: {_ranges(sorted(holding))}. "
                            "No breakpoint was set.")
    if path is None:
        path = await session.dump_cell(place.source)
    session.places[path] = place
    verdicts = await session.set_breakpoints(Path(path), lines)
    shown_rows = [{"line": v.line or line, "verified": v.verified}
                  for line, v in zip(lines, verdicts, strict=False)]
    where = place.name
    text = (f"Breakpoints in {where}: {lines}. Run the code (eval, notebook run): a stop "
            "answers at once." if lines else f"Breakpoints in {where} cleared.")
    found = place.data(0)
    del found["line"]
    return ToolResult.success(text, {**found, "lines": lines, "sent": True,
                                     "breakpoints": shown_rows})


async def _place(ctx: CallContext, args: Breakpoints) -> tuple[Place, str | None]:
    """The code the breakpoints are in, and the file the kernel runs it under (None: a cell,
    whose file the kernel names)."""
    run = ctx.run
    if args.file is not None:
        path = run.resolve(args.file)
        try:
            text = await asyncio.to_thread(read_text_inside, run.runtime.root_path, path,
                                           run.runtime.max_read_bytes)
        except FilesError:
            raise ToolError(ErrorCode.NOT_FOUND, f"{args.file} is not a readable text file. "
                            "Check it with glob.") from None
        return Place(text, file=run.relpath(path)), str(path)
    assert args.cell is not None
    if args.notebook is None:
        cells = _interpreters(run).eval_cells
        number = args.cell
        if isinstance(number, str) and number.isdecimal():
            number = int(number)
        code = cells.code(number) if isinstance(number, int) else None
        if code is None:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"No eval cell {args.cell!r}: this run has run {cells.count} Python "
                            "cells (numbered from 1, as eval results' data.cell; only the "
                            "newest are kept). Pass notebook for a notebook's cell.")
        return Place(code, cell=number), None
    opened = await open_notebook(ctx, args.notebook)
    number = opened.resolve(args.cell)
    cell_id, cell_type = opened.editor.cell_at(number)
    if cell_type != "code":
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"Cell {number} of {opened.shown} is a {cell_type} cell: no code runs "
                        "there. Choose a code cell.")
    return Place(opened.editor.source(number), cell=number, cell_id=cell_id,
                 notebook=opened.shown), None


def _ranges(lines: list[int]) -> str:
    if not lines:
        return "none"
    spans, start, end = [], lines[0], lines[0]
    for line in lines[1:]:
        if line == end + 1:
            end = line
            continue
        spans.append(f"{start}-{end}" if end > start else str(start))
        start = end = line
    spans.append(f"{start}-{end}" if end > start else str(start))
    return ", ".join(spans)
