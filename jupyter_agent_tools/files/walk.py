"""Walking a tree the way a developer expects: .gitignore honoured, binary and huge files skipped."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from ..runtime.results import ErrorCode, ToolError

DEFAULT_SKIP_DIRS = (".git", ".hg", ".svn", "__pycache__", "node_modules", ".ipynb_checkpoints")
_SNIFF_BYTES = 8192


@dataclass
class WalkStats:
    """What a walk left out, so results can say so."""

    ignored: int = 0
    binary: int = 0
    oversized: int = 0

    def to_json(self) -> dict[str, int]:
        return {"ignored": self.ignored, "binary": self.binary, "oversized": self.oversized}

    def describe(self) -> str:
        parts = [f"{n} {what}" for what, n in self.to_json().items() if n]
        return f"skipped: {', '.join(parts)}" if parts else ""


def is_binary(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return b"\x00" in handle.read(_SNIFF_BYTES)
    except OSError:
        return True


def read_text(path: Path, max_bytes: int) -> str:
    """A text file's content; ToolError for missing, binary, oversized or undecodable files."""
    if not path.exists():
        raise ToolError(ErrorCode.NOT_FOUND, f"{path.name} does not exist. Check the path with glob.")
    if path.is_dir():
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        f"{path.name} is a directory. Use glob to list it.")
    size = path.stat().st_size
    if size > max_bytes:
        raise ToolError(ErrorCode.FAILED,
                        f"{path.name} is {size} bytes, over the {max_bytes}-byte limit. Use grep, "
                        "or bash with head/sed, to look at part of it.")
    data = path.read_bytes()
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise ToolError(ErrorCode.FAILED,
                        f"{path.name} is a binary file; read shows text only. Use bash (e.g. "
                        "`file`, `xxd | head`) to inspect it.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


class FileWalker:
    """Yields the files under a directory, honouring .gitignore files at every level."""

    def __init__(
        self,
        root: Path,
        *,
        respect_gitignore: bool = True,
        max_file_bytes: int = 2_000_000,
        skip_dirs: tuple[str, ...] = DEFAULT_SKIP_DIRS,
        skip_binary: bool = True,
    ) -> None:
        self.root = Path(os.path.realpath(root))
        self.respect_gitignore = respect_gitignore
        self.max_file_bytes = max_file_bytes
        self.skip_dirs = set(skip_dirs)
        self.skip_binary = skip_binary
        self.stats = WalkStats()

    def _spec_for(self, directory: Path) -> pathspec.PathSpec | None:
        ignore = directory / ".gitignore"
        if not self.respect_gitignore or not ignore.is_file():
            return None
        try:
            return pathspec.GitIgnoreSpec.from_lines(ignore.read_text(errors="replace").splitlines())
        except Exception:
            return None

    def _inherited_specs(self, start: Path) -> list[tuple[Path, pathspec.PathSpec]]:
        """.gitignore files of the directories between the root and `start`."""
        specs = []
        chain = [start, *start.parents]
        for directory in reversed(chain):
            if directory != self.root and self.root not in directory.parents:
                continue
            if directory == start:
                continue
            spec = self._spec_for(directory)
            if spec is not None:
                specs.append((directory, spec))
        return specs

    @staticmethod
    def _ignored(specs: list[tuple[Path, pathspec.PathSpec]], path: Path, is_dir: bool) -> bool:
        for base, spec in specs:
            rel = path.relative_to(base).as_posix() + ("/" if is_dir else "")
            if spec.match_file(rel):
                return True
        return False

    def files(self, start: Path) -> Iterator[Path]:
        """Every eligible file under `start` (or `start` itself when it is a file), sorted."""
        start = Path(os.path.realpath(start))
        if start.is_file():
            if self._eligible(start):
                yield start
            return
        yield from self._walk(start, self._inherited_specs(start))

    def _walk(self, directory: Path, specs: list[tuple[Path, pathspec.PathSpec]]) -> Iterator[Path]:
        own = self._spec_for(directory)
        if own is not None:
            specs = [*specs, (directory, own)]
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                if entry.name in self.skip_dirs:
                    continue
                if self._ignored(specs, path, is_dir=True):
                    self.stats.ignored += 1
                    continue
                yield from self._walk(path, specs)
            elif entry.is_file(follow_symlinks=False):
                if self._ignored(specs, path, is_dir=False):
                    self.stats.ignored += 1
                    continue
                if self._eligible(path, entry.stat().st_size):
                    yield path

    def _eligible(self, path: Path, size: int | None = None) -> bool:
        size = path.stat().st_size if size is None else size
        if size > self.max_file_bytes:
            self.stats.oversized += 1
            return False
        if self.skip_binary and is_binary(path):
            self.stats.binary += 1
            return False
        return True
