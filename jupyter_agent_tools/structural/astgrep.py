"""Matching with ast-grep's own engine (ast-grep-py): the matches of the ast-grep CLI.

ast-grep-py is the CLI's Rust core (the same pattern parser, matcher and grammars), so for
the languages it has, a search here finds what `ast-grep run --pattern` finds: the same
(file, line, column, text) set, nested matches included (tests/structural/differential).
Languages it lacks keep the hand-written tree-sitter matcher (pattern.py, match.py).

A worker imports this module; it imports nothing of the runtime.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from ast_grep_py import SgNode, SgRoot

from .pattern import ANONYMOUS, PatternError, PatternSummary

ENGINE = CONTEXT = "ast-grep"  # the summary's `context`: no scaffolding ladder, ast-grep's parse

# What ast-grep puts for `$` before it parses a pattern, in grammars whose identifiers
# cannot hold a `$` (its "expando" character); the others parse `$A` as it is. Used only to
# describe how a pattern parsed, never to match.
_EXPANDO = {
    "c": "µ", "cpp": "µ", "csharp": "µ", "elixir": "µ", "go": "µ", "haskell": "µ",
    "kotlin": "µ", "php": "µ", "python": "µ", "ruby": "µ", "rust": "µ", "swift": "µ",
    "css": "_", "nix": "_", "html": "z",
}
_METAVAR = re.compile(r"\$\$\$([A-Z_][A-Z0-9_]*)?|\$([A-Z_][A-Z0-9_]*)")
# A metavariable, or the `$`s a grammar split off one (zig's `$$$P`): no error in a pattern.
_METAVAR_PART = re.compile(r"\$+(?:[A-Z_][A-Z0-9_]*)?")
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
# An operator of two characters or more (`==`, `->`, `&&`, `::`): rarer in files than a
# word, so a better prefilter (`$A == $A` has no word at all).
_OPERATOR = re.compile(r"[!%&*+\-./:<=>?@^|~]{2,}")
_SHOWN_CHARS = 60


class SeveralNodes(PatternError):
    """ast-grep takes a pattern of one node only (the CLI refuses `a; b`)."""


@dataclass(frozen=True)
class Found:
    """One match as plain positions: byte ranges, and (line, character column) from 0."""

    start_byte: int
    end_byte: int
    start: tuple[int, int]
    end: tuple[int, int]
    spans: dict[str, tuple[int, int] | None] = field(default_factory=dict)


@dataclass(frozen=True)
class SgPattern:
    """A pattern ast-grep accepted, and what the server is told about it."""

    source: str
    language: str
    singles: tuple[str, ...]  # $NAME
    multis: tuple[str, ...]  # $$$NAME
    # Words of the pattern outside metavariables, and its operators: ast-grep compares
    # leaf text (and the kind of an operator), so a file lacking one cannot match and is
    # not parsed.
    literals: tuple[bytes, ...]
    parsed: PatternSummary

    def summary(self) -> PatternSummary:
        return self.parsed


def _names(source: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    singles: list[str] = []
    multis: list[str] = []
    for found in _METAVAR.finditer(source):
        if found.group(0).startswith("$$$"):
            name = found.group(1)
            if name and name != ANONYMOUS and name not in multis:
                multis.append(name)
        elif found.group(2) != ANONYMOUS and found.group(2) not in singles:
            singles.append(found.group(2))
    return tuple(singles), tuple(multis)


def _reason(exc: Exception) -> str:
    """ast-grep's own words for a refused pattern: the last cause it gives."""
    causes = re.findall(r"^\s*\d+: (.+)$", str(exc).split("Stack backtrace")[0], re.MULTILINE)
    return causes[-1].rstrip(".") if causes else str(exc).splitlines()[0]


