"""A search worker: one process per core, each with its own tree cache.

Parsing holds the GIL, so threads cannot use a second core; processes can. The worker
answers jobs (a pattern and a list of files) over a pipe with plain data. It matches with
ast-grep's engine where ast-grep has the language (astgrep.py), else with the built-in
tree-sitter matcher (pattern.py, match.py). It imports only those and the grammars, never
the runtime, so it starts fast.
"""

from __future__ import annotations

import hashlib
import os
import signal
import sys
import threading
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ast_grep_py import SgRoot
from tree_sitter import Node, Parser

from ..files.contained import FolderReader
from ..files.errors import FilesError, LinkSwapped, OutsideRoot
from . import astgrep
from .astgrep import Found, SgPattern
from .cache import CachedFile, TreeCache, heap_in_use
from .languages import AST_GREP_LANGUAGES, GRAMMARS_INSTALL, load_language, pack_ids
from .match import Env, Matcher
from .pattern import Pattern, PatternError, compile_pattern

_SNIFF_BYTES = 8192
NOTEBOOK_SUFFIX = ".ipynb"  # as notebooks.document says; not imported: nbformat is slow
_RECURSION_LIMIT = 100_000
_STACK_BYTES = 512 * 2**20  # reserved, not committed: pages are used as the stack grows
_MIN_STACK_BYTES = 16 * 2**20


@dataclass
class SearchJob:
    """What a worker is asked: the matches of `pattern` in `files` (absolute paths)."""

    pattern: str
    language: str
    files: list[str]
    limit: int  # matches described in full; the rest are only counted
    max_text: int  # longest matched or captured text carried back
    with_ranges: bool = False  # edits need byte ranges and file hashes
    # Matches are described in the first `described_files` files only (all when None): the
    # later ones are only counted, as the search already holds `limit` matches before them.
    described_files: int | None = None
    # The server's root: each file is opened from it without following links, so a folder
    # swapped for a link since the walk listed it is not read.
    root: str = field(kw_only=True)
    # Notebooks open in JupyterLab: their JSON as their shared documents hold them now, by
    # path, searched instead of their files (saved later).
    live: dict[str, bytes] = field(default_factory=dict, kw_only=True)


@dataclass
class CompileJob:
    """Compile a pattern (parsing a big one is CPU work: never on the server's loop).

    A search compiles its pattern itself and answers its summary (or why it does not parse):
    this is for a search that has no file to look at.
    """

    pattern: str
    language: str


@dataclass
class SyntaxCheckJob:
    """Does a rewrite break the code? Each file before and after, and where it was rewritten."""

    language: str
    files: list[tuple[str, bytes, bytes, list[tuple[int, int]]]]  # path, before, after, spans


def _bounded(data: bytes, limit: int) -> str:
    text = data.decode("utf-8", "replace")
    return text if len(text) <= limit else text[:limit] + "…"


def _column(source: bytes, node_byte: int, point_column: int) -> int:
    """1-based column in characters (tree-sitter counts bytes)."""
    line_start = node_byte - point_column
    return len(source[line_start:node_byte].decode("utf-8", "replace")) + 1


def _span(binding: Node | tuple[Node, ...]) -> tuple[int, int] | None:
    if isinstance(binding, tuple):
        return (binding[0].start_byte, binding[-1].end_byte) if binding else None
    return binding.start_byte, binding.end_byte


def _found(source: bytes, first: Node, last: Node, env: Env) -> Found:
    """A match of the tree-sitter matcher as plain positions."""
    return Found(first.start_byte, last.end_byte,
                 (first.start_point[0], _column(source, first.start_byte, first.start_point[1]) - 1),
                 (last.end_point[0], _column(source, last.end_byte, last.end_point[1]) - 1),
                 {name: _span(binding) for name, binding in env.items()})


def _describe(path: str, source: bytes, found: Found, job: SearchJob) -> dict[str, Any]:
    match: dict[str, Any] = {
        "file": path,
        "start": [found.start[0] + 1, found.start[1] + 1],
        "end": [found.end[0] + 1, found.end[1] + 1],
        "text": _bounded(source[found.start_byte:found.end_byte], job.max_text),
        "captures": {name: _bounded(source[span[0]:span[1]], job.max_text) if span else ""
                     for name, span in found.spans.items()},
    }
    if job.with_ranges:
        match["range"] = [found.start_byte, found.end_byte]
        match["capture_ranges"] = found.spans
    return match


