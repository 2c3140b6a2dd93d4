"""Compiling a pattern: metavariables, the scaffolding ladder, the pattern tree.

`$NAME` matches one named node, `$$$NAME` a run of zero or more siblings (`$$$` alone:
without binding), `$_` one node without binding. The pattern is parsed by the same
grammar as the files, so whitespace, line breaks and comments never change a match.

A pattern is found, or reported as unparseable, never searched as the wrong kind of node:
it is parsed in every rung of the ladder that takes it, and stands for the form of the
fragment those parses share (see `_choose`). Where a grammar gives a fragment no node of
its own (Dart: `foo(1)` is an identifier followed by a selector), the pattern is that run
of siblings, found inside whatever node holds it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from tree_sitter import Node, Parser

from .ladder import ladder_for
from .languages import load_language, placeholder_for

_METAVAR = re.compile(r"\$\$\$([A-Z_][A-Z0-9_]*)?|\$([A-Z_][A-Z0-9_]*)")
ANONYMOUS = "_"
SEQUENCE = "(sequence)"  # the root kind of a pattern that is a run of siblings, not one node


class PatternError(Exception):
    """No scaffolding context parses the pattern cleanly."""

    def __init__(self, reason: str, contexts: list[str]) -> None:
        super().__init__(reason)
        self.reason = reason
        self.contexts = contexts


@dataclass(frozen=True, slots=True)
class PNode:
    """A node of the pattern tree: concrete (kind, text, children) or a metavariable."""

    kind: str
    named: bool
    text: bytes
    children: tuple[PNode, ...] = ()
    meta: str | None = None  # metavariable name; ANONYMOUS binds nothing
    multi: bool = False  # `$$$`: a run of siblings


@dataclass(frozen=True)
class Anchor:
    """A concrete leaf of the pattern and its depth below the pattern's root.

    Concrete pattern nodes map one to one onto target nodes, so the node `depth` levels
    above an occurrence of this token is the only place a match containing it can start.
    """

    text: bytes
    kind: str
    depth: int
    named: bool  # an identifier, a number, a keyword: rarer than punctuation


@dataclass(frozen=True)
class PatternSummary:
    """What the server keeps of a pattern compiled in a worker (the tree stays there)."""

    language: str
    context: str  # the ladder rung that parsed it ("ast-grep": ast-grep's own parse)
    kind: str  # the root's node kind; SEQUENCE for a run of siblings
    # The text of an ERROR node in the pattern's parse (ast-grep matches such a pattern all
    # the same, and it rarely finds what was meant); None when it parsed cleanly.
    parse_error: str | None = None
    engine: str = "built-in"  # or "ast-grep" (astgrep.py): which matcher searched


@dataclass(frozen=True)
class Pattern:
    """A compiled pattern, ready to match trees of `language`."""

    source: str
    language: str
    context: str  # the ladder rung that parsed it
    root: PNode
    literals: tuple[bytes, ...]  # every concrete token: a file lacking one cannot match
    metavars: tuple[str, ...]
    # Tokens whose every occurrence points at one candidate, best first (see `_anchors`).
    anchors: tuple[Anchor, ...]

    def summary(self) -> PatternSummary:
        return PatternSummary(self.language, self.context, self.root.kind)

    @property
    def is_sequence(self) -> bool:
        """The pattern is a run of siblings (Dart's `foo(1)`: an identifier and a selector)."""
        return self.root.meta is None and self.root.kind == SEQUENCE

    @property
    def query(self) -> str | None:
        """A tree-sitter query finding candidate nodes (None: every named node is one)."""
        if self.root.meta is not None or self.is_sequence:
            return None
        if self.root.named:
            return f"({self.root.kind}) @m"
        escaped = self.root.kind.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}" @m'


def metavariable_names(source: str) -> list[str]:
    """Names bound by the pattern (`$_` and bare `$$$` bind nothing)."""
    names = []
    for match in _METAVAR.finditer(source):
        name = match.group(1) or match.group(2)
        if name and name != ANONYMOUS and name not in names:
            names.append(name)
    return names


def _substitute(source: str, placeholder: str) -> str:
    def replace(match: re.Match[str]) -> str:
        if match.group(0).startswith("$$$"):
            return placeholder * 3 + (match.group(1) or "")
        return placeholder + match.group(2)

    return _METAVAR.sub(replace, source)


def _meta_of(text: str, placeholder: str) -> tuple[str, bool] | None:
    """(name, multi) when `text` is exactly one substituted metavariable."""
    triple = placeholder * 3
    if text.startswith(triple):
        rest = text[len(triple):]
        if rest == "" or re.fullmatch(r"[A-Z_][A-Z0-9_]*", rest):
            return (rest or ANONYMOUS), True
        return None
    if text.startswith(placeholder):
        rest = text[len(placeholder):]
        if re.fullmatch(r"[A-Z_][A-Z0-9_]*", rest):
            return rest, False
    return None


def _build(node: Node, placeholder: str, data: bytes, end: int) -> PNode:
    """The pattern tree of `node`, without what the scaffold put after the fragment's `end`."""
    text = data[node.start_byte:min(node.end_byte, end)]
    meta = _meta_of(text.decode("utf-8", "replace").strip(), placeholder)
    if meta is not None:
        name, multi = meta
        return PNode(node.type, node.is_named, text, (), name, multi)
    children = tuple(_build(child, placeholder, data, end) for child in node.children
                     if not child.is_extra and child.start_byte < end)
    return PNode(node.type, node.is_named, text, children)


