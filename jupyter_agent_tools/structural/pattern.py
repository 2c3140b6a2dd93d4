"""Compiling a pattern: metavariables, the scaffolding ladder, the pattern tree.

`$NAME` matches one named node, `$$$NAME` a run of zero or more siblings (`$$$` alone:
without binding), `$_` one node without binding. The pattern is parsed by the same
grammar as the files, so whitespace, line breaks and comments never change a match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from tree_sitter import Node, Parser

from .ladder import ladder_for
from .languages import load_language, placeholder_for

_METAVAR = re.compile(r"\$\$\$([A-Z_][A-Z0-9_]*)?|\$([A-Z_][A-Z0-9_]*)")
ANONYMOUS = "_"


class PatternError(Exception):
    """No scaffolding context parses the pattern cleanly."""

    def __init__(self, message: str, contexts: list[str]) -> None:
        super().__init__(message)
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


@dataclass(frozen=True)
class Pattern:
    """A compiled pattern, ready to match trees of `language`."""

    source: str
    language: str
    context: str  # the ladder rung that parsed it
    root: PNode
    literals: tuple[bytes, ...]  # every concrete token: a file lacking one cannot match
    metavars: tuple[str, ...]
    anchor: Anchor | None  # a token whose every occurrence points at one candidate

    @property
    def query(self) -> str | None:
        """A tree-sitter query finding candidate nodes (None: every named node is one)."""
        if self.root.meta is not None:
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


def _build(node: Node, placeholder: str) -> PNode:
    text = node.text or b""
    meta = _meta_of(text.decode("utf-8", "replace").strip(), placeholder)
    if meta is not None:
        name, multi = meta
        return PNode(node.type, node.is_named, text, (), name, multi)
    children = tuple(_build(child, placeholder) for child in node.children if not child.is_extra)
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


def _anchor(root: PNode) -> Anchor | None:
    """The most selective concrete leaf: a named token (identifier, keyword) if any, longest."""
    best: tuple[tuple[bool, int], Anchor] | None = None
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if node.meta is not None:
            continue
        if not node.children:
            if node.text.strip():
                key = (node.named, len(node.text))
                if best is None or key > best[0]:
                    best = (key, Anchor(node.text, node.kind, depth))
            continue
        stack.extend((child, depth + 1) for child in node.children)
    return best[1] if best else None


def _spanning_node(root: Node, start: int, end: int) -> Node | None:
    """The deepest named node whose range is exactly [start, end)."""
    node = root.named_descendant_for_byte_range(start, end)
    if node is None or node.start_byte != start or node.end_byte != end:
        return None
    return node


@lru_cache(maxsize=256)
def compile_pattern(source: str, language: str) -> Pattern:
    """Parse `source` as a `language` fragment; raise PatternError when no context accepts it."""
    fragment = source.strip()
    if not fragment:
        raise PatternError("the pattern is empty", [])
    placeholder = placeholder_for(language)
    substituted = _substitute(fragment, placeholder)
    parser = Parser(load_language(language))
    tried: list[str] = []
    for context in ladder_for(language):
        tried.append(context.name)
        scaffolded, at, until = context.fill(substituted)
        data = scaffolded.encode("utf-8")
        start = len(scaffolded[:at].encode("utf-8"))
        end = start + len(scaffolded[at:until].encode("utf-8"))
        tree = parser.parse(data)
        if tree.root_node.has_error:
            continue
        node = _spanning_node(tree.root_node, start, end)
        if node is None:
            continue
        root = _build(node, placeholder)
        literals: list[bytes] = []
        _literals(root, literals)
        # Longest first: the rarest tokens reject a file soonest.
        unique = tuple(sorted(set(literals), key=len, reverse=True))
        return Pattern(source, language, context.name, root, unique,
                       tuple(metavariable_names(source)), _anchor(root))
    raise PatternError(f"no context parses {fragment!r} as {language}", tried)