class SearchEngine:
    """Runs jobs against files, through the tree cache. One per worker process."""

    def __init__(self, cache: TreeCache) -> None:
        self.cache = cache
        self._parsers: dict[str, Parser] = {}

    def _parser(self, language: str) -> Parser:
        parser = self._parsers.get(language)
        if parser is None:
            parser = self._parsers[language] = Parser(load_language(language))
        return parser

    def compile(self, job: CompileJob) -> dict[str, Any]:
        """The pattern's summary, or why it does not parse."""
        pattern = _pattern(job.pattern, job.language)
        if isinstance(pattern, PatternError):
            return _unparseable(pattern)
        return {"summary": pattern.summary()}

    def check_syntax(self, job: SyntaxCheckJob) -> dict[str, Any]:
        """Per file: syntax errors before and after, and where the first new one is (line and
        column from 1, the column in characters). The code before is parsed only when the
        code after has errors (else `errors_before` is None: no error can be new)."""
        errors_in = self._syntax_checker(job.language)
        results = []
        for path, before, after, spans in job.files:
            new = errors_in(after)
            old = errors_in(before) if new else []
            # Where the rewrite landed, if an error is there; else the first error.
            first = _first_inside(new, spans) if len(new) > len(old) else None
            line = column = None
            if first is not None:
                offset, line = first[0], first[1] + 1
                line_start = after.rfind(b"\n", 0, offset) + 1
                column = len(after[line_start:offset].decode("utf-8", "replace")) + 1
            results.append({"path": path, "errors_before": len(old) if new else None,
                            "errors_after": len(new),
                            "line": line, "column": column})
        return {"files": results}

    def _syntax_checker(self, language: str) -> Callable[[bytes], list[tuple[int, int]]]:
        """(byte offset, line from 0) of a text's syntax errors: tree-sitter's parse where
        the grammar pack is installed, else ast-grep's (its languages only)."""
        if language not in AST_GREP_LANGUAGES or language in pack_ids():
            parser = self._parser(language)
            return lambda text: [(node.start_byte, node.start_point[0])
                                 for node in _syntax_errors(parser.parse(text).root_node)]
        return lambda text: astgrep.syntax_errors(text, language)

    def run(self, job: SearchJob) -> dict[str, Any]:
        pattern = _pattern(job.pattern, job.language)
        if isinstance(pattern, PatternError):
            return _unparseable(pattern)
        matcher = Matcher(pattern) if isinstance(pattern, Pattern) else None
        matches: list[dict[str, Any]] = []
        total = 0
        counts = {"searched": 0, "binary": 0, "vanished": 0, "outside_root": 0,
                  "prefiltered": 0, "parsed": 0, "cached_trees": 0, "other_language": 0,
                  "invalid_notebook": 0, "not_utf8": 0}
        parse_errors: list[str] = []
        hashes: dict[str, str] = {}
        files_with_matches = 0
        with FolderReader(Path(job.root)) as reader:  # folders kept open for the batch
            limit_here = job.limit
            for index, path in enumerate(job.files):
                if index == job.described_files:
                    limit_here = len(matches)
                try:
                    entry = self._entry(reader, path, job.language, job.live.get(path))
                except (LinkSwapped, OutsideRoot):
                    counts["outside_root"] += 1
                    continue
                if entry is None:
                    counts["vanished"] += 1
                    continue
                if entry.binary:
                    counts["binary"] += 1
                    continue
                if entry.document is not None and _notebooks().is_pending(entry):
                    if _notebooks().ruled_out(entry.source, pattern.literals):
                        counts["searched"] += 1
                        counts["prefiltered"] += 1
                        continue
                    entry = self.cache.put((path, job.language), _notebooks().with_document(entry))
                if entry.skip is not None:
                    counts[entry.skip] += 1
                    continue
                counts["searched"] += 1
                source = entry.source
                if not all(literal in source for literal in pattern.literals):
                    counts["prefiltered"] += 1
                    continue
                try:
                    tree = self._tree(path, entry, job.language, matcher is None, counts)
                except UnicodeDecodeError:  # ast-grep reads UTF-8 only, as the CLI does
                    counts["searched"] -= 1
                    counts["not_utf8"] += 1
                    continue
                if matcher is not None:
                    if entry.syntax_errors is None:
                        entry.syntax_errors = tree.root_node.has_error
                    matched: Iterable[Found] = (_found(source, first, last, env)
                                                for first, last, env in matcher.find(tree, source))
                    uncounted = 0
                else:
                    assert isinstance(pattern, SgPattern)
                    nodes, has_error = astgrep.find_nodes(pattern, tree,
                                                          look_for_errors=entry.syntax_errors is None)
                    if entry.syntax_errors is None:
                        entry.syntax_errors = has_error
                    # Positions cost a few calls a match: worked out only for the matches
                    # described (a notebook's all: which cell each is in decides whether it counts).
                    described_here = len(nodes) if entry.document is not None \
                        else max(0, min(len(nodes), limit_here - len(matches)))
                    matched = astgrep.found(pattern, nodes[:described_here], source)
                    uncounted = len(nodes) - described_here
                if entry.syntax_errors:
                    parse_errors.append(path)
                found = uncounted
                total += uncounted
                in_cells = _CellMapper(path, entry, job) if entry.document is not None else None
                for match in matched:
                    described = None
                    if in_cells is not None:
                        described = in_cells.describe(match)
                        if described is None:  # across cells, or on masked IPython syntax
                            continue
                    found += 1
                    total += 1
                    if len(matches) < limit_here:
                        matches.append(described if described is not None
                                       else _describe(path, source, match, job))
                if found:
                    files_with_matches += 1
                    if job.with_ranges:
                        hashes[path] = entry.file_hash or hashlib.sha256(source).hexdigest()
        return {"summary": pattern.summary(), "matches": matches, "total": total,
                "files_with_matches": files_with_matches, "counts": counts,
                "parse_errors": parse_errors, "hashes": hashes, "cache": self.cache.stats()}

    def _tree(self, path: str, entry: CachedFile, language: str, by_ast_grep: bool,
              counts: dict[str, int]) -> Any:
        """The file's tree from the cache, or parsed now: ast-grep's for its matcher, else
        tree-sitter's."""
        if entry.tree is not None and isinstance(entry.tree, SgRoot) == by_ast_grep:
            counts["cached_trees"] += 1
            return entry.tree
        before = heap_in_use()
        if by_ast_grep:
            tree: Any = astgrep.parse(entry.source, language)
        else:
            tree = self._parser(language).parse(entry.source)
        after = heap_in_use()
        self.cache.set_tree((path, language), entry, tree,
                            None if before is None or after is None else after - before)
        counts["parsed"] += 1
        return tree

    def _entry(self, reader: FolderReader, path: str, language: str, live: bytes | None = None
               ) -> CachedFile | None:
        """The file's cached entry, read afresh when it changed; None when it is gone.
        `live`: an open notebook's JSON as its shared document holds it, taken for the file.

        LinkSwapped or OutsideRoot when a link now leads out of `root`.
        """
        if live is not None:
            digest = int.from_bytes(hashlib.blake2b(live, digest_size=8).digest(), "big")
            stamp = (-1 - digest, len(live))  # no file's: its mtime is negative
        else:
            try:
                stat = os.stat(path, follow_symlinks=False)
            except OSError:
                return None
            stamp = (stat.st_mtime_ns, stat.st_size)
        key = (path, language)
        entry = self.cache.get(key, stamp)
        if entry is not None:
            return entry
        try:
            source = live if live is not None else reader.read_bytes(path)
        except (LinkSwapped, OutsideRoot):
            raise  # counted apart by the caller: not searched, and not gone either
        except FilesError:  # gone, or no longer a regular file, since it was listed
            return None
        if b"\x00" in source[:_SNIFF_BYTES]:
            return self.cache.put(key, CachedFile(stamp, b"", binary=True))
        if path.lower().endswith(NOTEBOOK_SUFFIX):
            return self.cache.put(key, _notebooks().notebook_entry(stamp, source, language))
        return self.cache.put(key, CachedFile(stamp, source))


