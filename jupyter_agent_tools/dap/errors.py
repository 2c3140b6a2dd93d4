"""What can go wrong in a debug session, as facts: the `debug` tool says what to do about it."""

from __future__ import annotations


class DebugError(Exception):
    """Base of every error the debug package raises."""


class DapError(DebugError):
    """A request the adapter answered with `success: false`."""

    def __init__(self, command: str, message: str) -> None:
        super().__init__(f"{command}: {message}")
        self.command = command
        self.message = message


class AdapterGone(DebugError):
    """The adapter's stream closed (it exited or was killed) before answering."""


class RequestTimeout(DebugError):
    """The adapter did not answer a request within the bound."""


class SessionFailed(DebugError):
    """The session cannot go on (the adapter refused, died or did not answer)."""


class StaleReference(DebugError):
    """A frame id or variable reference from before execution last resumed."""


class NoSession(DebugError):
    """The conversation has no live session; `ended_because` says why the last one ended."""

    def __init__(self, ended_because: str | None) -> None:
        super().__init__("no debug session is live in this conversation"
                         + (f" (the last one ended: {ended_because})" if ended_because else ""))
        self.ended_because = ended_because


class SessionExists(DebugError):
    """A session is already live in the conversation."""

    def __init__(self, adapter: str, state: str) -> None:
        super().__init__(f"a {adapter} session ({state}) is already live in this conversation")
        self.adapter = adapter
        self.state = state


class AdapterUnusable(DebugError):
    """The adapter lacks its root marker or binary for the directory."""

    def __init__(self, adapter: str, directory: str, reason: str) -> None:
        super().__init__(f"the {adapter} adapter cannot serve {directory}: {reason}")
        self.adapter = adapter
        self.directory = directory
        self.reason = reason


class StartFailed(DebugError):
    """Starting the adapter, or its launch/attach, failed; nothing of it is left running."""

    def __init__(self, command: str, adapter: str, reason: str, output: str) -> None:
        super().__init__(f"could not {command} with {adapter}: {reason}")
        self.command = command
        self.adapter = adapter
        self.reason = reason
        self.output = output  # what the debuggee printed before it failed
