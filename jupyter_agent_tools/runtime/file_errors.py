"""What a file error means to an agent: a contract code and what to do next.

The one place the files package's exceptions (`files/errors.py`) and OSError become
ToolErrors. Tools call `file_error` where they want the standard wording; `Run.call` uses it
as the fallback for what no tool caught, so a path the OS refuses never reads as "a bug in
the tool".
"""

from __future__ import annotations

import errno

from ..files.errors import (
    Action,
    FileMissing,
    FilesError,
    LinkSwapped,
    NotAFile,
    NotEncodable,
    NotText,
    NulInPath,
    OsRefused,
    OutsideRoot,
    PathDenied,
    PathTooLong,
    StaleFile,
    TooLarge,
)
from .results import ErrorCode, ToolError

_DONE = {"read": "read", "write": "written", "open": "opened"}

# Past this, a name in a message is cut: a 4,000-character path helps nobody.
_MAX_NAME_CHARS = 120

_WRITE_FAILURES = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO}


def file_error(exc: FilesError) -> ToolError:
    """The ToolError for one of the files package's exceptions."""
    shown = _clip(exc.shown)
    if isinstance(exc, OsRefused):
        return os_error(exc.error, exc.shown, action=exc.action)
    if isinstance(exc, OutsideRoot):
        return ToolError(ErrorCode.PATH_OUTSIDE_ROOT,
                         f"{shown!r} resolves outside the server root ({exc.root}). Use a path "
                         "inside it, relative to the run's working directory.")
    if isinstance(exc, PathDenied):
        return ToolError(ErrorCode.PATH_DENIED,
                         f"{shown} is {exc.reason}. Jupyter's own credentials are out of reach "
                         "of every file tool, whatever the root: nothing was read or written. "
                         "Work on the project's files; if a task needs the server's settings, "
                         "ask the user, who can share what is safe (never the token).")
    if isinstance(exc, NulInPath):
        return ToolError(ErrorCode.PATH_OUTSIDE_ROOT,
                         "The path contains a NUL byte. Use a plain relative path.")
    if isinstance(exc, LinkSwapped):
        done = "written" if exc.action == "write" else "read"
        return ToolError(ErrorCode.PATH_OUTSIDE_ROOT,
                         f"{shown} now goes through a symbolic link (it changed after the path "
                         f"was checked); files are opened without following links, so nothing "
                         f"was {done}. Use the real path inside the server root.")
    if isinstance(exc, PathTooLong):
        cut = exc.shown if len(exc.shown) <= 80 else exc.shown[:80] + "…"
        return ToolError(ErrorCode.INVALID_ARGUMENTS,
                         f"The path {cut!r} is too long for the operating system "
                         f"({exc.path_bytes} bytes, longest name {exc.longest_name}; the limits "
                         f"are {exc.max_path} and {exc.max_name}). Use shorter names.")
    if isinstance(exc, NotAFile):
        if exc.is_folder:
            return ToolError(ErrorCode.INVALID_ARGUMENTS,
                             f"{shown} is a folder. Name a file; glob lists what a folder holds.")
        return ToolError(ErrorCode.INVALID_ARGUMENTS,
                         f"{shown} is not a regular file (a pipe, socket or device). Name a "
                         "file; use bash to look at it.")
    if isinstance(exc, FileMissing):
        return ToolError(ErrorCode.NOT_FOUND, f"{shown} does not exist. Check the path with glob.")
    if isinstance(exc, TooLarge):
        size = f" is {exc.size} bytes," if exc.size is not None else " is"
        return ToolError(ErrorCode.FAILED,
                         f"{shown}{size} over the {exc.limit}-byte limit. Use grep, or bash "
                         "with head/sed, to look at part of it.")
    if isinstance(exc, NotText):
        return ToolError(ErrorCode.FAILED,
                         f"{shown} is a binary file; read shows text only. Use bash (e.g. "
                         "`file`, `xxd | head`) to inspect it.")
    if isinstance(exc, NotEncodable):
        return ToolError(ErrorCode.FAILED,
                         f"{shown} is {exc.encoding} text, and the new text has "
                         f"{exc.character!r} (U+{ord(exc.character):04X}, line {exc.line}), "
                         "which that encoding cannot hold; files keep their encoding, so "
                         "nothing was written. Use characters it has (or the language's "
                         "escape, e.g. \\u20ac), or convert the file to UTF-8 first with "
                         "bash (iconv -t UTF-8).",
                         data={"encoding": exc.encoding, "character": exc.character,
                               "line": exc.line})
    if isinstance(exc, StaleFile) and exc.changed:
        return ToolError(ErrorCode.STALE_EDIT,
                         f"{shown} changed since this change was computed on it (another run "
                         "or the user wrote it meanwhile); nothing was written. Read it again "
                         "and redo the change on what it holds now.")
    if isinstance(exc, StaleFile):
        return ToolError(ErrorCode.STALE_EDIT,
                         f"{shown} is not the file it was when the change was prepared (it was "
                         "replaced, moved or deleted); nothing was written. Prepare the change "
                         "again on the current file.")
    return ToolError(ErrorCode.FAILED, f"{exc}. Check the path with glob, or look at the "
                     "file with bash (ls -l, file).")


