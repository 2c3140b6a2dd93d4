"""Which files ast_grep and ast_edit search, against the ast-grep CLI.

A small tree with what once differed (issue 45): hidden folders (.venv, .github), a hidden
file of the language (the CLI's file types keep it), node_modules, the extensions the CLI
gives a language (.zsh .ksh .bats .sc .sbt .cu .ino .ktm .xhtml .scss, HCL's .tf .tfvars
.hcl), and patterns whose ERROR node is only a metavariable (Java, Kotlin). Each pattern is
searched by the parser resource and by `ast-grep run --json=stream`: as the CLI runs, and
with `hidden: true` against `--no-ignore hidden`. The (file, line, column, text) of every
match must agree, and the CLI must find something, so that each case can fail.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from jupyter_agent_tools import Runtime

AST_GREP = shutil.which("ast-grep", path=str(Path(sys.executable).parent)) or shutil.which(
    "ast-grep") or "ast-grep-cli (the test extra) is not installed"
PARSER = "jupyter_agent_tools.structural.provider:ParserProvider"

TREE = {
    "src/app.py": "print(1)\nlog(2)\n",
    "src/.tool.py": "print(3)\n",  # hidden, but a .py: the CLI's python type keeps it
    ".venv/lib/python3.11/site-packages/pkg/mod.py": "print(4)\n",
    ".github/workflows/ci.yml": "name: ci\non: push\nrun: make test\n",
    "config/app.yml": "name: app\nrun: make build\n",
    "node_modules/pkg/index.js": "console.log(a)\n",
    "web/app.js": "console.log(b)\n",
    "scripts/a.zsh": "echo $HOME\n",
    "scripts/b.ksh": "echo one\n",
    "scripts/c.bats": "echo two\n",
    "scripts/d.sh": "echo three\n",
    "scripts/.env": "echo dotenv\n",  # not `*.env`, a bash file type of the CLI's
    "scripts/local.env": "echo env\n",
    "scala/x.sc": "println(1)\n",
    "scala/build.sbt": "println(2)\n",
    "scala/Main.scala": "object Main { println(3) }\n",
    "cpp/k.cu": "void f() { foo(1); }\n",
    "cpp/s.ino": "void g() { foo(2); }\n",
    "cpp/m.hxx": "void h() { foo(3); }\n",  # not a cpp extension of the CLI's
    "kotlin/a.ktm": "fun main() { println(1) }\n",
    "kotlin/Main.kt": "fun go(x: Int) { println(x) }\n",
    "web/p.xhtml": "<div>hi</div>\n",
    "web/s.scss": "a { color: red; }\n",
    "infra/main.tf": 'resource "aws_instance" "web" {\n  ami = "abc"\n}\n',
    "infra/prod.tfvars": 'region = "eu"\n',
    "infra/.terraform/modules/m.tf": 'hidden = "yes"\n',
    "infra/x.hcl": 'name = "x"\n',
    "java/A.java": "class A {\n  void f() { int x = 1; }\n}\n",
    "java/B.java": "class B {\n  public int g(int a) { return a; }\n}\n",
}

CASES = [
    ("python", "print($A)", None),
    ("yaml", "run: $X", None),
    ("javascript", "console.log($A)", None),
    ("bash", "echo $A", None),
    ("scala", "println($A)", None),
    ("cpp", "foo($A)", None),
    ("kotlin", "println($A)", None),
    ("kotlin", "fun $F($$$P) { $$$B }", None),
    ("html", "<div>$$$C</div>", None),
    ("css", "color: $V;", None),
    ("css", "$S { $$$B }", None),
    ("hcl", "$K = $V", None),
    ("java", "public $T $M($$$P) { $$$B }", "java"),
]

Match = tuple[str, int, int, str]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    for name, text in TREE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def cli_matches(root: Path, pattern: str, language: str, path: str | None,
                hidden: bool) -> list[Match]:
    done = subprocess.run([AST_GREP, "run", "--pattern", pattern, "--lang", language,
                           *(["--no-ignore", "hidden"] if hidden else []),
                           "--json=stream", path or "."], cwd=root, capture_output=True,
                          timeout=60, check=False)
    assert done.returncode in (0, 1), f"{pattern!r}: {done.stderr.decode()}"
    found = []
    for line in done.stdout.decode().splitlines():
        match = json.loads(line)
        start = match["range"]["start"]
        found.append((Path(match["file"]).as_posix(), start["line"] + 1, start["column"] + 1,
                      match["text"]))
    return found


async def our_matches(run, pattern: str, language: str, path: str | None,
                      hidden: bool) -> list[Match]:
    args = {"pattern": pattern, "language": language, "max_results": 1000, "hidden": hidden}
    result = await run.call("ast_grep", args | ({"path": path} if path else {}))
    assert result.ok, (pattern, result.text)
    return [(m["file"], *m["start"], m["text"]) for m in result.data["matches"]]


@pytest.mark.parametrize("hidden", [False, True])
async def test_folder_searches_look_at_the_files_the_cli_looks_at(tree: Path, hidden: bool):
    runtime = Runtime(root_dir=str(tree), resource_providers=[PARSER])
    try:
        run = await runtime.create_run()
        mismatches = []
        for language, pattern, path in CASES:
            theirs = cli_matches(tree, pattern, language, path, hidden)
            assert theirs, f"the CLI finds no {language} {pattern!r}: the case tests nothing"
            ours = await our_matches(run, pattern, language, path, hidden)
            only_ours = Counter(ours) - Counter(theirs)
            only_theirs = Counter(theirs) - Counter(ours)
            if only_ours or only_theirs:
                mismatches.append(f"{language} {pattern!r}: only ast_grep {sorted(only_ours)}, "
                                  f"only the CLI {sorted(only_theirs)}")
        assert not mismatches, "\n".join(mismatches)
        # What the cases cover: a hidden folder is where `hidden` says.
        found = await our_matches(run, "print($A)", "python", None, hidden)
        assert any(file.startswith(".venv/") for file, *_ in found) is hidden
    finally:
        await runtime.shutdown()


async def test_a_correct_pattern_on_a_path_without_a_match_is_no_parse_error(tree: Path):
    # `$$$P` where Java takes no identifier parses as an ERROR node, which ast-grep (and its
    # CLI, without a warning) makes the metavariable: the pattern is correct.
    runtime = Runtime(root_dir=str(tree), resource_providers=[PARSER])
    try:
        run = await runtime.create_run()
        for path, language, pattern in (("java/A.java", "java", "public $T $M($$$P) { $$$B }"),
                                        ("cpp/k.cu", "kotlin", "fun $F($$$P) { $$$B }"),
                                        ("kotlin/a.ktm", "kotlin", "fun $F($$$P): $R { $$$B }")):
            assert cli_matches(tree, pattern, language, path, False) == []
            result = await run.call("ast_grep", {"pattern": pattern, "path": path,
                                                 "language": language})
            assert result.ok and result.data["total"] == 0, (pattern, result.text)
            assert result.data["pattern_error_node"] is None, result.data
        broken = await run.call("ast_grep", {"pattern": "print($A", "path": "src/app.py"})
        assert broken.code == "unparseable_pattern"  # an ERROR around code still says so
    finally:
        await runtime.shutdown()


async def test_hcl_folders_and_skipped_folders(tree: Path):
    runtime = Runtime(root_dir=str(tree), resource_providers=[PARSER])
    try:
        run = await runtime.create_run()
        hcl = await run.call("ast_grep", {"pattern": "$K = $V", "path": "infra",
                                          "language": "hcl"})
        assert hcl.ok, hcl.text
        assert sorted({m["file"] for m in hcl.data["matches"]}) == [
            "infra/main.tf", "infra/prod.tfvars", "infra/x.hcl"]
        assert hcl.data["skipped"]["hidden"] == 1 and "hidden: true" in hcl.text
        (tree / "nb" / ".ipynb_checkpoints").mkdir(parents=True)
        (tree / "nb" / ".ipynb_checkpoints" / "x.py").write_text("print(5)\n")
        everything = await run.call("ast_grep", {"pattern": "print($A)", "language": "python",
                                                 "hidden": True})
        assert "nb/.ipynb_checkpoints/x.py" not in {m["file"] for m in everything.data["matches"]}
        for tool, args in (("ast_grep", {"pattern": "print($A)"}),
                           ("ast_edit", {"pattern": "print($A)", "rewrite": "log($A)"})):
            named = await run.call(tool, args | {"path": "nb/.ipynb_checkpoints/x.py"})
            assert named.code == "invalid_arguments" and "never enter" in named.error["message"]
    finally:
        await runtime.shutdown()


@pytest.mark.parametrize("hidden", [False, True])
async def test_rewrites_touch_the_files_the_cli_touches(tree: Path, tmp_path: Path,
                                                        hidden: bool):
    theirs = tmp_path / "theirs"
    shutil.copytree(tree, theirs)
    runtime = Runtime(root_dir=str(tree), resource_providers=[PARSER])
    try:
        run = await runtime.create_run()
        for language, pattern, rewrite in (("python", "print($X)", "log($X)"),
                                           ("yaml", "run: $X", "run: echo $X")):
            before = {path: path.read_bytes() for path in theirs.rglob("*") if path.is_file()}
            done = subprocess.run([AST_GREP, "run", "--pattern", pattern, "--rewrite", rewrite,
                                   "--lang", language, "--update-all",
                                   *(["--no-ignore", "hidden"] if hidden else []), "."],
                                  cwd=theirs, capture_output=True, timeout=60, check=False)
            assert done.returncode in (0, 1), done.stderr.decode()
            staged = await run.call("ast_edit", {"pattern": pattern, "rewrite": rewrite,
                                                 "language": language, "hidden": hidden})
            assert staged.ok, staged.text
            changed = {path.relative_to(theirs).as_posix() for path, data in before.items()
                       if path.read_bytes() != data}
            assert set(staged.data["files"]) == changed, (pattern, staged.data["files"])
            assert any(name.startswith((".venv/", ".github/")) for name in changed) is hidden
            await run.call("resolve", {"edit_id": staged.data["edit_id"], "action": "discard"})
    finally:
        await runtime.shutdown()


# Patterns of many languages, correct ones (most: an ERROR node there is a metavariable, or
# part of one) and ones the CLI warns of or refuses: ast_grep reports a parse error exactly
# where the CLI does.
PARSES = [
    ("java", "public $T $M($$$P) { $$$B }"), ("java", "class $C { $$$B }"),
    ("java", "for ($T $X : $Y) { $$$B }"), ("java", "try { $$$B } catch ($E $V) { $$$H }"),
    ("java", "@$A\npublic $T $M($$$P) { $$$B }"), ("java", "$X.$M($$$A);"),
    ("kotlin", "fun $F($$$P) { $$$B }"), ("kotlin", "fun $F($$$P): $R { $$$B }"),
    ("kotlin", "class $C($$$P) { $$$B }"), ("kotlin", "when ($X) { $$$B }"),
    ("csharp", "public $T $M($$$P) { $$$B }"), ("csharp", "class $C { $$$B }"),
    ("csharp", "foreach (var $X in $Y) { $$$B }"), ("csharp", "if ($C) { $$$B }"),
    ("swift", "func $F($$$P) -> $R { $$$B }"), ("php", "function $F($$$P) { $$$B }"),
    ("go", "func $F($$$P) { $$$B }"), ("scala", "def $F($$$P): $T = $B"),
    ("rust", "fn $F($$$P) { $$$B }"), ("c", "int $F($$$P) { $$$B }"),
    ("c", "struct $S { $$$F };"), ("cpp", "template <$$$T> $R $F($$$P) { $$$B }"),
    ("typescript", "function $F($$$P): $R { $$$B }"), ("lua", "function $F($$$P) $$$B end"),
    ("elixir", "def $F($$$P) do $$$B end"), ("bash", "for $X in $$$L; do $$$B; done"),
    ("hcl", "resource $T $N { $$$B }"), ("solidity", "function $F($$$P) public { $$$B }"),
    ("zig", "fn $F($$$P) $R { $$$B }"), ("python", "print($A"), ("python", "foo("),
]


def test_a_pattern_has_a_parse_error_where_the_cli_warns_of_one(tmp_path: Path):
    from jupyter_agent_tools.structural.astgrep import compile_sg
    from jupyter_agent_tools.structural.languages import extensions_for
    from jupyter_agent_tools.structural.pattern import PatternError

    differ = []
    warned = set()
    for language, pattern in PARSES:
        try:
            ours = compile_sg(pattern, language).parsed.parse_error is not None
        except PatternError:  # refused: the CLI refuses it too
            ours = True
        empty = tmp_path / f"empty{min(extensions_for(language))}"
        empty.write_text("\n")
        done = subprocess.run([AST_GREP, "run", "--pattern", pattern, "--lang", language,
                               str(empty)], capture_output=True, text=True, timeout=60,
                              check=False)
        cli = "ERROR node" in done.stderr or done.returncode not in (0, 1)
        warned.add(cli)
        if ours != cli:
            differ.append(f"{language} {pattern!r}: ours {ours}, the CLI {cli}")
    assert not differ, "\n".join(differ)
    assert warned == {True, False}  # both kinds are among the cases
