"""The structural search against the ast-grep CLI, over real third-party code.

The corpus (corpus/: requests, jupyter_server, JupyterLab, acorn, d3-array, pkg/errors,
either, CPython's headers, rainbow; each folder's NOTICE says where it comes from, under
which licence) is searched with every pattern below by the parser resource and by
`ast-grep run --json` (run once per pattern). The (file, line, column, text) of every match
must agree, duplicates included; a mismatch names the pattern and its first differing
match. The patterns cover the classes ast_grep once got wrong: block-bodied statements of
C-like languages, patterns leaving out trailing clauses, import/export forms, nested
matches, function declarations against expressions, calls, `$$$` runs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from jupyter_agent_tools.structural.errors import UnparseablePattern

CORPUS = Path(__file__).parent / "corpus"
AST_GREP = shutil.which("ast-grep", path=str(Path(sys.executable).parent)) or shutil.which(
    "ast-grep") or "ast-grep-cli (the test extra) is not installed"

Match = tuple[str, int, int, str]  # file, line, column (characters, from 1), text

PATTERNS: dict[str, list[str]] = {
    "python": [
        "raise $E($$$A)",
        "raise $E($X)",  # also `raise E(x) from None`: the trailing clause is left out
        "raise $E($X) from $F",
        "if $C:\n    $$$B",  # also an `if` with `elif`/`else`
        "if $C:\n    $$$B\nelse:\n    $$$E",
        "try:\n    $$$B\nexcept $E:\n    $$$H",  # also try/except/else and finally
        "try:\n    $$$B\nfinally:\n    $$$F",
        "def $F($$$P):\n    $$$B",
        "def $F(self, $$$P):\n    $$$B",
        "async def $F($$$P):\n    $$$B",
        "class $C($$$B):\n    $$$S",
        "from $M import $$$N",
        "import $M",
        "isinstance($X, $T)",
        "$O.get($K, $D)",
        "$F($$$A, **$K)",
        "with $C as $V:\n    $$$B",
        "for $X in $Y:\n    $$$B",
        "return $X",
        "self.$A = $B",
        "lambda $$$A: $B",
        "[$X for $Y in $Z]",
        "await $X",
        "$X is None",
        "not $X",
        "$A == $A",  # no word: its operator `==` is the prefilter's literal
        "$A != $B",
        "$X += $Y",
        "$A ** $B",
        "$F($$$A)",  # calls inside calls: nested matches
    ],
    "typescript": [
        "if ($C) { $$$B }",
        "if ($C) { $$$B } else { $$$E }",
        "while ($C) { $$$B }",
        "for (const $X of $Y) { $$$B }",
        "import { $$$N } from $S",  # an ERROR node in the pattern, matched all the same
        "import { $$$N } from '$S'",
        "import $N from '$S'",
        "export function $F($$$P) { $$$B }",
        "export class $C { $$$B }",
        "export * from '$S'",
        "function $F($$$P) { $$$B }",
        "async function $F($$$P) { $$$B }",
        "($$$P) => $B",
        "new $C($$$A)",
        "this.$F($$$A)",
        "throw new Error($$$A)",
        "try { $$$B } catch ($E) { $$$H }",
        "const $X = $Y",
        "await $X",
        "$X as $T",
        "return $X;",
        "$A.$B($$$C)",
        "$A ?? $B",
        "$A?.$B",
        "$X !== $Y",
    ],
    "tsx": [
        "<$T $$$P />",
        "<div $$$P>$$$C</div>",
        "if ($C) { $$$B }",
        "import { $$$N } from '$S'",
        "export class $C extends $B { $$$M }",
        "($$$P) => $B",
        "this.$F($$$A)",
    ],
    "javascript": [
        "function $F($$$P) { $$$B }",
        "function ($$$P) { $$$B }",
        "if ($C) { $$$B }",
        "if ($C) $S",
        "while ($C) { $$$B }",
        "for (let $I = $A; $C; $U) { $$$B }",
        "$A === $B",
        "return $X;",
        "var $X = $Y",
        "new $C($$$A)",
        "typeof $X",
        "require($M)",
        "$X.length",
        "switch ($X) { $$$C }",
        "Math.$F($$$A)",
        "$A && $B",
        "$X => $Y",
    ],
    "go": [
        "func $F($$$P) $R { $$$B }",
        "func ($R $T) $M($$$P) { $$$B }",
        "if $C { $$$B }",
        "if err != nil { $$$B }",
        "fmt.Fprintf($$$A)",
        "return $$$R",
        "switch $X { $$$C }",
        "type $N struct { $$$F }",
        "$X := $Y",
        "$A != nil",
    ],
    "rust": [
        "fn $F($$$P) -> $R { $$$B }",
        "pub fn $F($$$P) -> $R { $$$B }",
        "match $X { $$$A }",
        "$X.map($F)",
        "Left($X)",
        "impl<$$$G> $T for $U { $$$B }",
        "if let $P = $E { $$$B }",
        "use $P;",
        "$A::$B",
        "$X..$Y",
    ],
    "c": [
        "if ($C) { $$$B }",
        "$F($$$A);",
        "Py_INCREF($X);",
        "return $X;",
        "static inline $T $F($$$P) { $$$B }",
        "typedef struct $S $T;",
        "#define $N $V",
        "$X->$Y",
        "$X++",
        "$A == $B",
    ],
    "ruby": [
        "def $M($$$A)\n  $$$B\nend",
        "class $C\n  $$$B\nend",
        "require $F",
        "if $C\n  $$$B\nend",
        "attr_reader $$$A",
        "$X.each do |$Y|\n  $$$B\nend",
        "raise $E, $M",
        "$A ||= $B",
        "$X << $Y",
    ],
}

# ast_edit's rewrite against `ast-grep run --pattern P --rewrite R --update-all`.
REWRITES: list[tuple[str, str, str]] = [
    ("python", "isinstance($X, $T)", "is_a($X, $T)"),
    # Bodies moved one level deeper, and one level up (their later lines shift).
    ("python", "with $C as $V:\n    $$$B", "if True:\n    with $C as $V:\n        $$$B"),
    ("python", "for $X in $Y:\n    $$$B", "$$$B"),
    ("typescript", "if ($C) { $$$B }", "if (!!($C)) {\n  $$$B\n}"),
    ("go", "fmt.Fprintf($W, $$$A)", "fmt.Fprint($W, $$$A)"),
    ("rust", "Left($X)", "Either::Left($X)"),
    ("ruby", "raise $E, $M", "fail $E, $M"),
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """A copy of the corpus outside any git repository (the CLI reads .gitignore files)."""
    copy = tmp_path_factory.mktemp("differential") / "root"
    shutil.copytree(CORPUS, copy)
    return copy


@pytest.fixture
def root(corpus: Path) -> Path:
    """The server root of this module's runs: the corpus (conftest's `run` uses it)."""
    return corpus


def _place(data: bytes, offset: int) -> tuple[int, int]:
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, len(data[line_start:offset].decode()) + 1


def cli_matches(root: Path, pattern: str, language: str) -> list[Match]:
    done = subprocess.run([AST_GREP, "run", "--pattern", pattern, "--lang", language,
                           "--json=stream", "."], cwd=root, capture_output=True, timeout=60,
                          check=False)
    assert done.returncode in (0, 1), f"{pattern!r}: {done.stderr.decode()}"
    found = []
    for line in done.stdout.decode().splitlines():
        match = json.loads(line)
        data = (root / match["file"]).read_bytes()
        start = match["range"]["byteOffset"]["start"]
        found.append((Path(match["file"]).as_posix(), *_place(data, start), match["text"]))
    return found


async def our_matches(run, root: Path, pattern: str, language: str) -> list[Match]:
    session = run.resources["parser"]
    try:
        outcome = await session.search(pattern, None, language, limit=10**6, with_ranges=True)
    except UnparseablePattern as exc:  # an ERROR node and no match: the CLI's warning and []
        assert exc.contexts == ["ast-grep"], exc
        return []
    found = []
    for match in outcome.answer["matches"]:
        data = Path(match["file"]).read_bytes()
        start, end = match["range"]
        found.append((Path(match["file"]).relative_to(root).as_posix(), *match["start"],
                      data[start:end].decode()))
    return found


def first_difference(ours: list[Match], theirs: list[Match]) -> str | None:
    """The first match (in file order) one side has more often than the other."""
    only_ours = Counter(ours) - Counter(theirs)
    only_theirs = Counter(theirs) - Counter(ours)
    if not only_ours and not only_theirs:
        return None
    side, match = min([("only ast_grep", m) for m in only_ours]
                      + [("only the CLI", m) for m in only_theirs], key=lambda item: item[1])
    file, line, column, text = match
    shown = text if len(text) <= 80 else text[:80] + "…"
    return (f"{side}: {file}:{line}:{column} {shown!r} ({len(ours)} matches here, "
            f"{len(theirs)} in the CLI)")


CASES = [(language, pattern) for language, patterns in PATTERNS.items() for pattern in patterns]


async def test_every_pattern_finds_what_the_cli_finds(run, corpus):
    assert len(CASES) >= 60
    mismatches = []
    matched = 0
    for language, pattern in CASES:
        ours = await our_matches(run, corpus, pattern, language)
        difference = first_difference(ours, cli_matches(corpus, pattern, language))
        if difference is not None:
            mismatches.append(f"{language} {pattern!r}: {difference}")
        matched += bool(ours)
    assert not mismatches, f"{len(mismatches)} of {len(CASES)} patterns disagree:\n" + \
        "\n".join(mismatches)
    assert matched >= len(CASES) * 3 // 4  # the corpus exercises the patterns


async def test_rewrites_write_what_the_cli_writes(run, corpus, tmp_path):
    session = run.resources["parser"]
    for language, pattern, rewrite in REWRITES:
        theirs = tmp_path / f"{len(list(tmp_path.iterdir()))}"
        shutil.copytree(corpus, theirs)
        done = subprocess.run([AST_GREP, "run", "--pattern", pattern, "--rewrite", rewrite,
                               "--lang", language, "--update-all", "."], cwd=theirs,
                              capture_output=True, timeout=60, check=False)
        assert done.returncode in (0, 1), done.stderr.decode()
        edit = await session.stage(pattern, rewrite, None, language)
        assert edit.files, f"{pattern!r} rewrote nothing"
        staged = {change.relpath: change.new_content for change in edit.files}
        for path in sorted(theirs.rglob("*")):
            if not path.is_file():
                continue
            relpath = path.relative_to(theirs).as_posix()
            ours = staged.get(relpath, (corpus / relpath).read_bytes())
            assert ours == path.read_bytes(), f"{language} {pattern!r} -> {rewrite!r}: {relpath}"
