"""The messages of the in-cell `tool()` bridge, declared once for both ends.

Both languages call over the kernel's stdin channel: an `input_request` whose prompt is the
reserved prefix and a `BridgeRequest` as JSON, answered by an `input_reply` whose value is a
`BridgeReply` as JSON. Python's bridge sends its requests itself, from the calling thread;
Deno's is a synchronous `prompt()`. Stdin messages go to the one client that ran the cell,
so no other frontend of the kernel sees the calls, and nothing opens a port.
"""

from __future__ import annotations

from typing import Any, Protocol, TypedDict

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


class ToolCaller(Protocol):
    """Answers the tool() calls of a run's cells (the eval tool hands one in with each cell).

    Each answer is a BridgeReply whose `id` the session fills in.
    """

    async def call(self, name: str, args: Any) -> BridgeReply:
        """The reply to a call of tool `name` with `args`."""
        ...

    def timed_out(self, name: str, seconds: float) -> BridgeReply:
        """The reply to a call that took longer than the bridge's `seconds`."""
        ...

    def failed(self, name: str, exc: Exception) -> BridgeReply:
        """The reply to a call the server failed to serve (`exc` is why)."""
        ...


def no_caller_reply() -> BridgeReply:
    """A call while no run's cell is running (it cannot happen through the in-kernel bridge,
    which lets only the agent's cells call): refused with the protocol's `unavailable`."""
    return {"id": None, "ok": False, "text": "", "data": {},
            "error": {"code": "unavailable", "message": "This kernel is not serving a run."}}


class DebugListener(Protocol):
    """Hears a kernel's debugger (the Jupyter debug protocol): a debug client on the session."""

    def debug_event(self, content: dict[str, Any]) -> None:
        """A `debug_event` from IOPub: its content is one DAP event."""

    def kernel_gone(self, reason: str) -> None:
        """The kernel died or was restarted: no reply or event will come."""