def _pattern(source: str, language: str) -> Pattern | SgPattern | PatternError:
    """The pattern, compiled with the grammars here now: a pattern of several statements
    refused for want of the pack is compiled again once the pack is installed."""
    compiled = _compiled(source, language, with_pack=False)
    if isinstance(compiled, _NeedsPack) and pack_ids(recheck=True):
        compiled = _compiled(source, language, with_pack=True)
    return compiled


class _NeedsPack(PatternError):
    """A pattern only the built-in matcher can take, which needs the pack."""


@lru_cache(maxsize=64)
def _compiled(source: str, language: str, *, with_pack: bool
              ) -> Pattern | SgPattern | PatternError:
    """The pattern (ast-grep's where it has the language), or why it does not parse: a
    failure is kept too, so the batches of one search do not each parse a bad pattern again.
    Without `with_pack`, a pattern of several statements in one of ast-grep's languages is
    _NeedsPack (the pack is not even looked for: a search in ast-grep's languages does not
    load it)."""
    try:
        if language in AST_GREP_LANGUAGES:
            try:
                return astgrep.compile_sg(source, language)
            except astgrep.SeveralNodes as several:
                if not with_pack:
                    return _NeedsPack(
                        f"{several.reason}; ast-grep matches one node, and the built-in "
                        "matcher, which finds runs of several, needs tree-sitter-language-pack "
                        f"(to add it: {GRAMMARS_INSTALL})", several.contexts)
                # ast-grep takes one node: the built-in matcher finds runs of siblings
        return compile_pattern(source, language)
    except PatternError as exc:
        return PatternError(exc.reason, exc.contexts)  # kept without the failed parse's frames


