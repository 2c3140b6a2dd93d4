"""Path containment: the one function that decides whether a path is inside the root."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from .denied import denied_reason
from .errors import NulInPath, OutsideRoot, PathDenied, PathTooLong


def resolve_inside(root: Path, base: Path, path: str | os.PathLike[str]) -> Path:
    """Resolve `path` (relative to `base`, or absolute) and require it to stay under `root`.

    Symlinks are followed before the check, so a link pointing out is refused; so are
    `..` escapes, absolute paths elsewhere, sibling-prefix roots (`/x/root` vs `/x/rootx`)
    and NUL bytes. The path need not exist: its nearest existing parent is resolved.
    Jupyter's own credentials (`files/denied.py`) are refused with PathDenied.
    """
    raw = os.fspath(path)
    if "\x00" in raw:
        raise NulInPath(raw.replace("\x00", "\\0"))
    _check_length(raw)
    top = real_root(root)
    candidate = Path(raw).expanduser() if raw.startswith("~") else Path(raw)
    if not candidate.is_absolute():
        candidate = base / candidate
    real = os.path.realpath(candidate)
    resolved = Path(real)
    if not is_under(top, resolved):
        raise OutsideRoot(raw, top)
    reason = denied_reason(real)
    if reason is not None:
        raise PathDenied(raw, reason)
    return resolved


def is_under(top: Path, path: Path) -> bool:
    """Whether the normalized absolute `path` is `top` or below it (sibling prefixes are not)."""
    # A string prefix, not `top in path.parents`: pathlib builds every parent, and this runs
    # twice for each file a call reads.
    text, top_text = os.fspath(path), os.fspath(top)
    return text == top_text or text.startswith(os.path.join(top_text, ""))


def _check_length(raw: str) -> None:
    """Refuse what no file system takes, before any system call trips on it."""
    encoded = os.fsencode(raw)
    longest = max((len(part) for part in encoded.split(b"/")), default=0)
    if len(encoded) >= _PATH_MAX or longest > _NAME_MAX:
        raise PathTooLong(raw, len(encoded), longest, _PATH_MAX - 1, _NAME_MAX)


# POSIX limits of Linux and macOS file systems; pathconf would ask each mount, but a
# path this long is a mistake wherever it points.
_NAME_MAX = 255
_PATH_MAX = 4096


def real_root(root: str | os.PathLike[str]) -> Path:
    """The root with every link resolved: what contained paths are compared against."""
    return _real(os.fspath(root))


@lru_cache(maxsize=64)
def _real(root: str) -> Path:
    # Roots are few and fixed for a runtime's life; realpath costs a syscall per component.
    return Path(os.path.realpath(root))


def relative_to_root(root: Path, path: Path) -> str:
    """The root-relative POSIX form used in results."""
    try:
        return path.relative_to(real_root(root)).as_posix()
    except ValueError:
        return path.as_posix()
