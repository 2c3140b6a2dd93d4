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
from ...dap.protocol import StackFrame
from ...dap.session import DebugSession, State
from ...dap.supervisor import DebugSupervisor
from ...files import FilesError, read_text_inside, resolve_inside
from ...runtime import CallContext, ErrorCode, Resource, RunView, ToolError, ToolResult
from ...runtime.limits import bound_text
from ...runtime.validation import validate_action
from .args import (
    DEBUG_ACTIONS,
    Adapters,
    Attach,
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
            return await _dispatch(ctx.run, supervisor, action)
    except NoSession as exc:
        detail = f"The last session ended: {exc.ended_because}. " if exc.ended_because else ""
        raise ToolError(ErrorCode.NO_SESSION,
                        f"{detail}No debug session is live in this conversation; call "
                        "debug with action=launch (or attach) first.") from None
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
        await supervisor.fail(ctx.run, f"the debug adapter went away ({exc})")
        raise ToolError(ErrorCode.NO_SESSION,
                        f"The debug adapter went away ({exc}); the session has ended and its "
                        "debuggee was stopped. Call launch to start again.") from None
    except RequestTimeout as exc:
        raise ToolError(ErrorCode.TIMEOUT,
                        f"The debug adapter gave {args.action} {exc}. It may be stuck: call "
                        "status, or terminate and launch again.") from None
    except DapError as exc:
        if exc.command == "evaluate":
            # Keep the whole message: lldb's last line is only a caret under the error.
            reason = bound_text(exc.message.strip() or "failed", STOP_OUTPUT_CHARS)[0]
            raise ToolError(ErrorCode.FAILED,
                            f"Evaluating {args.expression!r} failed:\n{reason}\nFix the "
                            "expression; it runs in the frame's scope.") from None
        raise ToolError(ErrorCode.FAILED,
                        f"The debug adapter refused {exc.command}: {exc.message}. Check the "
                        "arguments (ids come from threads, stack and scopes).") from None


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
    session = await supervisor.terminate(run)
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
    await session.resume(RESUME_COMMANDS[args.action], args.thread_id)
    text, data = await _stop_report(run, session)
    return ToolResult.success(text, data)


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
    frames = await supervisor.session(run).stack(args.thread_id)
    rows = await _frame_rows(run, frames)
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
            row = (await _frame_rows(run, [stop.frame]))[0]
            data["frame"] = row
            where = f" at {_where(row)} in {row['name']}"
            if row.get("source_line") is not None:
                where += f"\n  {row['line']} | {row['source_line']}"
        text = f"Stopped ({stop.reason}) in thread {stop.thread_id}{where}"
    elif session.state is State.EXITED:
        data["exit_code"] = session.exit_code
        code = "" if session.exit_code is None else f" with exit code {session.exit_code}"
        text = f"The program finished{code}. Read output, or terminate to end the session"
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


async def _frame_rows(run: RunView, frames: list[StackFrame]) -> list[dict[str, Any]]:
    """Frames as results show them, with their source lines read in a worker thread."""
    return await asyncio.to_thread(lambda: [_frame_row(run, frame) for frame in frames])


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