def _literals(node: PNode, out: list[bytes]) -> None:
    if node.meta is not None:
        return
    if not node.children:
        if node.text.strip():
            out.append(node.text)
        return
    for child in node.children:
        _literals(child, out)


def _anchors(root: PNode) -> tuple[Anchor, ...]:
    """One anchor per distinct concrete leaf text, the most selective first by its look: a
    named token (identifier, keyword) before punctuation, longer first, shallow first (fewer
    parents to climb). A search counts them in each file and starts from the rarest there."""
    best: dict[bytes, tuple[tuple[bool, int, int], Anchor]] = {}
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if node.meta is not None:
            continue
        if not node.children:
            if node.text.strip():
                key = (node.named, len(node.text), -depth)
                if node.text not in best or key > best[node.text][0]:
                    best[node.text] = (key, Anchor(node.text, node.kind, depth, node.named))
            continue
        stack.extend((child, depth + 1) for child in node.children)
    return tuple(anchor for _, anchor in sorted(best.values(), key=lambda kept: kept[0],
                                                 reverse=True))


Form = tuple[object, ...]  # what a parse makes of the fragment: a node kind, or a run's kinds
Offer = tuple[Form, Node | tuple[Node, ...]]  # a form and the node (or run) that has it


def _forms(root: Node, start: int, end: int, implied_end: int) -> list[Offer]:
    """What one clean parse offers for the fragment at [start, end), deepest first.

    The named nodes spanning exactly the fragment (or the fragment and the rung's implied
    suffix), then the run of siblings the fragment consists of. The scaffold's root is never
    offered: a pattern is a piece of a file, not a whole one.
    """
    chain: list[Node] = []
    node: Node | None = root.descendant_for_byte_range(start, end)
    container = node
    while node is not None and node.start_byte == start and node.end_byte <= implied_end:
        if node.is_named and node.end_byte in (end, implied_end) and node.parent is not None:
            chain.append(node)
        node = node.parent
    while container is not None and (container.start_byte > start or container.end_byte < end):
        container = container.parent
    parent = chain[0] if chain else container
    forms: list[Offer] = [(("node", n.type), n) for n in chain]
    if parent is None:
        return forms
    run = tuple(child for child in parent.children
                if not child.is_extra and start <= child.start_byte < end)
    if run and run[0].start_byte == start and run[-1].end_byte == end \
            and all(child.end_byte <= end for child in run) and (len(run) > 1 or not chain):
        forms.append((("run", *((child.type, child.is_named) for child in run)), run))
    return forms


def _choose(parses: list[tuple[str, list[Offer]]]) -> tuple[str, Node | tuple[Node, ...]]:
    """The form of the fragment that code has, whatever surrounds it.

    A form every clean parse shares comes from the fragment itself; one only some share
    comes from their scaffolds (Dart's `_(foo(1))` makes `foo(1)` an `argument`, which a
    statement `foo(1);` has no trace of). So: the form the most parses share, and among
    those the first rung's deepest.
    """
    support = Counter(form for _, forms in parses for form in {f for f, _ in forms})
    best = max(support.values())
    for context, forms in parses:
        for form, value in forms:
            if support[form] == best:
                return context, value
    raise AssertionError("a parse with forms was given")


@lru_cache(maxsize=256)
def compile_pattern(source: str, language: str) -> Pattern:
    """Parse `source` as a `language` fragment; raise PatternError when no context accepts it."""
    try:
        return _compile(source, language)
    except RecursionError:  # the workers' recursion limit fits the default size limit only
        raise PatternError("the pattern nests too deeply", []) from None


def _compile(source: str, language: str) -> Pattern:
    fragment = source.strip()
    if not fragment:
        raise PatternError("the pattern is empty", [])
    placeholder = placeholder_for(language)
    substituted = _substitute(fragment, placeholder)
    parser = Parser(load_language(language))
    tried: list[str] = []
    parses: list[tuple[str, list[Offer]]] = []
    spans: dict[str, tuple[bytes, int]] = {}  # per context: its scaffold and the fragment's end
    for context in ladder_for(language):
        tried.append(context.name)
        scaffolded, at, until = context.fill(substituted)
        data = scaffolded.encode("utf-8")
        start = len(scaffolded[:at].encode("utf-8"))
        end = start + len(scaffolded[at:until].encode("utf-8"))
        implied_end = end + len(context.implied.encode("utf-8"))
        tree = parser.parse(data)
        if tree.root_node.has_error:
            continue
        forms = _forms(tree.root_node, start, end, implied_end)
        if forms:
            parses.append((context.name, forms))
            spans[context.name] = (data, end)
    if not parses:
        raise PatternError(f"no context parses it as {language}", tried)
    context_name, chosen = _choose(parses)
    data, end = spans[context_name]
    if isinstance(chosen, tuple):
        root = PNode(SEQUENCE, False, substituted.encode("utf-8"),
                     tuple(_build(node, placeholder, data, end) for node in chosen))
    else:
        root = _build(chosen, placeholder, data, end)
    literals: list[bytes] = []
    _literals(root, literals)
    # Longest first: the rarest tokens reject a file soonest.
    unique = tuple(sorted(set(literals), key=len, reverse=True))
    return Pattern(source, language, context_name, root, unique,
                   tuple(metavariable_names(source)), _anchors(root))
