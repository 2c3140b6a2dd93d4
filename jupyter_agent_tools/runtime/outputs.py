"""What a tool's structured result looks like: the base of every tool's `Output` model.

A result's `data` is what a program reads (MCP's `structuredContent`); a failed call carries
`error: {code, message}` beside whatever data it produced before failing. Each tool declares
the keys its `data` carries in an `Output` subclass: MCP clients get it as the tool's
`outputSchema` and check every result against it. Keys a tool adds in some cases only (or a
job's result, which carries the data of the call it ran) are allowed beyond those declared.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .results import ErrorCode


class ErrorInfo(BaseModel):
    """A failed call's contract error."""

    model_config = ConfigDict(extra="forbid")

    code: str = Field(description="The contract's error code.",
                      json_schema_extra={"enum": [code.value for code in ErrorCode]})
    message: str = Field(description="What happened and what to do next.")


class ToolOutput(BaseModel):
    """The structured result of any tool: its keys are optional (a failed call may carry few),
    and a tool's own keys come beside these."""

    model_config = ConfigDict(extra="allow")

    error: ErrorInfo | None = Field(None, description="Present when the call failed.")
    truncated: bool | None = Field(
        None, description="True when the text or the structured content was cut to the "
        "output limit (long strings keep their head and tail, with a note between).")


class LongCallOutput(ToolOutput):
    """A tool whose call may go on as a job (bash in the background, a long call): it then
    answers with the job's id (follow it with the `job` tool) and the output so far."""

    job_id: str | None = Field(None, description="The job a long call goes on as.")
    status: str | None = Field(None, description='"running" while a long call goes on as a job.')
    output: str | None = Field(None, description="The output so far of a job.")

