"""The `debug` tool's arguments: one flat object for the agent (what the OpenAI and Anthropic
formats handle best), validated per call into the model of the action it names."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from ...runtime import ToolArgs

Action = Literal[
    "adapters", "status", "breakpoints", "launch", "attach", "attach_kernel", "continue", "pause", "step_over",
    "step_in", "step_out", "threads", "stack", "scopes", "variables", "evaluate", "output",
    "terminate",
]


class DebugArgs(ToolArgs):
    action: Action = Field(description="What to do; the other fields are that action's inputs.")
    file: str | None = Field(None, description="breakpoints: the source file.")
    notebook: str | None = Field(
        None, description="attach_kernel: debug this notebook's kernel; breakpoints: the "
        "notebook whose cell `cell` is meant.")
    kernel_id: str | None = Field(
        None, description="attach_kernel: debug this kernel of the server (default: the run's "
        "own Python eval kernel, started if needed).")
    cell: int | str | None = Field(
        None, description="breakpoints in a kernel: a cell of `notebook` (number from 1 or cell "
        "id), or without notebook the run's eval cell of that number (results' data.cell).")
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


# -- per action: what each one takes, required where it needs it ---------------------------
# Descriptions are the hints of "debug <action> needs `<field>`: ..." messages.


class _Action(BaseModel):
    model_config = ConfigDict(extra="ignore")  # the flat object carries every action's fields


class Adapters(_Action):
    action: Literal["adapters"]


class Status(_Action):
    action: Literal["status"]


class Breakpoints(_Action):
    action: Literal["breakpoints"]
    file: str | None = Field(None, description="the source file (or cell, in a kernel).")
    notebook: str | None = None
    cell: int | str | None = None
    lines: list[int] = Field(description="its 1-based lines (an empty list clears that file).")

    @model_validator(mode="after")
    def _file_or_cell(self) -> Breakpoints:
        if (self.file is None) == (self.cell is None):
            raise ValueError("breakpoints takes `file`, or `cell` (with `notebook` for a "
                             "notebook's cell, without for an eval cell of the run)")
        if self.notebook is not None and self.cell is None:
            raise ValueError("breakpoints in a notebook needs `cell` (its number or id)")
        return self


class AttachKernel(_Action):
    action: Literal["attach_kernel"]
    kernel_id: str | None = None
    notebook: str | None = None

    @model_validator(mode="after")
    def _one_kernel(self) -> AttachKernel:
        if self.kernel_id is not None and self.notebook is not None:
            raise ValueError("attach_kernel takes kernel_id or notebook, not both")
        return self


class Launch(_Action):
    action: Literal["launch"]
    program: str = Field(min_length=1, description="a path to run.")
    args: list[str] = Field(default_factory=list)
    adapter: str | None = None


class Attach(_Action):
    action: Literal["attach"]
    port: int = Field(description="where the debuggee's debug server listens.")
    adapter: str | None = None


class Terminate(_Action):
    action: Literal["terminate"]


class Resume(_Action):
    action: Literal["continue", "step_over", "step_in", "step_out"]
    thread_id: int | None = None


class Pause(_Action):
    action: Literal["pause"]
    thread_id: int | None = None


class Threads(_Action):
    action: Literal["threads"]


class Stack(_Action):
    action: Literal["stack"]
    thread_id: int | None = None


class Scopes(_Action):
    action: Literal["scopes"]
    frame_id: int = Field(description="a frame id from stack.")


class Variables(_Action):
    action: Literal["variables"]
    reference: int = Field(description="a reference from scopes, variables or evaluate.")


class Evaluate(_Action):
    action: Literal["evaluate"]
    expression: str = Field(min_length=1, description="the expression to evaluate.")
    frame_id: int | None = None


class Output(_Action):
    action: Literal["output"]


DebugAction = Annotated[
    Adapters | Status | Breakpoints | Launch | Attach | AttachKernel | Terminate | Resume | Pause | Threads
    | Stack | Scopes | Variables | Evaluate | Output,
    Field(discriminator="action"),
]
DEBUG_ACTIONS: TypeAdapter[DebugAction] = TypeAdapter(DebugAction)
