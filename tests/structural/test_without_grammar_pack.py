"""Structural search in a default install, where tree-sitter-language-pack (the `grammars`
extra) is absent: ast-grep's 27 languages work, the rest say what installs them.

The calls run through `jupyter-agent-tools call` in a process (and its search workers) for
which `import tree_sitter_language_pack` fails, as it does where the extra is not installed.
The ast-grep syntax check that stands in for tree-sitter's there is compared with it here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tree_sitter import Parser

from jupyter_agent_tools.structural import astgrep
from jupyter_agent_tools.structural.languages import GRAMMARS_INSTALL, load_language
from jupyter_agent_tools.structural.worker import _syntax_errors

CLI = Path(sys.executable).parent / "jupyter-agent-tools"


@pytest.fixture(scope="module")
def no_pack(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment in which the grammar pack cannot be imported."""
    shim = tmp_path_factory.mktemp("no-pack") / "tree_sitter_language_pack"
    shim.mkdir()
    (shim / "__init__.py").write_text(
        "raise ImportError('tree-sitter-language-pack is not installed (test)')\n")
    path = os.pathsep.join(filter(None, [str(shim.parent), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text("def area(r):\n    x = r * r\n    return 3.14 * x\n")
    (tmp_path / "main.dart").write_text("void main() { print('hi'); }\n")
    return tmp_path


def call(env: dict[str, str], root: Path, tool: str, args: dict) -> dict:
    done = subprocess.run([str(CLI), "--root", str(root), "call", "--json", tool, json.dumps(args)],
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)


def test_ast_grep_languages_work_without_the_pack(no_pack, project) -> None:
    found = call(no_pack, project, "ast_grep", {"pattern": "return $X", "path": "app.py"})
    assert found["ok"], found
    assert found["data"]["total"] == 1 and found["data"]["engine"] == "ast-grep"
    staged = call(no_pack, project, "ast_edit", {"pattern": "3.14 * $X", "rewrite": "math.pi * $X",
                                                 "path": "app.py"})
    assert staged["ok"], staged


def test_a_rewrite_that_breaks_the_syntax_is_refused_without_the_pack(no_pack, project) -> None:
    broken = call(no_pack, project, "ast_edit", {"pattern": "return $X", "rewrite": "return ($X",
                                                 "path": "app.py"})
    assert not broken["ok"]
    assert "app.py" in broken["error"]["message"] and "line 3" in broken["error"]["message"]


def test_what_needs_the_pack_says_how_to_add_it(no_pack, project) -> None:
    dart = call(no_pack, project, "ast_grep", {"pattern": "print($X)", "path": "main.dart"})
    assert dart["error"]["code"] == "unavailable"
    assert GRAMMARS_INSTALL in dart["error"]["message"]
    julia = call(no_pack, project, "ast_grep", {"pattern": "f($X)", "path": ".", "language": "julia"})
    assert julia["error"]["code"] == "unavailable"
    several = call(no_pack, project, "ast_grep", {"pattern": "x = $A\nreturn $B", "path": "app.py"})
    assert several["error"]["code"] == "unparseable_pattern"
    assert GRAMMARS_INSTALL in several["error"]["message"]
    unknown = call(no_pack, project, "ast_grep", {"pattern": "f($X)", "path": ".", "language": "klingon"})
    assert unknown["error"]["code"] == "invalid_arguments"
    assert GRAMMARS_INSTALL in unknown["error"]["message"]


BROKEN = [
    ("python", "def f(:\n    pass\n"),
    ("python", "x = (1,\ny = 2\n"),
    ("python", "if x\n    y = 1\n"),
    ("c", "int main() { return 1 }\n"),
    ("c", "int f(int a { return a; }\n"),
    ("javascript", "let x = foo(1, 2;\n"),
    ("typescript", "function f(a: number { return a }\n"),
    ("rust", "fn main() { let x = 1 }\n"),
    ("go", "package main\nfunc main() { x := }\n"),
    ("java", "class A { void f() { int x = 1 } }\n"),
    ("python", "def ok():\n    return 1\n"),
    ("javascript", "const s = \"\";\nlet t = ``;\n"),
]


@pytest.mark.parametrize(("language", "source"), BROKEN)
def test_ast_greps_syntax_check_finds_what_tree_sitters_finds(language: str, source: str) -> None:
    text = source.encode()
    expected = [(node.start_byte, node.start_point[0])
                for node in _syntax_errors(Parser(load_language(language)).parse(text).root_node)]
    assert astgrep.syntax_errors(text, language) == expected
