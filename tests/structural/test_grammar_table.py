"""One table, twenty grammars: the same five kinds of pattern find exactly what they should.

Each sample has a call with one argument, calls with two and none, a method call, an
addition and two comparisons (one of a thing with itself). Every pattern must find exactly
the expected snippets, in order, at the lines they are on: a pattern is found, or reported
as unparseable, never searched as the wrong kind of node and silently not found.
"""

from __future__ import annotations

import pytest

CALL = ("foo($A)", ["foo(1)"])
ANY_ARGS = ("foo($$$ARGS)", ["foo(1)", "foo(1, 2)", "foo()"])
METHOD = ("$X.close()", ["bar.close()"])
PLUS = ("$A + $B", ["x + y"])
SAME = ("$A == $A", ["x == x"])
FIVE = [CALL, ANY_ARGS, METHOD, PLUS, SAME]

C_LIKE_BODY = """\
    foo(1);
    foo(1, 2);
    foo();
    bar.close();
    s = x + y;
    t = x == x;
    u = x == y;
"""

SAMPLES: dict[str, tuple[str, str, list[tuple[str, list[str]]]]] = {
    "python": ("s.py", "foo(1)\nfoo(1, 2)\nfoo()\nbar.close()\ns = x + y\nt = x == x\n"
               "u = x == y\n", FIVE),
    "javascript": ("s.js", C_LIKE_BODY, FIVE),
    "typescript": ("s.ts", "let s: number;\n" + C_LIKE_BODY, FIVE),
    "tsx": ("s.tsx", C_LIKE_BODY + "const e = <div>{foo(1, 2, 3)}</div>;\n",
            [CALL, ("foo($$$ARGS)", ["foo(1)", "foo(1, 2)", "foo()", "foo(1, 2, 3)"]),
             METHOD, PLUS, SAME]),
    "java": ("S.java", "class S {\n  void m() {\n" + C_LIKE_BODY + "  }\n}\n", FIVE),
    "kotlin": ("s.kt", "fun main() {\n    foo(1)\n    foo(1, 2)\n    foo()\n    bar.close()\n"
               "    val s = x + y\n    val t = x == x\n    val u = x == y\n}\n", FIVE),
    "go": ("s.go", "package main\n\nfunc main() {\n\tfoo(1)\n\tfoo(1, 2)\n\tfoo()\n"
           "\tbar.Close()\n\ts := x + y\n\tt := x == x\n\tu := x == y\n}\n",
           [CALL, ANY_ARGS, ("$X.Close()", ["bar.Close()"]), PLUS, SAME]),
    "rust": ("s.rs", "fn main() {\n    foo(1);\n    foo(1, 2);\n    foo();\n    bar.close();\n"
             "    let s = x + y;\n    let t = x == x;\n    let u = x == y;\n}\n", FIVE),
    # As in the ast-grep CLI, C's `foo($A)` alone is a macro type (see the test below): the
    # call is written as the statement it is.
    "c": ("s.c", "void m(void) {\n" + C_LIKE_BODY + "}\n",
          [("foo($A);", ["foo(1);"]), ("foo($$$ARGS);", ["foo(1);", "foo(1, 2);", "foo();"]),
           METHOD, PLUS, SAME]),
    "cpp": ("s.cpp", "void m() {\n" + C_LIKE_BODY + "}\n", FIVE),
    "csharp": ("S.cs", "class S {\n  void M() {\n" + C_LIKE_BODY.replace("close", "Close")
               + "  }\n}\n",
               # As the ast-grep CLI: C#'s `$A == $A` does not hold its two sides equal.
               [CALL, ANY_ARGS, ("$X.Close()", ["bar.Close()"]), PLUS,
                ("$A == $A", ["x == x", "x == y"])]),
    "ruby": ("s.rb", "foo(1)\nfoo(1, 2)\nfoo()\nbar.close()\ns = x + y\nt = x == x\n"
             "u = x == y\n", FIVE),
    "php": ("s.php", "<?php\nfoo(1);\nfoo(1, 2);\nfoo();\n$bar->close();\n$s = $x + $y;\n"
            "$t = $x == $x;\n$u = $x == $y;\n",
            [CALL, ANY_ARGS, ("$X->close()", ["$bar->close()"]), ("$A + $B", ["$x + $y"]),
             ("$A == $A", ["$x == $x"])]),
    "swift": ("s.swift", "foo(1)\nfoo(1, 2)\nfoo()\nbar.close()\nlet s = x + y\n"
              "let t = x == x\nlet u = x == y\n", FIVE),
    "scala": ("s.scala", "object S {\n  def m(): Unit = {\n    foo(1)\n    foo(1, 2)\n    foo()\n"
              "    bar.close()\n    val s = x + y\n    val t = x == x\n    val u = x == y\n"
              "  }\n}\n", FIVE),
    "dart": ("s.dart", "void main() {\n" + C_LIKE_BODY + "}\n", FIVE),
    "lua": ("s.lua", "foo(1)\nfoo(1, 2)\nfoo()\nbar:close()\nlocal s = x + y\n"
            "local t = x == x\nlocal u = x == y\n",
            [CALL, ANY_ARGS, ("$X:close()", ["bar:close()"]), PLUS, SAME]),
    "bash": ("s.sh", "foo 1\nfoo 1 2\nfoo\nbar --close\ns=$(( x + y ))\n[[ x == x ]]\n"
             "[[ x == y ]]\n",
             # As the ast-grep CLI: a command's later arguments may be left out of a pattern,
             # and `foo $$$ARGS` needs an argument list (`foo` alone has none).
             [("foo $A", ["foo 1", "foo 1 2"]), ("foo $$$ARGS", ["foo 1", "foo 1 2"]),
              ("$X --close", ["bar --close"]), ("$(( $A + $B ))", ["$(( x + y ))"]),
              ("[[ $A == $A ]]", ["[[ x == x ]]"])]),
    "r": ("s.R", "foo(1)\nfoo(1, 2)\nfoo()\nbar$close()\ns <- x + y\nt <- x == x\n"
          "u <- x == y\n",
          [CALL, ANY_ARGS, ("$X$close()", ["bar$close()"]), PLUS, SAME]),
    "julia": ("s.jl", "foo(1)\nfoo(1, 2)\nfoo()\nbar.close()\ns = x + y\nt = x == x\n"
              "u = x == y\n", FIVE),
}

