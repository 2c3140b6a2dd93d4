"""The messages of the in-cell `tool()` bridge, declared once for both ends.

Python cells talk over a comm whose replies the server addresses to a kernel subshell (the
main shell is busy running the cell); Deno cells, which cannot receive comm messages, talk
over stdin: `prompt()` with a reserved prefix, answered by an `input_reply`.
"""

from __future__ import annotations

from typing import Any, TypedDict

COMM_TARGET = "jupyter_agent_tools.bridge"
STDIN_PREFIX = "\x00jupyter-agent-tools:"


class BridgeRequest(TypedDict):
    """What a cell sends: one tool call."""

    id: str
    name: str
    args: dict[str, Any]


class BridgeError(TypedDict):
    code: str
    message: str


class BridgeReply(TypedDict):
    """What the server answers: the call's result, as `ToolResult.to_json` without blocks."""

    id: str
    ok: bool
    text: str
    data: dict[str, Any]
    error: BridgeError | None
