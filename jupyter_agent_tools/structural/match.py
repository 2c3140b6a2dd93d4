"""Matching a compiled pattern against a parsed tree.

Candidates come from the occurrences of the pattern's rarest concrete token in each file
(else from a tree-sitter query, in C); Python only verifies them. Target
nodes the pattern does not mention are skipped only when they are unnamed punctuation
(a trailing comma), never when named. Comments are extras and are never compared. A
metavariable repeated in a pattern must capture the same tokens, so whitespace and
comments inside the captured code do not matter.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from tree_sitter import Node, Query, QueryCursor, Tree

from .languages import load_language
from .pattern import ANONYMOUS, Anchor, Pattern, PNode

Binding = Node | tuple[Node, ...]
Env = dict[str, Binding]


def _children(node: Node) -> list[Node]:
    return [child for child in node.children if not child.is_extra]


def tokens(binding: Binding, source: bytes) -> list[bytes]:
    """The token texts of a capture, without whitespace and comments."""
    out: list[bytes] = []
    for node in binding if isinstance(binding, tuple) else (binding,):
        _tokens(node, source, out)
    return out


def _tokens(node: Node, source: bytes, out: list[bytes]) -> None:
    if node.child_count == 0:
        out.append(source[node.start_byte:node.end_byte])
        return
    position = node.start_byte
    for child in node.children:
        # Text no child covers (some grammars leave string content bare) still counts.
        out.extend(source[position:child.start_byte].split())
        if not child.is_extra:
            _tokens(child, source, out)
        position = child.end_byte
    out.extend(source[position:node.end_byte].split())


class Matcher:
    """Finds the matches of one pattern in trees of its language."""

    def __init__(self, pattern: Pattern) -> None:
        self.pattern = pattern
        self._query = _query(pattern.language, pattern.query) if pattern.query else None
        self._run_kinds = _run_kinds(pattern.root) if pattern.is_sequence else ()
        # Counted in each file to choose where to start: the named tokens, as punctuation is
        # all but never the rarer (and each count reads the whole file).
        self._counted = tuple(a for a in pattern.anchors if a.named) or pattern.anchors

    def find(self, tree: Tree, source: bytes) -> Iterator[tuple[Node, Node, Env]]:
        """Every (first node, last node, captures) match in document order, nested ones too.

        A span is reported once, though several nodes may share it (an expression statement
        and its expression both match `$A`): the outermost is kept.
        """
        seen: set[tuple[int, int]] = set()
        for first, last, env in self._matches(tree, source):
            span = (first.start_byte, last.end_byte)
            if span not in seen:
                seen.add(span)
                yield first, last, env

    def _matches(self, tree: Tree, source: bytes) -> Iterator[tuple[Node, Node, Env]]:
        root = self.pattern.root
        for node in self._candidates(tree, source):
            if not self.pattern.is_sequence:
                env = _match(root, node, {}, source)
                if env is not None:
                    yield node, node, env
                continue
            yield from _runs(root.children, self._run_kinds, _children(node), source)

    def _candidates(self, tree: Tree, source: bytes) -> list[Node]:
        anchors = self.pattern.anchors
        kind = None if self.pattern.is_sequence else self.pattern.root.kind
        if anchors:
            # Any anchor finds every match: the one this file has fewest of finds the fewest
            # candidates to verify in Python (`print($A, 5)`: the 5s, not each print).
            rarest = min(self._counted, key=lambda anchor: source.count(anchor.text))
            others = [anchor.text for anchor in anchors if anchor is not rarest]
            # A match holds every concrete token of the pattern inside its node: a candidate
            # lacking one is dropped by a search in C before any matching in Python.
            return [node for node in _anchored(tree, source, rarest, kind)
                    if all(source.find(text, node.start_byte, node.end_byte) >= 0
                           for text in others)]
        if self._query is not None:
            found = QueryCursor(self._query).captures(tree.root_node).get("m", [])
            return sorted(found, key=lambda n: (n.start_byte, -n.end_byte))
        return list(_named_nodes(tree))


def _run_kinds(root: PNode) -> tuple[frozenset[str], ...]:
    """For each `$NAME` of a run pattern, the kinds of its concrete neighbours (not its own).

    In a run of siblings a metavariable takes the place of the node it parsed as, not of a
    neighbour: Dart's `$X.dispose()` is an identifier and two selectors, and `$X` binding
    the selector `.b` of `a.b.dispose()` would report `.b.dispose()` as a call. Nodes of the
    neighbours' kinds may extend it instead (`_match_chain`).
    """
    concrete = {p.kind for p in root.children if p.meta is None}
    return tuple(frozenset(concrete - {p.kind}) if p.meta is not None else frozenset()
                 for p in root.children)


def _runs(patterns: tuple[PNode, ...], excluded: tuple[frozenset[str], ...],
          targets: list[Node], source: bytes) -> Iterator[tuple[Node, Node, Env]]:
    """The runs of `targets` matching `patterns`, leftmost first and never overlapping."""
    needed = sum(1 for p in patterns if not p.multi)  # each takes a target of its own
    j = 0
    while len(targets) - j >= max(needed, 1):
        if not targets[j].is_named and patterns[0].meta is not None:
            j += 1  # a run starts with the node its first element stands for
            continue
        found = _match_run(patterns, 0, targets, j, {}, source, excluded)
        if found is None or found[1] == j:
            j += 1
            continue
        env, after = found
        yield targets[j], targets[after - 1], env
        j = after


def _anchored(tree: Tree, source: bytes, anchor: Anchor, kind: str | None) -> list[Node]:
    """Candidates found from the anchor token's occurrences (None: a node of any kind)."""
    root = tree.root_node
    found: dict[int, Node] = {}
    width = len(anchor.text)
    at = source.find(anchor.text)
    while at >= 0:
        node: Node | None = root.descendant_for_byte_range(at, at + width)
        # The smallest node here may be a child of the token's node (same range).
        while node is not None and node.type != anchor.kind and node.start_byte == at \
                and node.end_byte == at + width:
            node = node.parent
        if node is not None and node.type == anchor.kind and node.start_byte == at \
                and node.end_byte == at + width:
            for _ in range(anchor.depth):
                node = node.parent
                if node is None:
                    break
            if node is not None and kind in (None, node.type):
                found[node.id] = node
        at = source.find(anchor.text, at + 1)
    return sorted(found.values(), key=lambda n: (n.start_byte, -n.end_byte))


