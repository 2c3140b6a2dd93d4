"""File rules shared by every tool: path containment, atomic writes, walking a tree."""

from .atomic import write_files_atomically
from .contained import FileIdentity, identity_inside, read_bytes_inside, read_text_inside
from .errors import (
    FileMissing,
    FilesError,
    LinkSwapped,
    NotAFile,
    NotText,
    NulInPath,
    OsRefused,
    OutsideRoot,
    PathTooLong,
    StaleFile,
    TooLarge,
)
from .paths import real_root, relative_to_root, resolve_inside
from .walk import FileWalker, WalkStats

__all__ = [
    "FileIdentity", "FileMissing", "FileWalker", "FilesError", "LinkSwapped", "NotAFile",
    "NotText", "NulInPath", "OsRefused", "OutsideRoot", "PathTooLong", "StaleFile", "TooLarge",
    "WalkStats", "identity_inside",
    "read_bytes_inside", "read_text_inside", "real_root", "relative_to_root",
    "resolve_inside", "write_files_atomically",
]