def _unparseable(error: PatternError) -> dict[str, Any]:
    return {"pattern_error": error.reason, "contexts": error.contexts}


def _notebooks() -> Any:
    """structural.notebooks, imported once a notebook comes (nbformat is slow to load)."""
    from . import notebooks

    return notebooks


class _CellMapper:
    """Describes the matches in one notebook by cell (see structural.notebooks)."""

    def __init__(self, path: str, entry: CachedFile, job: SearchJob) -> None:
        self.path = path
        self.notebook = entry.document
        self.job = job

    def describe(self, found: Found) -> dict[str, Any] | None:
        return _notebooks().describe_in_cell(self.path, self.notebook, found,
                                             max_text=self.job.max_text,
                                             with_ranges=self.job.with_ranges)


def _first_inside(errors: list[tuple[int, int]], spans: list[tuple[int, int]]
                  ) -> tuple[int, int]:
    """The first of `errors` (byte offset, line) within one of `spans` (ascending, not
    overlapping; their ends included), else the first error."""
    starts = [start for start, _ in spans]
    for error in errors:
        at = bisect_right(starts, error[0]) - 1
        if at >= 0 and error[0] <= spans[at][1]:
            return error
    return errors[0]


def _syntax_errors(root: Node) -> list[Node]:
    """The ERROR and MISSING nodes of a tree, in document order."""
    found: list[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            found.append(node)
            continue
        if node.has_error:
            stack.extend(reversed(node.children))
    return found


def _answer(engine: SearchEngine, request: Any) -> Any:
    if request == "ping":
        return "pong"
    if isinstance(request, CompileJob):
        return engine.compile(request)
    if isinstance(request, SyntaxCheckJob):
        return engine.check_syntax(request)
    return engine.run(request)


def _die_with_parent(parent_pid: int) -> None:
    """Ask Linux to kill this worker when its parent goes away, whatever the way."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:
        os._exit(0)


def main(argv: list[str]) -> None:
    """Serve jobs read from fd `argv[1]`, answering on fd `argv[2]`, until EOF."""
    from multiprocessing.connection import Connection

    parent_pid, read_fd, write_fd = int(argv[0]), int(argv[1]), int(argv[2])
    budget, factor = int(argv[3]), float(argv[4])
    _die_with_parent(parent_pid)
    os.dup2(2, 1)  # stray prints must not corrupt the protocol pipe
    inbox = Connection(read_fd, writable=False)
    outbox = Connection(write_fd, readable=False)
    engine = SearchEngine(TreeCache(budget, factor))
    # Compiling and matching recurse along the pattern (a run of 1,500 statements is 1,500
    # frames deep): room for any pattern within the size limit, on a stack to match.
    stack = _stack_bytes()
    sys.setrecursionlimit(_RECURSION_LIMIT * stack // _STACK_BYTES)
    threading.stack_size(stack)
    server = threading.Thread(target=_serve, args=(engine, inbox, outbox), name="search-worker")
    server.start()
    server.join()


def _stack_bytes() -> int:
    """The search thread's stack: _STACK_BYTES, or an eighth of an address-space limit
    (ulimit -v) when that is smaller, as reserving it counts against that limit."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return _STACK_BYTES
    return max(_MIN_STACK_BYTES, min(_STACK_BYTES, soft // 8) // 4096 * 4096)


def _serve(engine: SearchEngine, inbox: Any, outbox: Any) -> None:
    warm = False
    while True:
        if not warm and not inbox.poll(0):
            # Idle (no job waiting): load now what later jobs may need (the grammar pack,
            # 30 ms), not while a search waits; a search in ast-grep's languages never does.
            warm = True
            try:
                pack_ids()
            except Exception:  # noqa: BLE001 - only a head start: a job needing it says why
                pass
        try:
            request = inbox.recv()
        except (EOFError, OSError):
            return
        try:
            answer = _answer(engine, request)
        except Exception as exc:  # noqa: BLE001 - answer the failure; the worker stays usable
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        try:
            outbox.send(answer)
        except (BrokenPipeError, OSError):
            return