def _shown(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "…"


def _parse_of(source: str, language: str) -> tuple[str, str | None, tuple[str, ...]]:
    """The node kind ast-grep matches the pattern as, the text of an ERROR in it, and the
    operators a matching file must hold (see _operators)."""
    expando = _EXPANDO.get(language)
    text = source if expando is None else source.replace("$", expando)
    root = SgRoot(text, language).root()
    node = root
    # Like ast-grep: a pattern is its one top-level node, down through wrappers that span
    # the same code (a statement around an expression, an ERROR around a whole node).
    while len(children := node.children()) == 1 and (
            node is root or children[0].range() == node.range()):
        node = children[0]
    # An ERROR node that is one metavariable ($$$P where the grammar takes no identifier),
    # or part of one, is no error to ast-grep: it becomes the metavariable, and the CLI
    # warns of nothing. Only an ERROR around other code is reported.
    errors = [node] if node.kind() == "ERROR" else node.find_all(kind="ERROR")
    for error in errors:
        text = error.text().replace(expando or "$", "$").strip()
        if not _METAVAR_PART.fullmatch(text):
            return node.kind(), _shown(text), ()
    return node.kind(), None, () if errors or "$$$" in source else _operators(node)


def _operators(node: SgNode) -> tuple[str, ...]:
    """The operator tokens of a pattern that parsed without an ERROR and has no `$$$`.

    ast-grep matches each unnamed leaf of a pattern by its kind (smart strictness skips
    none of the pattern's nodes), and a token of an operator's kind is that operator's text
    in the file. After a `$$$` it may skip one, and an ERROR in the pattern matches any
    kind: such patterns give none.
    """
    found: list[str] = []
    stack = [node]
    while stack:
        node = stack.pop()
        children = node.children()
        if children:
            stack.extend(children)
        elif not node.is_named() and _OPERATOR.fullmatch(node.text()):
            found.append(node.text())
    return tuple(dict.fromkeys(sorted(found)))


@lru_cache(maxsize=256)
def compile_sg(source: str, language: str) -> SgPattern:
    """Check `source` with ast-grep; raise PatternError with its reason when it refuses it."""
    fragment = source.strip()
    if not fragment:
        raise PatternError("the pattern is empty", [])
    try:
        SgRoot("", language).root().find(pattern=fragment)
    except RuntimeError as exc:  # ast-grep refused the pattern (several nodes, no node)
        reason = _reason(exc).replace(_EXPANDO.get(language, "$"), "$")
        if reason.startswith("Multiple AST nodes"):
            raise SeveralNodes(reason, [CONTEXT]) from None
        raise PatternError(reason, [CONTEXT]) from None
    kind, error, operators = _parse_of(fragment, language)
    singles, multis = _names(fragment)
    words = _WORD.findall(_METAVAR.sub(" ", fragment).encode("utf-8"))
    literals = [*words, *(operator.encode("utf-8") for operator in operators)]
    return SgPattern(fragment, language, singles, multis, tuple(dict.fromkeys(literals)),
                     PatternSummary(language, CONTEXT, kind, error, ENGINE))


class Positions:
    """Byte offsets of (line, character column) positions in one file's text."""

    def __init__(self, text: str, source: bytes) -> None:
        self.ascii = len(text) == len(source)
        self.text = text
        self._char_starts = [0]
        self._byte_starts = [0]
        if not self.ascii:
            for line in text.split("\n")[:-1]:
                self._char_starts.append(self._char_starts[-1] + len(line) + 1)
                self._byte_starts.append(self._byte_starts[-1] + len(line.encode("utf-8")) + 1)

    def byte(self, line: int, column: int, index: int) -> int:
        if self.ascii:
            return index
        start = self._char_starts[line]
        return self._byte_starts[line] + len(self.text[start:start + column].encode("utf-8"))


def parse(source: bytes, language: str) -> SgRoot:
    """The file parsed by ast-grep (UnicodeDecodeError when it is not UTF-8)."""
    return SgRoot(source.decode("utf-8"), language)


def syntax_errors(source: bytes, language: str) -> list[tuple[int, int]]:
    """(byte offset, line from 0) of each syntax error of the text as ast-grep parses it,
    in document order: an ERROR node (not what it holds), and a token the parser had to
    assume (tree-sitter's MISSING node, which ast-grep shows as a leaf of no width)."""
    text = source.decode("utf-8")
    positions = Positions(text, source)
    found: list[tuple[int, int]] = []
    stack = [SgRoot(text, language).root()]
    while stack:
        node = stack.pop()
        children = node.children()
        start = node.range().start
        if node.kind() == "ERROR" or (not children and node.range().end.index == start.index
                                      and node.kind()):
            found.append((positions.byte(start.line, start.column, start.index), start.line))
            continue
        stack.extend(reversed(children))
    return found


def find_nodes(pattern: SgPattern, root: SgRoot, *, look_for_errors: bool
               ) -> tuple[list[SgNode], bool]:
    """The nodes matching `pattern` in the parsed file, in ast-grep's order (outer first);
    and, when asked, whether the file has a syntax error (an ERROR node), found in the same
    walk of the tree: a walk of its own cost a search of every file as much as the matching."""
    if not look_for_errors:
        return root.root().find_all(pattern=pattern.source), False
    either = root.root().find_all(any=[{"pattern": pattern.source}, {"kind": "ERROR"}])
    matches = [node for node in either
               if node.kind() != "ERROR" or node.matches(pattern=pattern.source)]
    return matches, len(matches) < len(either)


def found(pattern: SgPattern, matches: list[SgNode], source: bytes) -> Iterator[Found]:
    """`matches` as plain positions (byte ranges of the match and its captures)."""
    if not matches:
        return
    positions = Positions(source.decode("utf-8"), source)  # the root's text() is trimmed

    def span(node: SgNode) -> tuple[int, int]:
        where = node.range()
        return (positions.byte(where.start.line, where.start.column, where.start.index),
                positions.byte(where.end.line, where.end.column, where.end.index))

    for match in matches:
        where = match.range()
        start, end = span(match)
        spans: dict[str, tuple[int, int] | None] = {}
        for name in pattern.singles:
            node = match.get_match(name)
            spans[name] = span(node) if node is not None else None
        for name in pattern.multis:
            nodes = match.get_multiple_matches(name)
            spans[name] = (span(nodes[0])[0], span(nodes[-1])[1]) if nodes else None
        yield Found(start, end, (where.start.line, where.start.column),
                    (where.end.line, where.end.column), spans)
