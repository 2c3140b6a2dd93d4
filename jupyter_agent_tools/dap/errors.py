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


class NothingListening(SessionFailed):
    """An attach found no debug server on the port."""

    def __init__(self, host: str, port: int, reason: str) -> None:
        super().__init__(f"nothing answered on {host}:{port} ({reason})")
        self.host = host
        self.port = port
        self.reason = reason


class NoStoppedThread(SessionFailed):
    """A call that needs a thread got none, and no thread is stopped to default to."""

    def __init__(self) -> None:
        super().__init__("no thread is stopped")


class ProgramFinished(SessionFailed):
    """`action` needs a running program, and it has finished."""

    def __init__(self, action: str) -> None:
        super().__init__(f"the program has finished; {action} needs a running program")
        self.action = action


class ProgramRunning(SessionFailed):
    """`action` needs the program stopped, and it is running."""

    def __init__(self, action: str) -> None:
        super().__init__(f"the program is running; {action} needs it stopped")
        self.action = action


class StaleReference(DebugError):
    """A frame id or variable reference from before execution last resumed."""


class StaleVariables(StaleReference):
    """A variables reference from before execution last resumed."""

    def __init__(self, reference: int) -> None:
        super().__init__(f"reference {reference} is not from the current stop (references die "
                         "when execution resumes)")
        self.reference = reference


class StaleFrame(StaleReference):
    """A frame id from before execution last resumed."""

    def __init__(self, frame_id: int) -> None:
        super().__init__(f"frame {frame_id} is not from the current stop (frames die when "
                         "execution resumes)")
        self.frame_id = frame_id


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
    """Starting the adapter, or its launch/attach, failed (`cause`: a `SessionFailed` or an
    `OSError`); nothing of it is left running."""

    def __init__(self, command: str, adapter: str, cause: Exception, output: str) -> None:
        super().__init__(f"could not {command} with {adapter}: {cause}")
        self.command = command
        self.adapter = adapter
        self.cause = cause
        self.output = output  # what the debuggee printed before it failed
