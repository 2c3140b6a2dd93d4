"""debug: drive a debugger (debugpy, lldb-dap, delve, dart) over the Debug Adapter Protocol."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Literal

from pydantic import Field

from ..dap.actions import perform
from ..runtime import CallContext, Resource, Tier, Tool, ToolArgs, ToolResult

Action = Literal[
    "adapters", "status", "breakpoints", "launch", "attach", "continue", "pause", "step_over",
    "step_in", "step_out", "threads", "stack", "scopes", "variables", "evaluate", "output",
    "terminate",
]


class DebugArgs(ToolArgs):
    action: Action = Field(description="What to do; the other fields are that action's inputs.")
    file: str | None = Field(None, description="breakpoints: the source file.")
    lines: list[int] | None = Field(
        None, description="breakpoints: 1-based lines; an empty list clears the file."
    )
    program: str | None = Field(None, description="launch: the program (script or binary).")
    args: list[str] | None = Field(None, description="launch: the program's arguments.")
    port: int | None = Field(None, ge=1, le=65535, description="attach: the debug server port.")
    adapter: str | None = Field(
        None, description="launch/attach: the adapter (debugpy, lldb, delve, dart); by default "
        "chosen from the program's suffix."
    )
    thread_id: int | None = Field(
        None, description="continue/pause/step_*/stack: the thread (default: the stopped one)."
    )
    frame_id: int | None = Field(None, description="scopes/evaluate: a frame id from stack.")
    reference: int | None = Field(
        None, description="variables: a reference from scopes, variables or evaluate."
    )
    expression: str | None = Field(None, description="evaluate: the expression.")


class Debug(Tool):
    name = "debug"
    tier = Tier.EXEC
    requires = frozenset({Resource.DEBUG, Resource.WORKDIR, Resource.CONVERSATION})
    parallel_safe = False
    description = (
        "Debug a program: set breakpoints (before or after launch), launch or attach, then "
        "continue/pause/step_over/step_in/step_out (each answers where it stopped), inspect "
        "threads, stack (30 frames), scopes, variables (50 children) and evaluate in a frame; "
        "output shows the program's stdout/stderr. One session per conversation, ended by "
        "terminate or its time limit. Frame ids and references die when execution resumes. "
        "adapters says which debuggers can serve this directory and why not."
    )
    Args = DebugArgs
    path_fields = ("file", "program")

    def serial_scope(self, ctx: CallContext, args: DebugArgs) -> Hashable:
        return (self.name, ctx.run.conversation_id)

    def label(self, args: DebugArgs) -> str:
        target = args.program or args.file or args.expression or ""
        return f"debug {args.action} {target}".strip()[:80]

    async def call(self, ctx: CallContext, args: DebugArgs) -> ToolResult:
        return await perform(ctx, args)