@lru_cache(maxsize=256)
def _query(language: str, source: str) -> Query | None:
    try:
        return Query(load_language(language), source)
    except Exception:  # noqa: BLE001 - a kind the query language cannot name: walk instead
        return None


def _named_nodes(tree: Tree) -> Iterator[Node]:
    cursor = tree.walk()
    while True:
        node = cursor.node
        if node is not None and node.is_named and not node.is_extra:
            yield node
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return


def _bind(name: str, value: Binding, env: Env, source: bytes) -> Env | None:
    if name == ANONYMOUS:
        return env
    bound = env.get(name)
    if bound is None:
        return {**env, name: value}
    return env if _same_code(bound, value, source) else None


def _same_code(a: Binding, b: Binding, source: bytes) -> bool:
    if isinstance(a, Node) and isinstance(b, Node):
        text_a = source[a.start_byte:a.end_byte]
        text_b = source[b.start_byte:b.end_byte]
        if text_a == text_b:
            return True
        if a.child_count == 0 and b.child_count == 0:  # tokens: only the text counts
            return False
    return tokens(a, source) == tokens(b, source)


def _match(p: PNode, node: Node, env: Env, source: bytes) -> Env | None:
    if p.meta is not None:
        return _bind(p.meta, node, env, source) if node.is_named else None
    if p.kind != node.type:
        return None
    if not p.children:
        return env if source[node.start_byte:node.end_byte] == p.text else None
    found = _match_run(p.children, 0, _children(node), 0, env, source)
    return found[0] if found is not None else None


def _match_run(
    patterns: tuple[PNode, ...], i: int, targets: list[Node], j: int, env: Env, source: bytes,
    excluded: tuple[frozenset[str], ...] | None = None,
) -> tuple[Env, int] | None:
    """Match `patterns[i:]` against `targets[j:]`: the captures and where the match ends.

    With `excluded` (a run pattern, see `_run_kinds`) the match may end before the last
    target and its first element must take `targets[j]`; else every named target is matched.
    """
    if i == len(patterns):
        if excluded is not None or all(not t.is_named for t in targets[j:]):
            return env, j
        return None
    p = patterns[i]
    if excluded is not None and p.meta is not None and (i == 0 or not p.multi):
        return _match_chain(patterns, i, targets, j, env, source, excluded)
    if p.multi:
        # Shortest run first, so a following concrete node anchors the run's end.
        for k in range(j, len(targets) + 1):
            bound = _bind(p.meta or ANONYMOUS, tuple(targets[j:k]), env, source)
            if bound is not None:
                done = _match_run(patterns, i + 1, targets, k, bound, source, excluded)
                if done is not None:
                    return done
        return None
    while j < len(targets):
        target = targets[j]
        bound = _match(p, target, env, source)
        if bound is not None:
            done = _match_run(patterns, i + 1, targets, j + 1, bound, source, excluded)
            if done is not None:
                return done
        if target.is_named or (excluded is not None and i == 0):
            return None
        j += 1
    return None


def _match_chain(patterns: tuple[PNode, ...], i: int, targets: list[Node], j: int, env: Env,
                 source: bytes, excluded: tuple[frozenset[str], ...]) -> tuple[Env, int] | None:
    """A run pattern's `$NAME` (or leading `$$$NAME`): one node in its own place, extended
    by the nodes of its neighbours' kinds that follow it, shortest first.

    A flat grammar spreads one expression over siblings (Dart's `a.b` is an identifier and a
    selector): `$X.dispose()` takes `a.b` whole, as `$X` takes the member expression `a.b`
    in JavaScript, and never starts inside a chain or before a `=`.
    """
    p = patterns[i]
    while i > 0 and j < len(targets) and not targets[j].is_named:
        j += 1  # punctuation between elements (a metavariable binds named nodes only)
    if j == len(targets) or not targets[j].is_named or targets[j].type in excluded[i]:
        return None
    end = j + 1
    while True:
        binding = targets[j] if end == j + 1 and not p.multi else tuple(targets[j:end])
        bound = _bind(p.meta or ANONYMOUS, binding, env, source)
        if bound is not None:
            done = _match_run(patterns, i + 1, targets, end, bound, source, excluded)
            if done is not None:
                return done
        if end == len(targets) or not targets[end].is_named \
                or targets[end].type not in excluded[i]:
            return None
        end += 1
