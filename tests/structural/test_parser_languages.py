"""Grammar ids, extension inference, and the `$` placeholder chosen for each language."""

from __future__ import annotations

import pytest
from tree_sitter import Parser

from jupyter_agent_tools.structural.languages import (
    PLACEHOLDERS,
    close_ids,
    extensions_for,
    language_for_path,
    load_language,
    placeholder_for,
)

# A line of code per language with an identifier slot `{}` where an argument goes.
SAMPLES = {
    "python": "print({})\n",
    "javascript": "foo({});",
    "typescript": "foo({});",
    "tsx": "foo({});",
    "go": "package p\nfunc f() { foo({}) }",
    "rust": "fn f() { foo({}); }",
    "ruby": "foo({})",
    "kotlin": "fun f() { foo({}) }",
    "php": "<?php foo({});",
    "dart": "void f() { foo({}); }",
    "java": "class C { void f() { foo({}); } }",
    "c": "void f() { foo({}); }",
    "cpp": "void f() { foo({}); }",
    "csharp": "class C { void f() { foo({}); } }",
    "swift": "foo({})",
    "scala": "object O { foo({}) }",
    "lua": "foo({})",
    "bash": "foo {}",
    "elixir": "foo({})",
    "haskell": "f = foo {}",
    "zig": "fn f() void { foo({}); }",
    "julia": "foo({})",
    "r": "foo({})",
    "sql": "SELECT a FROM t WHERE b = {};",
}


def test_every_placeholder_entry_has_a_sample():
    assert set(PLACEHOLDERS) == set(SAMPLES)


@pytest.mark.parametrize("language", sorted(PLACEHOLDERS))
def test_placeholder_parses_as_one_identifier(language):
    """`$A`, `$$$A` and `$_`, substituted, are each one named leaf with no parse error."""
    placeholder = placeholder_for(language)
    parser = Parser(load_language(language))
    for metavariable in ("A", "AB_1", "_"):
        for stand_in in (placeholder + metavariable, placeholder * 3 + metavariable):
            source = SAMPLES[language].replace("{}", stand_in).encode()
            tree = parser.parse(source)
            assert not tree.root_node.has_error, (language, stand_in)
            start = source.index(stand_in.encode())
            node = tree.root_node.named_descendant_for_byte_range(
                start, start + len(stand_in.encode()))
            assert (node.start_byte, node.end_byte) == (start, start + len(stand_in.encode()))
            assert node.child_count == 0, (language, stand_in, node.type)


def test_dollar_is_kept_only_where_identifiers_take_it():
    assert placeholder_for("javascript") == "$"
    assert placeholder_for("dart") == "$"  # Dart identifiers are ASCII: a non-ASCII letter fails
    for language in ("python", "go", "rust", "ruby", "kotlin", "php"):
        assert placeholder_for(language) != "$"


def test_extensions_and_close_ids():
    assert language_for_path("a/b.py") == "python"
    assert language_for_path("x.d.ts") == "typescript"
    assert language_for_path("x.tsx") == "tsx"
    assert language_for_path("README") is None
    assert {".js", ".mjs", ".cjs", ".jsx"} <= extensions_for("javascript")
    assert "python" in close_ids("pyhton")
    assert "typescript" in close_ids("typscript")
