"""The scaffolding ladder: contexts a pattern fragment is parsed in, tried in order.

A fragment such as `key=$V` or `except $E:` is not a program; it parses only inside
some surrounding code. Each context is a template whose `HOLE` receives the fragment
(continuation lines indented like the hole). Every context that parses with no error,
and has a node or a run of siblings spanning exactly the fragment, has its say in what
the pattern is (pattern.py chooses; on a tie, the earlier context wins). A context may
imply text after the fragment (a statement's `;`), so `if ($X != null) $X.dispose()` is a
pattern without its semicolon; such a context comes after the expression, since the text
it adds is a guess: C's `$A * $B` is a product, not the declaration `A *B;`.
"""

from __future__ import annotations

from dataclasses import dataclass

HOLE = "HOLE"


@dataclass(frozen=True)
class Context:
    """One rung of the ladder: a name for error messages and a template with a HOLE."""

    name: str
    template: str
    implied: str = ""  # what the template adds right after HOLE, which the fragment may omit

    def fill(self, fragment: str) -> tuple[str, int, int]:
        """The scaffolded source and the character range the fragment occupies in it."""
        at = self.template.index(HOLE)
        line_start = self.template.rfind("\n", 0, at) + 1
        indent = " " * (at - line_start) if self.template[line_start:at].isspace() else ""
        body = fragment.replace("\n", "\n" + indent) if indent else fragment
        return self.template[:at] + body + self.template[at + len(HOLE):], at, at + len(body)


_C_FAMILY = [
    Context("top-level declaration", "HOLE"),
    Context("statement", "void _() { HOLE }"),
    Context("expression", "void _() { _ = HOLE; }"),
    Context("statement without ;", "void _() { HOLE; }", implied=";"),
    Context("struct field", "struct _ { HOLE };"),
]

_JS_FAMILY = [
    Context("statement", "HOLE"),
    Context("expression", "(HOLE)"),
    Context("class member", "class _ { HOLE }"),
    Context("object member", "({ HOLE })"),
    Context("call argument", "_(HOLE)"),
    Context("switch case", "switch (_) { HOLE }"),
]

_TS_FAMILY = [
    *_JS_FAMILY,
    Context("type", "let _: HOLE;"),
    Context("interface member", "interface _ { HOLE }"),
]

LADDERS: dict[str, list[Context]] = {
    "python": [
        # Keyword arguments, dictionary entries, parameters and slices are absent on purpose:
        # each of them is also a valid statement (an assignment or an annotation), which
        # the statement rung takes first.
        Context("statement", "HOLE"),
        Context("expression", "_ = (HOLE)"),
        Context("except clause", "try:\n    pass\nHOLE"),
        Context("elif/else clause", "if _:\n    pass\nHOLE"),
        Context("comprehension clause", "[_ HOLE]"),
        Context("match case", "match _:\n    HOLE"),
    ],
    "javascript": _JS_FAMILY,
    "typescript": _TS_FAMILY,
    "tsx": _TS_FAMILY,
    "dart": [
        Context("statement", "void _() { HOLE }"),
        Context("expression", "var _ = HOLE;"),
        Context("statement without ;", "void _() { HOLE; }", implied=";"),
        Context("class member", "class _ { HOLE }"),
        Context("top-level declaration", "HOLE"),
        Context("call argument", "void _() { _(HOLE); }"),
        Context("switch case", "void _() { switch (_) { HOLE } }"),
    ],
    "rust": [
        Context("statement", "fn _() { HOLE }"),
        Context("expression", "fn _() { let _ = HOLE; }"),
        Context("top-level declaration", "HOLE"),
        Context("impl member", "impl _ { HOLE }"),
        Context("trait member", "trait _ { HOLE }"),
        Context("match arm", "fn _() { match _ { HOLE } }"),
        Context("struct field", "struct _ { HOLE }"),
        Context("type", "type _ = HOLE;"),
    ],
    "go": [
        # Go wants a final newline after a declaration: templates end with one.
        Context("statement", "package _\nfunc _() {\nHOLE\n}\n"),
        Context("expression", "package _\nvar _ = HOLE\n"),
        Context("top-level declaration", "package _\nHOLE\n"),
        Context("struct field", "package _\ntype _ struct {\nHOLE\n}\n"),
        Context("interface member", "package _\ntype _ interface {\nHOLE\n}\n"),
        Context("switch case", "package _\nfunc _() {\nswitch {\nHOLE\n}\n}\n"),
        Context("type", "package _\nvar _ HOLE\n"),
    ],
    "java": [
        # `_` is a keyword since Java 9: the method is `_m`.
        Context("statement", "class _ { void _m() { HOLE } }"),
        Context("expression", "class _ { Object _ = HOLE; }"),
        Context("statement without ;", "class _ { void _m() { HOLE; } }", implied=";"),
        Context("class member", "class _ { HOLE }"),
        Context("top-level declaration", "HOLE"),
    ],
    "kotlin": [
        Context("statement", "fun _() { HOLE }"),
        Context("expression", "val _ = HOLE"),
        Context("class member", "class _ { HOLE }"),
        Context("top-level declaration", "HOLE"),
    ],
    "csharp": [
        Context("statement", "class _ { void _() { HOLE } }"),
        Context("expression", "class _ { object _ = HOLE; }"),
        Context("statement without ;", "class _ { void _() { HOLE; } }", implied=";"),
        Context("class member", "class _ { HOLE }"),
        Context("top-level declaration", "HOLE"),
    ],
    "php": [
        Context("statement", "<?php HOLE"),
        Context("expression", "<?php $_ = HOLE;"),
        Context("statement without ;", "<?php HOLE;", implied=";"),
        Context("class member", "<?php class _ { HOLE }"),
    ],
    "lua": [
        Context("statement", "HOLE"),
        Context("expression", "local _ = HOLE"),  # a Lua expression is no statement
        Context("table field", "local _ = { HOLE }"),
    ],
    "c": _C_FAMILY,
    "cpp": [*_C_FAMILY, Context("class member", "class _ { HOLE };")],
}

DEFAULT_LADDER = [Context("top-level", "HOLE")]


def ladder_for(language: str) -> list[Context]:
    """The contexts tried for `language`, in order."""
    return LADDERS.get(language, DEFAULT_LADDER)
