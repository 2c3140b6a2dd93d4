"""Walking a tree the way a developer expects: .gitignore honoured, binary and huge files skipped."""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pathspec
import re2

from .atomic import SCRATCH_GLOBS
from .denied import is_denied

DEFAULT_SKIP_DIRS = (".git", ".hg", ".svn", "__pycache__", "node_modules", ".ipynb_checkpoints")
# The folders grep, glob and structural search never enter (c.Runtime.skip_dirs), even with
# `hidden`: version control's and Jupyter's checkpoint copies. node_modules is not among them:
# it follows the ignore rules, as in rg and the ast-grep CLI (and is counted as ignored).
SEARCH_SKIP_DIRS = (".git", ".hg", ".svn", "__pycache__", ".ipynb_checkpoints")
DEFAULT_MAX_ENTRIES = 200_000
DEFAULT_TIMEOUT_SECONDS = 30.0
_SNIFF_BYTES = 8192

# A writer's temp file or backup link, also one an interrupted write left behind: never listed.
# (One fixed wildcard before a fixed tail, on a name of at most 255 bytes: no backtracking.)
_SCRATCH_NAME = re.compile("|".join(fnmatch.translate(glob) for glob in SCRATCH_GLOBS))

# The folder a .gitignore sits in, and its patterns in file order as (regex, ignores) pairs.
# The regexes are RE2's (linear time): a .gitignore is anyone's text (a cloned repository's,
# an agent's write), and Python's backtracking `re` spends minutes, holding the interpreter
# lock, on a line such as `*a*a*a*a*a*a*a*a*a*a*a*a*b`.
IgnoreRules = tuple[Path, list[tuple[Any, bool]]]


@dataclass
class WalkStats:
    """What a walk left out, so results can say so."""

    ignored: int = 0
    binary: int = 0
    oversized: int = 0
    # Listed, then gone before it could be looked at (a writer's temp file, a deletion).
    vanished: int = 0
    # Jupyter's own credentials (files/denied.py): a runtime folder counts once.
    denied: int = 0
    # Hidden files and folders (a name starting with "."), left out as rg and the ast-grep
    # CLI leave them out (a folder counts once).
    hidden: int = 0
    # The walk stopped at its entry or time bound; what it found is incomplete.
    truncated: bool = False

    def to_json(self) -> dict[str, int]:
        """The counts; `vanished` only when a race happened, `denied` only when the walk met
        Jupyter's credentials (`truncated` is not a count)."""
        counts = {"ignored": self.ignored, "binary": self.binary, "oversized": self.oversized}
        if self.vanished:
            counts["vanished"] = self.vanished
        if self.denied:
            counts["denied"] = self.denied
        if self.hidden:
            counts["hidden"] = self.hidden
        return counts

    def describe(self) -> str:
        parts = [f"{n} {what}" for what, n in self.to_json().items() if n]
        notes = [f"skipped: {', '.join(parts)}"] if parts else []
        if self.truncated:
            notes.append("the walk stopped at its bound; narrow the path")
        return "; ".join(notes)


def is_binary(path: Path) -> bool:
    """Whether the file's head holds a NUL byte (OSError when it cannot be opened)."""
    with path.open("rb") as handle:
        return b"\x00" in handle.read(_SNIFF_BYTES)


