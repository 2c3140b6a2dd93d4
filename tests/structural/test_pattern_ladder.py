"""The scaffolding ladder: which context parses which fragment, per language."""

from __future__ import annotations

import pytest

from jupyter_agent_tools.structural.pattern import PatternError, compile_pattern

CASES = [
    # (language, pattern, context, kind of the pattern's root node)
    ("python", "print($A)", "statement", "call"),
    ("python", "return $X", "statement", "return_statement"),
    ("python", "def $F(self):\n    $$$BODY", "statement", "function_definition"),
    ("python", "key=$V", "statement", "assignment"),  # every keyword argument is one too
    ("python", "**$KW", "expression", "list_splat"),
    ("python", "except $E:\n    $$$B", "except clause", "except_clause"),
    ("python", "elif $C:\n    $$$B", "elif/else clause", "elif_clause"),
    ("python", "for $X in $Y", "comprehension clause", "for_in_clause"),
    ("python", "case $P:\n    $$$B", "match case", "case_clause"),
    ("javascript", "console.log($$$ARGS)", "statement", "call_expression"),
    ("javascript", "foo($A);", "statement", "expression_statement"),
    ("javascript", "get $X() { $$$B }", "class member", "method_definition"),
    ("javascript", "case $X: $$$B", "switch case", "switch_case"),
    ("typescript", "let $X: $T = $V;", "statement", "lexical_declaration"),
    ("typescript", "readonly $P: $T", "class member", "public_field_definition"),
    ("dart", "if ($X != null) $X.dispose();", "statement", "if_statement"),
    ("dart", "$A ?? $B", "expression", "if_null_expression"),
    ("dart", "export '$X';", "top-level declaration", "library_export"),
    ("dart", "case $X:", "switch case", "switch_statement_case"),
    ("rust", "let $X = $Y;", "statement", "let_declaration"),
    ("rust", "fn $F($$$P) -> $R { $$$B }", "statement", "function_item"),
    ("rust", "$P => $E", "match arm", "match_arm"),
    ("rust", "pub $F: $T", "struct field", "field_declaration"),
    ("go", "if err != nil { return $$$R }", "statement", "if_statement"),
    ("go", "func $F($$$P) $R { $$$B }", "top-level declaration", "function_declaration"),
    ("go", "$F $T", "struct field", "field_declaration"),
    ("go", "$F($$$A) $R", "interface member", "method_elem"),
    ("go", "case $X:", "switch case", "expression_case"),
]

@pytest.mark.parametrize(("language", "pattern", "context", "kind"), CASES)
def test_ladder_picks_the_first_clean_context(language, pattern, context, kind):
    compiled = compile_pattern(pattern, language)
    assert (compiled.context, compiled.root.kind) == (context, kind)


@pytest.mark.parametrize(("language", "pattern"), [
    ("python", "print($A"),
    ("python", "def ("),
    ("javascript", "foo(}"),
    ("go", "func func func"),
])
def test_unparseable_patterns_name_the_contexts_tried(language, pattern):
    with pytest.raises(PatternError) as error:
        compile_pattern(pattern, language)
    assert error.value.contexts[0] in ("statement", "top-level declaration")
    assert len(error.value.contexts) >= 2


def test_metavariables_and_literals():
    compiled = compile_pattern("isinstance($X, $$$T)", "python")
    assert compiled.metavars == ("X", "T")
    assert b"isinstance" in compiled.literals
    assert compiled.anchor is not None and compiled.anchor.text == b"isinstance"
