"""debug: drive a debugger (debugpy, lldb-dap, delve, dart) over the Debug Adapter Protocol, or
a kernel's own debugger over the Jupyter debug protocol."""

from __future__ import annotations

from collections.abc import Hashable

from typing_extensions import override

from ...runtime import CallContext, Resource, Tier, Tool, ToolResult
from ..outputs import DebugOutput
from .actions import perform
from .args import DebugArgs


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
        "adapters says which debuggers can serve this directory and why not. A kernel: "
        "attach_kernel (the run's Python eval kernel, or notebook=/kernel_id=), breakpoints "
        "with cell (an eval cell's number, data.cell) or notebook+cell; an eval or notebook run "
        "that stops answers at once with data.stopped; continue answers at the next stop or "
        "with the cell's output; terminate detaches and the cell runs on."
    )
    Args = DebugArgs
    Output = DebugOutput
    path_fields = ("file", "program", "notebook")

    @override
    def serial_scope(self, ctx: CallContext, args: DebugArgs) -> Hashable:
        return (self.name, ctx.run.conversation_id)

    def label(self, args: DebugArgs) -> str:
        target = args.program or args.file or args.expression or ""
        return f"debug {args.action} {target}".strip()[:80]

    async def call(self, ctx: CallContext, args: DebugArgs) -> ToolResult:
        return await perform(ctx, args)
