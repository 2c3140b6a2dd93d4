"""File rules shared by every tool: path containment, atomic writes, walking a tree."""

from .atomic import write_files_atomically
from .paths import relative_to_root, resolve_inside
from .walk import FileWalker, WalkStats, read_text

__all__ = [
    "FileWalker", "WalkStats", "read_text", "relative_to_root", "resolve_inside",
    "write_files_atomically",
]
