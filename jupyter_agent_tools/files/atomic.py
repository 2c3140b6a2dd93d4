"""The atomic multi-file writer: every file changes, or none does."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..runtime.results import ErrorCode, ToolError


def write_files_atomically(changes: dict[Path, str | bytes | None]) -> list[Path]:
    """Write (str/bytes) or delete (None) every path in `changes`, all or nothing.

    Returns the paths it created (written, and absent before).

    Each new content is first written to a temporary file beside its target; then the
    targets are replaced one by one. If any step fails, every file already replaced is
    restored to its original content (or removed, if it did not exist) and the error is
    raised as ToolError(failed) naming the file.
    """
    originals: dict[Path, bytes | None] = {}
    temps: dict[Path, str] = {}
    done: list[Path] = []
    try:
        for path, content in changes.items():
            originals[path] = path.read_bytes() if path.exists() else None
            if content is None:
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            data = content.encode("utf-8") if isinstance(content, str) else content
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            temps[path] = tmp
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            if originals[path] is not None:
                os.chmod(tmp, path.stat().st_mode & 0o7777)
        for path, content in changes.items():
            if content is None:
                if path.exists():
                    os.unlink(path)
            else:
                os.replace(temps[path], path)
                del temps[path]
            done.append(path)
    except OSError as exc:
        _restore(done, originals)
        for tmp in temps.values():
            if os.path.exists(tmp):
                os.unlink(tmp)
        failed = getattr(exc, "filename", None) or "a file"
        raise ToolError(
            ErrorCode.FAILED,
            f"Writing {failed} failed ({exc.strerror or exc}); no file was changed. "
            "Check permissions and free space, then try again.",
        ) from exc
    return [path for path, content in changes.items()
            if content is not None and originals[path] is None]


def _restore(done: list[Path], originals: dict[Path, bytes | None]) -> None:
    for path in reversed(done):
        original = originals[path]
        if original is None:
            if path.exists():
                path.unlink()
        else:
            path.write_bytes(original)
