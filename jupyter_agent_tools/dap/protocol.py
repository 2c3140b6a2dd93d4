"""The Debug Adapter Protocol messages this client sends and reads, as typed models.

Only the requests and events the debug tool uses are declared. Field names are snake_case in
Python and camelCase on the wire (the protocol's spelling); unknown fields from an adapter are
kept, never an error, because adapters add their own.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class DapModel(BaseModel):
    """Base of every DAP body: camelCase on the wire, extra fields tolerated."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    def wire(self) -> dict[str, Any]:
        """The JSON-able body as the adapter expects it."""
        return self.model_dump(by_alias=True, exclude_none=True)


# -- envelopes -----------------------------------------------------------------------------


class Request(DapModel):
    seq: int
    type: Literal["request"] = "request"
    command: str
    arguments: dict[str, Any] | None = None


class Response(DapModel):
    seq: int
    type: Literal["response"] = "response"
    request_seq: int = Field(alias="request_seq")
    success: bool
    command: str
    message: str | None = None
    body: dict[str, Any] | None = None


class Event(DapModel):
    seq: int
    type: Literal["event"] = "event"
    event: str
    body: dict[str, Any] | None = None


# -- request arguments ---------------------------------------------------------------------


class InitializeArguments(DapModel):
    client_id: str = "jupyter-agent-tools"
    client_name: str = "jupyter-agent-tools"
    adapter_id: str = Field(alias="adapterID")
    lines_start_at1: bool = True
    columns_start_at1: bool = True
    path_format: str = "path"
    supports_variable_type: bool = True
    supports_run_in_terminal_request: bool = False


class Source(DapModel):
    name: str | None = None
    path: str | None = None


class SourceBreakpoint(DapModel):
    line: int


class SetBreakpointsArguments(DapModel):
    source: Source
    breakpoints: list[SourceBreakpoint]


class SetExceptionBreakpointsArguments(DapModel):
    filters: list[str]


class ThreadArguments(DapModel):
    """continue, next, stepIn, stepOut and pause all take just a thread id."""

    thread_id: int


class StackTraceArguments(DapModel):
    thread_id: int
    start_frame: int = 0
    levels: int


class ScopesArguments(DapModel):
    frame_id: int


class VariablesArguments(DapModel):
    variables_reference: int
    start: int = 0
    count: int


class EvaluateArguments(DapModel):
    expression: str
    frame_id: int | None = None
    context: str


class DisconnectArguments(DapModel):
    terminate_debuggee: bool = True


class TerminateArguments(DapModel):
    restart: bool = False


# -- response and event bodies -------------------------------------------------------------


class ExceptionBreakpointsFilter(DapModel):
    filter: str
    label: str = ""


class Capabilities(DapModel):
    supports_configuration_done_request: bool = False
    supports_terminate_request: bool = False
    exception_breakpoint_filters: list[ExceptionBreakpointsFilter] = []


class Breakpoint(DapModel):
    verified: bool = False
    line: int | None = None
    message: str | None = None


class SetBreakpointsResponseBody(DapModel):
    breakpoints: list[Breakpoint] = []


class Thread(DapModel):
    id: int
    name: str = ""


class ThreadsResponseBody(DapModel):
    threads: list[Thread] = []


class StackFrame(DapModel):
    id: int
    name: str = ""
    source: Source | None = None
    line: int = 0


class StackTraceResponseBody(DapModel):
    stack_frames: list[StackFrame] = []
    total_frames: int | None = None


class Scope(DapModel):
    name: str
    variables_reference: int
    expensive: bool = False


class ScopesResponseBody(DapModel):
    scopes: list[Scope] = []


class Variable(DapModel):
    name: str
    value: str = ""
    type: str | None = None
    variables_reference: int = 0


class VariablesResponseBody(DapModel):
    variables: list[Variable] = []


class EvaluateResponseBody(DapModel):
    result: str = ""
    type: str | None = None
    variables_reference: int = 0


class StoppedEventBody(DapModel):
    reason: str = ""
    description: str | None = None
    thread_id: int | None = None
    text: str | None = None
    all_threads_stopped: bool | None = None


class OutputEventBody(DapModel):
    category: str = "console"
    output: str = ""


class ProcessEventBody(DapModel):
    name: str = ""
    system_process_id: int | None = None


class ExitedEventBody(DapModel):
    exit_code: int | None = None
