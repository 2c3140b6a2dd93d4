"""Path containment: the one function that decides whether a path is inside the root."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from ..runtime.results import ErrorCode, ToolError


def resolve_inside(root: Path, base: Path, path: str | os.PathLike[str]) -> Path:
    """Resolve `path` (relative to `base`, or absolute) and require it to stay under `root`.

    Symlinks are followed before the check, so a link pointing out is refused; so are
    `..` escapes, absolute paths elsewhere, sibling-prefix roots (`/x/root` vs `/x/rootx`)
    and NUL bytes. The path need not exist: its nearest existing parent is resolved.
    """
    raw = os.fspath(path)
    if "\x00" in raw:
        raise ToolError(ErrorCode.PATH_OUTSIDE_ROOT,
                        "The path contains a NUL byte. Use a plain relative path.")
    real_root = _real(str(root))
    candidate = Path(raw).expanduser() if raw.startswith("~") else Path(raw)
    if not candidate.is_absolute():
        candidate = base / candidate
    resolved = Path(os.path.realpath(candidate))
    if resolved != real_root and real_root not in resolved.parents:
        raise ToolError(
            ErrorCode.PATH_OUTSIDE_ROOT,
            f"{raw!r} resolves outside the server root ({real_root}). Use a path inside it, "
            "relative to the run's working directory.",
        )
    return resolved


@lru_cache(maxsize=64)
def _real(root: str) -> Path:
    # Roots are few and fixed for a runtime's life; realpath costs a syscall per component.
    return Path(os.path.realpath(root))


def relative_to_root(root: Path, path: Path) -> str:
    """The root-relative POSIX form used in results."""
    try:
        return path.relative_to(Path(os.path.realpath(root))).as_posix()
    except ValueError:
        return path.as_posix()
