"""File rules shared by every tool: path containment, atomic writes, walking a tree."""

from .atomic import write_files_atomically
from .contained import (
    FileIdentity,
    identity_inside,
    is_text,
    read_bytes_inside,
    read_decoded_inside,
    read_text_inside,
)
from .errors import (
    FileMissing,
    FilesError,
    LinkSwapped,
    NotAFile,
    NotEncodable,
    NotText,
    NulInPath,
    OsRefused,
    OutsideRoot,
    PathTooLong,
    StaleFile,
    TooLarge,
)
from .paths import real_root, relative_to_root, resolve_inside
from .text import DecodedText, LineBreakText, line_endings
from .walk import FileWalker, WalkStats

__all__ = [
    "DecodedText", "FileIdentity", "FileMissing", "FileWalker", "FilesError", "LineBreakText",
    "LinkSwapped", "NotAFile", "NotEncodable", "NotText", "NulInPath", "OsRefused",
    "OutsideRoot", "PathTooLong", "StaleFile", "TooLarge",
    "WalkStats", "identity_inside", "is_text", "line_endings",
    "read_bytes_inside", "read_decoded_inside", "read_text_inside", "real_root",
    "relative_to_root",
    "resolve_inside", "write_files_atomically",
]
