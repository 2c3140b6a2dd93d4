"""What can go wrong with language servers, as facts: the `lsp` tools say what to do next."""

from __future__ import annotations

from pathlib import Path

from ..notebooks.errors import NotebookError


class LspError(Exception):
    """Base of every error the lsp package raises."""


class ServerUnavailable(LspError):
    """The server cannot serve: it failed to start, crashed too often, or was stopped."""

    def __init__(self, message: str, server: str) -> None:
        super().__init__(message)
        self.server = server


class ServerStopped(ServerUnavailable):
    """The server failed earlier and stays stopped until it is reloaded."""

    def __init__(self, server: str, last_error: str) -> None:
        super().__init__(f"{server} is stopped after an error ({last_error})", server)
        self.last_error = last_error


class ServerCrashed(ServerUnavailable):
    """The server crashed more often than its restarts allow; it stays stopped."""

    def __init__(self, server: str, restarts: int, last_error: str) -> None:
        super().__init__(f"{server} crashed {restarts} times (last: {last_error})", server)
        self.restarts = restarts
        self.last_error = last_error


class ServerNotLaunched(ServerUnavailable):
    """The server's binary could not be run."""

    def __init__(self, server: str, problem: str) -> None:
        super().__init__(problem, server)


class ServerNotInitialized(ServerUnavailable):
    """The server ran but did not answer `initialize`."""

    def __init__(self, server: str, reason: str) -> None:
        super().__init__(f"{server} did not start ({reason})", server)
        self.reason = reason


class ServerNotRunning(ServerUnavailable):
    """The server is not running (stopped or exited) when a document was to be sent."""

    def __init__(self, server: str) -> None:
        super().__init__(f"{server} is not running", server)


class ServerExited(ServerUnavailable):
    """The server exited while computing diagnostics."""

    def __init__(self, server: str, description: str) -> None:
        super().__init__(f"{description} while computing diagnostics", server)


class LspRequestError(LspError):
    """A request failed: timeout, server exit, protocol error. The message says what happened."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


class NoServer(LspError):
    """No language server answers navigation for a file; `reason` says what lacks."""

    def __init__(self, path: Path, shown: str, reason: str) -> None:
        super().__init__(f"no language server for {shown}: {reason}")
        self.path = path
        self.shown = shown
        self.reason = reason


class UnreadableNotebook(LspError):
    """A notebook that cannot be parsed; `cause` (the notebooks package's error) says why."""

    def __init__(self, path: Path, cause: NotebookError) -> None:
        super().__init__(str(cause))
        self.path = path
        self.cause = cause


class LineOutOfRange(LspError):
    """A line beyond the text it counts in (a file or a notebook cell)."""

    def __init__(self, line: int, where: str, line_count: int) -> None:
        super().__init__(f"line {line} is outside {where} (it has {line_count} lines)")
        self.line = line
        self.where = where
        self.line_count = line_count


class SymbolNotOnLine(LspError):
    """A name that is not on the line given; `identifiers` are the names that are."""

    def __init__(self, symbol: str, line: int, where: str, line_text: str,
                 identifiers: list[str]) -> None:
        super().__init__(f"{symbol!r} is not on line {line} of {where}")
        self.symbol = symbol
        self.line = line
        self.where = where
        self.line_text = line_text
        self.identifiers = identifiers


class OccurrenceOutOfRange(LspError):
    """An `occurrence` past the number of times the name is on the line."""

    def __init__(self, symbol: str, line: int, occurrence: int, count: int) -> None:
        super().__init__(f"{symbol!r} occurs {count} time(s) on line {line}, not {occurrence}")
        self.symbol = symbol
        self.line = line
        self.occurrence = occurrence
        self.count = count


class ProjectCheckError(LspError):
    """A project check could not run, finish or be read; the message says which."""


class EditOutsideRoot(LspError):
    """A server's workspace edit reaches files outside the server root (named as shown)."""

    def __init__(self, shown: list[str]) -> None:
        super().__init__(f"the edit would change {', '.join(shown)}, outside the server's root")
        self.shown = shown


class EditAfterDelete(LspError):
    """A server's workspace edit changes a file it deleted earlier in the same edit."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"the server's edit changes {path.name} after deleting it")
        self.path = path
