"""Matcher: whichever token a search starts from, it finds the same matches."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tree_sitter import Parser

from jupyter_agent_tools.structural.languages import load_language
from jupyter_agent_tools.structural.match import Matcher
from jupyter_agent_tools.structural.pattern import Pattern, compile_pattern

# Many prints, few fives: the rarest token of `print($A, 5)` here is `5`, not `print`.
PY = "".join(f"def handler_{n}(value):\n    print(value, {n % 7})\n    print(value,\n"
             f"          5)  # print(x, 5)\n    return [value, {n}]\n\n" for n in range(30))
JS = """\
for (const item of items) { console.log(item, 5); }
console.log(a, b, 5); console.log(5, 5); log(item, 5);
if (x) { console.log(x, 5) } else { console.log(y, 6) }
"""


def _found(pattern: Pattern, source: bytes) -> list[tuple[int, int, dict[str, str]]]:
    tree = Parser(load_language(pattern.language)).parse(source)
    return [(first.start_byte, last.end_byte,
             {name: source[node.start_byte:node.end_byte].decode()
              for name, node in env.items() if not isinstance(node, tuple)})
            for first, last, env in Matcher(pattern).find(tree, source)]


@pytest.mark.parametrize(("language", "pattern", "source"), [
    ("python", "print($A, 5)", PY),
    ("python", "print($A, $B)", PY),
    ("python", "return [$A, $$$REST]", PY),
    ("python", "def $F(value): $$$BODY", PY),
    ("javascript", "console.log($A, 5)", JS),
    ("javascript", "console.log($$$ARGS)", JS),
])
def test_every_anchor_finds_what_a_walk_of_every_node_finds(language, pattern, source):
    compiled = compile_pattern(pattern, language)
    data = source.encode()
    everywhere = _found(replace(compiled, anchors=()), data)  # every node of the root's kind
    assert everywhere, "the pattern matches the sample"
    assert len(compiled.anchors) > 1
    for anchor in compiled.anchors:
        assert _found(replace(compiled, anchors=(anchor,)), data) == everywhere, anchor
    # The search itself starts from the file's rarest anchor: the same matches again.
    assert _found(compiled, data) == everywhere


def test_the_rarest_token_of_the_sample_is_not_the_first_anchor():
    compiled = compile_pattern("print($A, 5)", "python")
    data = PY.encode()
    rarest = min(compiled.anchors, key=lambda anchor: data.count(anchor.text))
    assert compiled.anchors[0].text == b"print" and rarest.text == b"5"
    assert [m[2] for m in _found(compiled, data)] == [{"A": "value"}] * 34  # 30 on two lines, 4 where n % 7 == 5
