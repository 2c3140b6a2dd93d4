"""What can go wrong with a file under the root, as facts: the files package's exceptions.

Every exception names the file as the user knows it (`shown`, root-relative, never a
temporary file's name). What the agent should do about it is the runtime's business
(`runtime/file_errors.py` maps these to the contract's codes and messages).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

# What the caller was doing; "open" when it is not known.
Action = Literal["read", "write", "open"]


class FilesError(Exception):
    """Base of the files package's exceptions."""

    def __init__(self, shown: str, fact: str) -> None:
        super().__init__(f"{shown}: {fact}")
        self.shown = shown


class OutsideRoot(FilesError):
    """The path resolves outside the server root."""

    def __init__(self, shown: str, root: Path) -> None:
        super().__init__(shown, f"resolves outside the server root {root}")
        self.root = root


class PathDenied(FilesError):
    """The path is one of Jupyter's own credentials (`files/denied.py`): `reason` says which."""

    def __init__(self, shown: str, reason: str) -> None:
        super().__init__(shown, f"is denied: {reason}")
        self.reason = reason


class NulInPath(FilesError):
    """The path holds a NUL byte, which no file system takes."""

    def __init__(self, shown: str) -> None:
        super().__init__(shown, "contains a NUL byte")


class PathTooLong(FilesError):
    """The path (or one of its names) is longer than the operating system allows."""

    def __init__(self, shown: str, path_bytes: int, longest_name: int, max_path: int,
                 max_name: int) -> None:
        super().__init__(shown, f"{path_bytes} bytes, longest name {longest_name}")
        self.path_bytes = path_bytes
        self.longest_name = longest_name
        self.max_path = max_path
        self.max_name = max_name


class LinkSwapped(FilesError):
    """A name checked as a file or folder became a symbolic link before it was used."""

    def __init__(self, shown: str, action: Action) -> None:
        super().__init__(shown, "now goes through a symbolic link")
        self.action = action


class NotAFile(FilesError):
    """The path names a folder, pipe, socket or device, not a regular file."""

    def __init__(self, shown: str, *, is_folder: bool) -> None:
        super().__init__(shown, "is a folder" if is_folder else "is not a regular file")
        self.is_folder = is_folder


class FileMissing(FilesError):
    """The file does not exist."""

    def __init__(self, shown: str) -> None:
        super().__init__(shown, "does not exist")


class TooLarge(FilesError):
    """The file is over the byte limit it was read with (`size` None: it grew past it)."""

    def __init__(self, shown: str, size: int | None, limit: int) -> None:
        super().__init__(shown, f"over the {limit}-byte limit")
        self.size = size
        self.limit = limit


class NotText(FilesError):
    """The file is binary (a NUL byte near its start)."""

    def __init__(self, shown: str) -> None:
        super().__init__(shown, "is a binary file")


class NotEncodable(FilesError):
    """New text holds a character the file's encoding (kept on writing) has no byte for."""

    def __init__(self, shown: str, encoding: str, character: str, line: int) -> None:
        super().__init__(shown, f"is {encoding} text, which cannot hold {character!r} "
                                f"(U+{ord(character):04X}, line {line} of the new text)")
        self.encoding = encoding
        self.character = character
        self.line = line


class StaleFile(FilesError):
    """The file is not the one a change was prepared on: replaced, moved or deleted
    (`changed` False), or its content is not the content the change was computed on, written
    meanwhile by another run or the user (`changed` True)."""

    def __init__(self, shown: str, *, changed: bool = False) -> None:
        super().__init__(shown, "changed since the change was computed on it" if changed
                         else "changed identity since the change was prepared")
        self.changed = changed


class OsRefused(FilesError):
    """The operating system refused to `action` the file: `error` says why."""

    def __init__(self, shown: str, error: OSError, action: Action) -> None:
        super().__init__(shown, f"{action} failed: {error.strerror or type(error).__name__}")
        self.error = error
        self.action = action