def os_error(exc: OSError, name: str | None = None, *, action: Action = "read") -> ToolError:
    """The ToolError for `exc`, raised while trying to `action` the file `name`.

    `name` is how the user knows the file (root-relative); without it, the error's own
    filename is used. A write's message says that no file was changed: the callers that
    pass action="write" are the atomic writer, which guarantees it.
    """
    shown = _clip(name if name is not None else _filename(exc))
    reason = exc.strerror or type(exc).__name__
    stop = "; no file was changed." if action == "write" else "."
    number = exc.errno
    if number == errno.ENAMETOOLONG:
        return ToolError(ErrorCode.INVALID_ARGUMENTS,
                         f"The path {shown} is too long for the operating system (a name may "
                         f"have at most 255 bytes, a path 4,096){stop} Use shorter names.")
    if number == errno.ENOENT:
        return ToolError(ErrorCode.NOT_FOUND,
                         f"{shown} does not exist{stop} Check the path with glob.")
    if number == errno.ENOTDIR:
        return ToolError(ErrorCode.NOT_FOUND,
                         f"{shown} does not exist: a part of its path is a file, not a "
                         f"folder{stop} Check the path with glob.")
    if number == errno.EISDIR:
        return ToolError(ErrorCode.INVALID_ARGUMENTS,
                         f"{shown} is a folder, not a file{stop} Name a file; glob "
                         "lists what a folder holds.")
    if number == errno.ELOOP:
        return ToolError(ErrorCode.PATH_OUTSIDE_ROOT,
                         f"{shown} goes through a symbolic link that changed after the path was "
                         "checked (or loops); files are opened without following links, so "
                         f"nothing was {_DONE[action]}. Use the real "
                         "path inside the "
                         "server root.")
    if number in (errno.EACCES, errno.EPERM):
        return ToolError(ErrorCode.PERMISSION_DENIED,
                         f"The operating system does not let the server's user {action} {shown} "
                         f"({reason}){stop} Pick another file, or change its "
                         "permissions with bash.")
    if number in (errno.EMFILE, errno.ENFILE):
        return ToolError(ErrorCode.FAILED,
                         f"The server has too many open files to {action} {shown} now"
                         f"{stop} Try again in a moment.")
    if action == "write" or number in _WRITE_FAILURES:
        return ToolError(ErrorCode.FAILED,
                         f"Writing {shown} failed ({reason}){stop} Check free space "
                         "and that the file system is writable, then try again.")
    return ToolError(ErrorCode.FAILED,
                     f"{'Opening' if action == 'open' else 'Reading'} {shown} failed ({reason}). "
                     "Try again; if it keeps failing, look at the file with bash (ls -l, file).")


def _filename(exc: OSError) -> str:
    filename = exc.filename
    if filename is None:
        return "the file"
    return filename.decode(errors="replace") if isinstance(filename, bytes) else str(filename)


def _clip(name: str) -> str:
    return name if len(name) <= _MAX_NAME_CHARS else name[:_MAX_NAME_CHARS] + "…"
