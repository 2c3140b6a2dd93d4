"""The run options an MCP client passes as query parameters of the endpoint's URL."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..runtime import ErrorCode, ToolError

# TODO(merge): the HTTP API's reusable run-options model (POST runs) should replace this one;
# until then the fields and their checks are the same as `Runtime.create_run`'s.


class McpRunOptions(BaseModel):
    """`?cwd=…&surface=…&approvals=…&space=…&vibe=…&conversation_id=…` of `agent-tools/mcp`."""

    model_config = ConfigDict(extra="forbid")

    cwd: str = Field(".", min_length=1, max_length=4096,
                     description="Working directory, relative to the server root.")
    surface: Literal["full", "plan", "readonly"] | None = Field(
        None, description="What the run may see: full, plan or readonly (default: the runtime's).")
    approvals: Literal["auto", "ask", "deny"] | None = Field(
        None, description="Approval policy: auto, ask or deny (default: the runtime's).")
    space: str | None = Field("lab", min_length=1, max_length=200,
                              description="Where the run's cards show; `lab` is the JupyterLab panel.")
    vibe: bool = Field(False, description="Give the run a pool of background workers.")
    conversation_id: str | None = Field(None, min_length=1, max_length=200,
                                        description="Keys the run's debug session.")

    @classmethod
    def from_query(cls, query: dict[str, list[bytes]]) -> McpRunOptions:
        """Parse tornado's `query_arguments`; invalid_arguments with what to fix otherwise."""
        repeated = sorted(name for name, values in query.items() if len(values) > 1)
        if repeated:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"Give each query parameter once; repeated: {repeated}.")
        values = {name: raw[0].decode("utf-8", "replace") for name, raw in query.items()}
        try:
            return cls.model_validate(values)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in issue['loc']) or 'query'}: {issue['msg']}"
                for issue in error.errors()
            )
            raise ToolError(
                ErrorCode.INVALID_ARGUMENTS,
                f"Bad query parameters ({problems}). Allowed: {sorted(cls.model_fields)}; "
                "surface is full|plan|readonly, approvals is auto|ask|deny, vibe is true|false.",
            ) from None

    def create_run_kwargs(self) -> dict[str, Any]:
        return self.model_dump()