CASES = [pytest.param(language, pattern, expected, id=f"{language}: {pattern}")
         for language, (_, _, cases) in SAMPLES.items() for pattern, expected in cases]


def lines_of(source: str, snippets: list[str]) -> list[int]:
    """The 1-based lines of `snippets`, each looked for after the one before it."""
    lines, at = [], 0
    for snippet in snippets:
        at = source.index(snippet, at)
        lines.append(source[:at].count("\n") + 1)
        at += 1
    return lines


@pytest.mark.parametrize(("language", "pattern", "expected"), CASES)
async def test_each_pattern_finds_exactly_its_snippets(run, files, language, pattern, expected):
    name, source, _ = SAMPLES[language]
    files({name: source})
    res = await run.call("ast_grep", {"pattern": pattern, "path": name})
    assert res.ok, res.text
    found = [(m["text"], m["start"][0]) for m in res.data["matches"]]
    assert found == list(zip(expected, lines_of(source, expected), strict=True)), res.data["context"]


async def test_a_pattern_that_parsed_as_other_code_says_so(run, files):
    # C's `foo($A)` parses as a macro type, not a call (in the ast-grep CLI too): the empty
    # answer names what the pattern parsed as.
    name, source, _ = SAMPLES["c"]
    files({name: source})
    res = await run.call("ast_grep", {"pattern": "foo($A)", "path": name})
    assert res.ok and res.data["total"] == 0
    assert res.data["pattern_kind"] == "macro_type_specifier"
    assert "parsed as a macro_type_specifier node" in res.text