class FileWalker:
    """Yields the files under a directory, honouring .gitignore files at every level.

    Ignore rules apply *below* the starting point, as ripgrep does for a path it is given: a
    walk that starts inside an ignored folder searches that folder. A walk is bounded: it stops
    after `max_entries` directory entries or `timeout_seconds`, and says so in its stats.

    With `hidden` False, hidden folders and files below the start are left out (counted), as
    rg and the ast-grep CLI leave them out; a hidden file whose name ends with one of
    `hidden_suffixes` (and is more than it: `.env` is no `*.env`) is kept all the same, as the CLI keeps one its language's file type
    names (the `ignore` crate's whitelist). A hidden start is walked, as rg walks a path it is
    given.
    """

    def __init__(
        self,
        root: Path,
        *,
        respect_gitignore: bool = True,
        max_file_bytes: int = 2_000_000,
        max_notebook_bytes: int | None = None,
        skip_dirs: tuple[str, ...] = DEFAULT_SKIP_DIRS,
        skip_binary: bool = True,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        hidden: bool = True,
        hidden_suffixes: tuple[str, ...] = (),
    ) -> None:
        self.root = Path(os.path.realpath(root))
        self.respect_gitignore = respect_gitignore
        self.max_file_bytes = max_file_bytes
        # Notebooks carry their outputs (plots): they may have a bound of their own.
        self.max_notebook_bytes = max_file_bytes if max_notebook_bytes is None else max_notebook_bytes
        self.skip_dirs = set(skip_dirs)
        self.skip_binary = skip_binary
        self.max_entries = max_entries
        self.timeout_seconds = timeout_seconds
        self.hidden = hidden
        self.hidden_suffixes = hidden_suffixes
        self.stats = WalkStats()
        self._entries = 0
        self._deadline = 0.0

    def _rules_for(self, directory: Path) -> IgnoreRules | None:
        ignore = directory / ".gitignore"
        if not self.respect_gitignore:
            return None
        try:
            lines = ignore.read_text(errors="replace").splitlines()
        except OSError:  # none here, unreadable, or gone since it was listed
            return None
        try:
            patterns = pathspec.GitIgnoreSpec.from_lines(lines).patterns
        except ValueError:  # malformed (GitIgnorePatternError): ignore nothing, keep walking
            return None
        rules = []
        for pattern in patterns:
            if pattern.include is None or pattern.regex is None:
                continue
            try:
                rules.append((re2.compile(pattern.regex.pattern), bool(pattern.include)))
            except re2.error:  # a construct RE2 lacks: that line ignores nothing
                continue
        return directory, rules

    def _inherited_rules(self, start: Path) -> list[IgnoreRules]:
        """.gitignore files of the directories between the root and `start` (excluded)."""
        rules = []
        for directory in reversed(start.parents):
            if directory != self.root and self.root not in directory.parents:
                continue
            own = self._rules_for(directory)
            if own is not None:
                rules.append(own)
        return rules

    @staticmethod
    def _ignored(rules: list[IgnoreRules], path: Path, is_dir: bool) -> bool:
        # Later (deeper) files and later lines win, as in git. A pattern must match the path
        # itself: a match through one of its folders (`build/` on `build/x.py`) does not count,
        # because a walk never enters an ignored folder unless it was asked to start there.
        decision = False
        for base, patterns in rules:
            rel = path.relative_to(base).as_posix() + ("/" if is_dir else "")
            for regex, include in patterns:
                if regex.fullmatch(rel):
                    decision = include
        return decision

    async def list_files(self, start: Path) -> list[Path]:
        """`files(start)` in a worker thread: a big tree is never walked on the event loop."""
        return await asyncio.to_thread(lambda: list(self.files(start)))

    def files(self, start: Path) -> Iterator[Path]:
        """Every eligible file under `start` (or `start` itself when it is a file), sorted."""
        self._entries = 0
        self._deadline = time.monotonic() + self.timeout_seconds
        start = Path(os.path.realpath(start))
        if is_denied(start):
            self.stats.denied += 1
            return
        if start.is_file():
            if self._eligible(start):
                yield start
            return
        yield from self._walk(start, self._inherited_rules(start))

    def _walk(self, directory: Path, rules: list[IgnoreRules]) -> Iterator[Path]:
        own = self._rules_for(directory)
        if own is not None:
            rules = [*rules, own]
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:  # unreadable, or removed while we walked
            return
        for entry in entries:
            if self._over_bounds():
                return
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = not is_dir and entry.is_file(follow_symlinks=False)
            except OSError:
                self.stats.vanished += 1
                continue
            if is_dir:
                if entry.name in self.skip_dirs:
                    continue
                if not self.hidden and entry.name.startswith("."):
                    self.stats.hidden += 1
                    continue
                if is_denied(entry.path):
                    self.stats.denied += 1
                    continue
                if self._ignored(rules, path, is_dir=True):
                    self.stats.ignored += 1
                    continue
                yield from self._walk(path, rules)
            elif is_file:
                if _SCRATCH_NAME.match(entry.name):
                    continue
                if not self.hidden and entry.name.startswith(".") \
                        and not (entry.name.endswith(self.hidden_suffixes)
                                 and entry.name not in self.hidden_suffixes):
                    # In a walk for some suffixes, only a notebook (searched whatever its
                    # name) is one the caller missed; other names it would leave out anyway.
                    if not self.hidden_suffixes or entry.name.lower().endswith(".ipynb"):
                        self.stats.hidden += 1
                    continue
                if is_denied(entry.path):
                    self.stats.denied += 1
                    continue
                if self._ignored(rules, path, is_dir=False):
                    self.stats.ignored += 1
                    continue
                try:
                    size = entry.stat(follow_symlinks=False).st_size
                except OSError:  # listed, then gone: an atomic writer's temp file, a deletion
                    self.stats.vanished += 1
                    continue
                if self._eligible(path, size):
                    yield path

    def _over_bounds(self) -> bool:
        self._entries += 1
        if self._entries > self.max_entries or time.monotonic() > self._deadline:
            self.stats.truncated = True
            return True
        return False

    def _eligible(self, path: Path, size: int | None = None) -> bool:
        if size is None:
            try:
                size = path.stat().st_size
            except OSError:
                self.stats.vanished += 1
                return False
        limit = (self.max_notebook_bytes if path.name.lower().endswith(".ipynb")
                 else self.max_file_bytes)
        if size > limit:
            self.stats.oversized += 1
            return False
        if self.skip_binary:
            try:
                binary = is_binary(path)
            except OSError:
                self.stats.vanished += 1
                return False
            if binary:
                self.stats.binary += 1
                return False
        return True
