"""The messages of the in-cell `tool()` bridge, declared once for both ends.

Both languages call over the kernel's stdin channel: an `input_request` whose prompt is the
reserved prefix and a `BridgeRequest` as JSON, answered by an `input_reply` whose value is a
`BridgeReply` as JSON. Python's bridge sends its requests itself, from the calling thread;
Deno's is a synchronous `prompt()`. Stdin messages go to the one client that ran the cell,
so no other frontend of the kernel sees the calls, and nothing opens a port.
"""

from __future__ import annotations

from typing import Any, TypedDict

STDIN_PREFIX = "\x00jupyter-agent-tools:"


class BridgeRequest(TypedDict):
    """What a cell sends: one tool call (Deno's carry no id: a prompt waits for its answer)."""

    id: int
    name: str
    args: dict[str, Any]


class BridgeError(TypedDict):
    code: str
    message: str


class BridgeReply(TypedDict):
    """What the server answers: the call's result, as `ToolResult.to_json` without blocks."""

    id: int | None
    ok: bool
    text: str
    data: dict[str, Any]
    error: BridgeError | None
