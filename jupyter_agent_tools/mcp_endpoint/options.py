"""The run options an MCP client passes as query parameters of the endpoint's URL.

They are `POST runs`'s options (`RunRequest`), read from the query, with the space defaulting
to `lab` (the JupyterLab panel) and the origin always `mcp`.
"""

from __future__ import annotations

from pydantic import ValidationError

from ..http.base import describe_validation_error
from ..http.models import RunRequest
from ..runtime import ErrorCode, ToolError

DEFAULT_SPACE = "lab"
#: Query parameters that are jupyter_server's, not run options: `?token=` authenticates the
#: request (IdentityProvider.get_token), for clients that cannot set an Authorization header.
SERVER_PARAMETERS = frozenset({"token"})


def run_request_from_query(query: dict[str, list[bytes]],
                           default_space: str = DEFAULT_SPACE) -> RunRequest:
    """Parse tornado's `query_arguments`; invalid_arguments saying what to fix otherwise.

    `default_space` is the space when none is given (an agent token's ceiling may name it)."""
    query = {name: values for name, values in query.items() if name not in SERVER_PARAMETERS}
    repeated = sorted(name for name, values in query.items() if len(values) > 1)
    if repeated:
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"Give each query parameter once; repeated: {repeated}.")
    if "origin" in query:
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        "origin is not an option here: MCP sessions are always origin 'mcp'.")
    values = {name: raw[0].decode("utf-8", "replace") for name, raw in query.items()}
    values.setdefault("space", default_space)
    try:
        return RunRequest.from_query(values)
    except ValidationError as error:
        raise ToolError(
            ErrorCode.INVALID_ARGUMENTS,
            f"Bad query parameters ({describe_validation_error(error)}). Allowed: "
            f"{sorted(set(RunRequest.model_fields) - {'origin'})}; surface is "
            "full|plan|readonly, approvals is auto|ask|deny, vibe is true|false.",
        ) from None
