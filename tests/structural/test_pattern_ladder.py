"""The scaffolding ladder: which context parses which fragment, per language."""

from __future__ import annotations

import pytest

from jupyter_agent_tools.structural.pattern import SEQUENCE, PatternError, compile_pattern

CASES = [
    # (language, pattern, the first context giving the chosen form, kind of the pattern's root)
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
    # A class field and an interface property: the tokens both share, as a run of siblings.
    ("typescript", "readonly $P: $T", "class member", SEQUENCE),
    ("dart", "if ($X != null) $X.dispose();", "statement", "if_statement"),
    ("dart", "$A ?? $B", "expression", "if_null_expression"),
    ("dart", "if ($X != null) $X.dispose()", "statement without ;", "if_statement"),
    # Dart gives a call no node of its own: an identifier, then selectors. The "call
    # argument" rung would make it an `argument`, a node only arguments have.
    ("dart", "foo(1, 2)", "expression", SEQUENCE),
    ("dart", "$X.dispose()", "expression", SEQUENCE),
    ("java", "if ($X != null) $X.close()", "statement without ;", "if_statement"),
    ("java", "foo($A)", "expression", "method_invocation"),
    ("c", "free($P)", "expression", "call_expression"),
    # `a * b;` is a declaration in C; the implied `;` is a guess, so the product wins.
    ("c", "$A * $B", "expression", "binary_expression"),
    ("cpp", "$A & $B", "expression", "binary_expression"),
    ("python", "a = 1\nb = 2", "statement", SEQUENCE),  # two statements: a run of them
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
def test_pattern_is_the_form_the_clean_contexts_share(language, pattern, context, kind):
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
    assert compiled.anchors[0].text == b"isinstance"  # a named token before punctuation
