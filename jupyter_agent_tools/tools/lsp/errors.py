"""What the lsp package's errors tell the agent: the contract's code and what to do next."""

from __future__ import annotations

from ...files import FilesError
from ...lsp.errors import (
    EditAfterDelete,
    EditOutsideRoot,
    LineOutOfRange,
    LspError,
    LspRequestError,
    NoServer,
    OccurrenceOutOfRange,
    ServerCrashed,
    ServerExited,
    ServerNotInitialized,
    ServerNotLaunched,
    ServerNotRunning,
    ServerStopped,
    ServerUnavailable,
    SymbolNotOnLine,
    UnreadableNotebook,
)
from ...lsp.session import FileDiagnostics
from ...runtime import ErrorCode, ToolError
from ...runtime.file_errors import file_error
from ..notebook_errors import notebook_error


def tool_error(exc: LspError) -> ToolError:
    """The answer for an lsp error that reached the tool's boundary unhandled."""
    match exc:
        case NoServer():
            return ToolError(ErrorCode.UNAVAILABLE,
                             f"No language server for {exc.shown}: {exc.reason}. Call lsp with "
                             "action=status for details; use grep or ast_grep meanwhile.")
        case ServerUnavailable():
            return ToolError(ErrorCode.UNAVAILABLE, failure_text(exc))
        case LspRequestError():
            return request_failure(exc)
        case UnreadableNotebook():
            return notebook_error(exc.cause, doing="read")
        case LineOutOfRange():
            return ToolError(ErrorCode.INVALID_ARGUMENTS,
                             f"line {exc.line} is outside {exc.where} (it has {exc.line_count} "
                             "lines). Read the file to find the line.")
        case SymbolNotOnLine():
            on = f"line {exc.line}" if exc.where == "the file" else f"line {exc.line} of {exc.where}"
            return ToolError(
                ErrorCode.SYMBOL_NOT_FOUND,
                f"{exc.symbol!r} is not on {on}. Identifiers on that line: "
                f"{', '.join(exc.identifiers) if exc.identifiers else '(none)'}. Check the line "
                "number with read.",
                data={"line": exc.line, "line_text": exc.line_text,
                      "identifiers": exc.identifiers},
            )
        case OccurrenceOutOfRange():
            return ToolError(ErrorCode.INVALID_ARGUMENTS,
                             f"{exc.symbol!r} occurs {exc.count} time(s) on line {exc.line}; "
                             f"occurrence must be between 1 and {exc.count}.")
        case EditOutsideRoot():
            return ToolError(ErrorCode.PATH_OUTSIDE_ROOT,
                             f"The edit would change {', '.join(exc.shown)}, outside the "
                             "server's root; no file was changed. Rename it by hand where it "
                             "lives, or keep the old name.")
        case EditAfterDelete():
            return ToolError(ErrorCode.FAILED,
                             f"The server's edit changes {exc.path.name} after deleting it; no "
                             "file was changed. Try the rename again.")
    return ToolError(ErrorCode.FAILED, f"{exc}. Call lsp with action=status to see the "
                     "servers' state; use grep or ast_grep meanwhile.")


def failure_text(exc: Exception) -> str:
    """A server's failure as results show it: what happened, and how to get it back."""
    match exc:
        case ServerStopped():
            return f"{exc}. Fix the cause, then call lsp with action=reload."
        case ServerCrashed():
            return f"{exc}. Call lsp with action=reload to try again."
        case ServerNotLaunched():
            return f"{exc}. Check the binary, then call lsp with action=reload."
        case ServerNotInitialized():
            return f"{exc}. Check it runs on this machine, then call lsp with action=reload."
        case ServerNotRunning():
            return f"{exc}. Call lsp with action=reload."
        case ServerExited():
            return f"{exc}. Call lsp again to restart it, or action=status."
    return str(exc)


def problems_of(report: FileDiagnostics) -> list[str]:
    """Why a file's diagnostics are missing or partial, one line each."""
    unreadable = report.unreadable
    read = [] if unreadable is None else [
        file_error(unreadable).message if isinstance(unreadable, FilesError) else str(unreadable)]
    return report.problems + read + [failure_text(error) for error in report.failures]


def request_failure(exc: LspRequestError) -> ToolError:
    """What a failed request tells the agent: a timeout, or a server to look at."""
    if exc.timed_out:
        return ToolError(ErrorCode.TIMEOUT, f"{exc}. The server may still be indexing: try "
                         "again, or call lsp with action=reload if it keeps happening.")
    return ToolError(ErrorCode.UNAVAILABLE, f"{exc}. Call lsp with action=status to see its "
                     "state, and action=reload to restart it.")
