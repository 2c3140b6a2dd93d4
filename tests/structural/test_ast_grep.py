"""ast_grep through Run.call, with the real parser workers."""

from __future__ import annotations

import pytest

from jupyter_agent_tools.structural.languages import pack_installed

DART = """\
class Page {
  void dispose() {
    if (controller != null) controller.dispose();
    if (timer != null) other.dispose();
    if (focus != null) {
      focus.dispose();
    }
  }
}
"""

PY = """\
import os

def main(argv):
    print(argv)
    print( argv  # the arguments
    )
    print(a, b)
    log = "print(x)"  # print(y)
    return print
"""


async def test_print_with_one_argument(run, files):
    files({"app.py": PY})
    res = await run.call("ast_grep", {"pattern": "print($A)", "path": "app.py"})
    assert res.ok, res.text
    found = [(m["start"], m["captures"]["A"]) for m in res.data["matches"]]
    # Whitespace, line breaks and comments never change a match; strings and comments
    # never match; two arguments are not one.
    assert found == [([4, 5], "argv"), ([5, 5], "argv")]
    assert res.data["matches"][0]["end"] == [4, 16] and res.data["language"] == "python"
    assert res.data["pattern_kind"] == "call"
    assert res.text.startswith("2 matches in 1 file(s)")
    assert "app.py:4:5: print(argv)" in res.text


async def test_dart_guard_that_disposes_what_it_checked(run, files):
    files({"lib/page.dart": DART})
    res = await run.call("ast_grep", {"pattern": "if ($X != null) $X.dispose();",
                                      "language": "dart", "path": "lib"})
    assert res.ok, res.text
    assert [m["text"] for m in res.data["matches"]] == [
        "if (controller != null) controller.dispose();"]
    assert res.data["matches"][0]["captures"] == {"X": "controller"}


async def test_repeated_metavariable_ignores_whitespace_and_comments(run, files):
    files({"eq.py": "a == a\nf(x, y) == f(x,   # same\n y)\nf(x) == f(y)\na.b == a . b\n"})
    res = await run.call("ast_grep", {"pattern": "$A == $A", "path": "eq.py"})
    # As the ast-grep CLI: spaces never matter, a comment inside one side does (line 2).
    assert [m["start"][0] for m in res.data["matches"]] == [1, 5]


async def test_multi_metavariables_in_arguments_and_bodies(run, files):
    files({
        "calls.js": "foo();\nfoo(1);\nfoo(1, 2, 3);\nbar(1);\n",
        "defs.py": "def f():\n    pass\n\ndef g(x):\n    a = 1\n    return a\n",
    })
    res = await run.call("ast_grep", {"pattern": "foo($$$ARGS)", "path": "calls.js"})
    assert [m["captures"]["ARGS"] for m in res.data["matches"]] == ["", "1", "1, 2, 3"]
    res = await run.call("ast_grep", {"pattern": "foo($FIRST, $$$REST)", "path": "calls.js"})
    assert [(m["captures"]["FIRST"], m["captures"]["REST"]) for m in res.data["matches"]] == [
        ("1", "2, 3")]
    res = await run.call("ast_grep", {"pattern": "def $F($$$P):\n    $$$BODY\n    return $R",
                                      "path": "defs.py"})
    assert [(m["captures"]["F"], m["captures"]["R"]) for m in res.data["matches"]] == [("g", "a")]
    res = await run.call("ast_grep", {"pattern": "isinstance($X, $$$T)", "language": "python",
                                      "path": "defs.py"})
    assert res.ok and res.data["total"] == 0


async def test_anonymous_metavariable_binds_nothing(run, files):
    files({"x.py": "f(1, 2)\nf(3, 3)\n"})
    res = await run.call("ast_grep", {"pattern": "f($_, $_)", "path": "x.py"})
    assert [m["captures"] for m in res.data["matches"]] == [{}, {}]


async def test_max_results_says_how_many_more(run, files):
    files({"many.py": "".join(f"print({i})\n" for i in range(30))})
    res = await run.call("ast_grep", {"pattern": "print($A)", "path": ".", "language": "python",
                                      "max_results": 5})
    assert len(res.data["matches"]) == 5 and res.data["total"] == 30 and res.data["more"] == 25
    assert "[25 more matches not shown" in res.text


async def test_ignored_binary_and_oversized_files_are_skipped_and_counted(run, files, root):
    files({".gitignore": "build/\n", "src/a.py": "print(1)\n", "build/b.py": "print(2)\n",
           "src/huge.py": "print(3)\n" + "x = 1\n" * 400_000})
    (root / "src" / "blob.py").write_bytes(b"print(4)\x00\x01")
    res = await run.call("ast_grep", {"pattern": "print($A)", "language": "python"})
    assert [m["file"] for m in res.data["matches"]] == ["src/a.py"]
    assert res.data["skipped"] == {"ignored": 1, "binary": 1, "oversized": 1}
    assert "skipped: 1 ignored, 1 binary, 1 oversized" in res.text


async def test_a_search_that_starts_inside_an_ignored_folder_searches_it(parser_runtime, files):
    # Binder's layout: the tour's copy sits in a folder the checkout's .gitignore may list.
    files({".gitignore": "agent-tools-runs/\n*.log.py\n",
           "agent-tools-runs/tour-1/main.py": "print(1)\n",
           "agent-tools-runs/tour-1/old.log.py": "print(2)\n"})
    run = await parser_runtime.create_run(cwd="agent-tools-runs/tour-1")
    res = await run.call("ast_grep", {"pattern": "print($A)", "language": "python"})
    # The start is searched; the rules still apply below it.
    assert [m["file"] for m in res.data["matches"]] == ["main.py"], res.text
    assert res.data["skipped"]["ignored"] == 1
    staged = await run.call("ast_edit", {"pattern": "print($A)", "rewrite": "log($A)",
                                         "language": "python"})
    assert staged.ok and staged.data["edit_id"], staged.text
    from_root = await parser_runtime.create_run()
    named = await from_root.call("ast_grep", {"pattern": "print($A)", "language": "python",
                                              "path": "agent-tools-runs"})
    assert [m["file"] for m in named.data["matches"]] == ["agent-tools-runs/tour-1/main.py"]
    everywhere = await from_root.call("ast_grep", {"pattern": "print($A)", "language": "python"})
    assert everywhere.data["total"] == 0 and everywhere.data["skipped"]["ignored"] == 1


async def test_several_files_across_workers_in_file_order(run, files):
    padding = "# " + "-" * 8000 + "\n"  # 24 x 8 kB: several batches, so both workers search
    files({f"pkg/m{i:02}.py": f"{padding}x = {i}\nprint(x)\n" for i in range(24)})
    res = await run.call("ast_grep", {"pattern": "print($A)", "language": "python",
                                      "path": "pkg"})
    assert [m["file"] for m in res.data["matches"]] == [f"pkg/m{i:02}.py" for i in range(24)]


async def test_language_errors_say_what_to_pass(run, files):
    files({"a.py": "x\n", "notes.txt": "x\n"})
    res = await run.call("ast_grep", {"pattern": "x"})
    assert res.code == "invalid_arguments" and "`language` is required" in res.error["message"]
    res = await run.call("ast_grep", {"pattern": "x", "language": "pyhton"})
    assert res.code == "invalid_arguments" and "python" in res.error["message"]
    res = await run.call("ast_grep", {"pattern": "x", "path": "notes.txt"})
    assert res.code == "invalid_arguments" and "pass `language`" in res.error["message"]
    res = await run.call("ast_grep", {"pattern": "x", "path": "../outside.py"})
    assert res.code == "path_outside_root"
    res = await run.call("ast_grep", {"pattern": "x", "path": "missing.py"})
    assert res.code == "not_found"


async def test_a_pattern_with_an_error_node_that_finds_nothing_says_how_it_parsed(run, files):
    # ast-grep (and its CLI) search a pattern with an ERROR node all the same; when it finds
    # nothing, the answer is no silent 0 but what the pattern parsed as.
    files({"a.py": "print(1)\n"})
    res = await run.call("ast_grep", {"pattern": "print($A", "path": "a.py"})
    assert res.code == "unparseable_pattern"
    assert "with an ERROR node at `print($A`" in res.error["message"], res.error["message"]
    assert res.data["contexts_tried"] == ["ast-grep"]


async def test_a_pattern_ast_grep_refuses_reads_no_file_of_a_big_folder(run, files):
    # The workers compile the pattern as they search: one that ast-grep refuses (and the
    # built-in matcher cannot parse either) stops the search before any file is read.
    files({f"src/m{i}.py": "print(1)\n" * 2000 for i in range(40)})
    args = {"path": "src", "language": "python"}
    res = await run.call("ast_grep", {"pattern": "print($A)\nprint(", **args})
    assert res.code == "unparseable_pattern"
    found = await run.call("ast_grep", {"pattern": "print($A)", **args})
    assert found.data["total"] == 80_000
    cache = run.runtime.provider("parser").pool.cache_stats()
    # Every file was first read by this search: the broken one had read none.
    assert sum(stats.get("hits", 0) for stats in cache) == 0
    assert sum(stats.get("misses", 0) for stats in cache) == 40


async def test_a_folder_without_files_of_the_language_still_compiles_the_pattern(run, files):
    files({"notes.txt": "print(1)\n", "empty/.keep": ""})
    found = await run.call("ast_grep", {"pattern": "print($A)", "path": ".",
                                        "language": "python"})
    assert found.ok and found.data["total"] == 0 and found.data["files_searched"] == 0
    assert found.data["pattern_kind"] == "call" and found.data["engine"] == "ast-grep"
    broken = await run.call("ast_grep", {"pattern": "print($A", "path": "empty",
                                         "language": "python"})
    assert broken.code == "unparseable_pattern"


async def test_each_file_is_searched_from_its_own_rarest_token(run, files, root):
    # In a.py `5` is rarer than `print`; in b.py every name holds a 5, so `print` is rarer.
    # Either way every match is found, in file order, and an edit is seen by the next search.
    files({"a.py": "".join(f"print(x, {n})\n" for n in range(30)),
           "b.py": "".join(f"print(v5_{n}, 5)\nv5_{n} = 5\n" for n in range(3))})
    args = {"pattern": "print($A, 5)", "path": ".", "language": "python"}
    found = await run.call("ast_grep", args)
    assert [(m["file"], m["start"][0], m["captures"]["A"]) for m in found.data["matches"]] == [
        ("a.py", 6, "x"), ("b.py", 1, "v5_0"), ("b.py", 3, "v5_1"), ("b.py", 5, "v5_2")]
    (root / "a.py").write_text("print(y, 5)\nprint(y, 6)\n")
    again = await run.call("ast_grep", args)
    assert [(m["file"], m["captures"]["A"]) for m in again.data["matches"]][:2] == [
        ("a.py", "y"), ("b.py", "v5_0")]


async def test_a_changed_file_is_parsed_again(run, files, root):
    files({"a.py": "print(1)\n"})
    first = await run.call("ast_grep", {"pattern": "print($A)", "path": "a.py"})
    assert first.data["total"] == 1
    (root / "a.py").write_text("print(1)\nprint(22)\n")
    second = await run.call("ast_grep", {"pattern": "print($A)", "path": "a.py"})
    assert [m["captures"]["A"] for m in second.data["matches"]] == ["1", "22"]


async def test_readonly_surface_sees_ast_grep_but_not_the_writers(parser_runtime):
    run = await parser_runtime.create_run(surface="readonly")
    assert "ast_grep" in run.tool_names()
    assert "ast_edit" not in run.tool_names() and "resolve" not in run.tool_names()


async def test_strings_and_comments_never_match_in_javascript(run, files):
    files({"s.js": (
        'const a = "foo(1)";\n'
        "const b = `foo(2) ${foo(3)}`;\n"
        "// foo(4)\n"
        "/* foo(5) */\n"
        "foo(/* inside */ 6);\n"
    )})
    res = await run.call("ast_grep", {"pattern": "foo($X)", "path": "s.js"})
    # Only real calls: the one inside the template substitution is code, not text.
    assert [m["captures"]["X"] for m in res.data["matches"]] == ["3", "6"]


async def test_status_lists_the_grammars(parser_runtime):
    status = await parser_runtime.status()
    parser = status["resources"]["parser"]
    assert {"python", "dart", "tsx"} <= set(parser["languages"]) and parser["available"]


async def test_pattern_without_a_literal_token_still_searches(run, files):
    files({"s.go": "package p\n\ntype S struct {\n\tA int\n\tB string\n}\n"})
    res = await run.call("ast_grep", {"pattern": "$F $T", "path": "s.go"})
    assert res.data["engine"] == "ast-grep"
    # As the ast-grep CLI: `$F $T` is any node of two named children (the file, the type).
    assert [m["text"] for m in res.data["matches"]] == [
        "package p\n\ntype S struct {\n\tA int\n\tB string\n}\n",
        "S struct {\n\tA int\n\tB string\n}", "A int", "B string"]


async def test_each_node_sharing_a_span_is_a_match_as_in_the_cli(run, files):
    # As the ast-grep CLI: each node is a match of `$A`, also where several share a span
    # (JavaScript's expression statement without `;` and its call); `$$$A` alone matches none.
    files({"one.js": "f(x)\n", "one.py": "def g():\n    f(x)\n"})
    res = await run.call("ast_grep", {"pattern": "$A", "path": "one.js"})
    assert [m["text"] for m in res.data["matches"]] == ["f(x)\n", "f(x)", "f(x)", "f", "(x)", "x"]
    res = await run.call("ast_grep", {"pattern": "$A", "path": "one.py"})
    assert [m["text"] for m in res.data["matches"]] == [
        "def g():\n    f(x)\n", "def g():\n    f(x)", "g", "()", "f(x)", "f(x)", "f(x)", "f",
        "(x)", "x"]
    res = await run.call("ast_grep", {"pattern": "$$$A", "path": "one.py"})
    assert res.code == "unparseable_pattern" and "Standalone multi meta variable `$$$A`" \
        in res.error["message"], res.text


async def test_dart_calls_are_found_whatever_holds_them(run, files):
    files({"lib/a.dart": (
        "void main() {\n"
        "  controller.dispose();\n"
        "  foo(1, 2);\n"
        "  var y = foo(3, 4).then(done);\n"
        "  bar(foo(5, 6));\n"
        "  if (focus != null) focus.dispose();\n"
        "  widget.controller.dispose();\n"
        "}\n"
    )})
    res = await run.call("ast_grep", {"pattern": "foo(1, 2)", "path": "lib/a.dart"})
    assert [m["start"][0] for m in res.data["matches"]] == [3]
    res = await run.call("ast_grep", {"pattern": "foo($$$A)", "path": "lib/a.dart"})
    assert [m["captures"]["A"] for m in res.data["matches"]] == ["1, 2", "3, 4", "5, 6"]
    res = await run.call("ast_grep", {"pattern": "foo($A, $B)", "path": "lib/a.dart"})
    assert [(m["start"][0], m["captures"]) for m in res.data["matches"]] == [
        (3, {"A": "1", "B": "2"}), (4, {"A": "3", "B": "4"}), (5, {"A": "5", "B": "6"})]
    assert res.data["pattern_kind"] == "(sequence)"  # an identifier, then a selector
    res = await run.call("ast_grep", {"pattern": "$X.dispose()", "path": "lib/a.dart"})
    # `$X` is one node in its place, with the selectors that extend it (Dart has no
    # member-expression node), never a chain's tail such as `.controller.dispose()`.
    assert [(m["text"], m["captures"]["X"]) for m in res.data["matches"]] == [
        ("controller.dispose()", "controller"), ("focus.dispose()", "focus"),
        ("widget.controller.dispose()", "widget.controller")]
    res = await run.call("ast_grep", {"pattern": "if ($X != null) $X.dispose()",
                                      "path": "lib/a.dart"})
    assert [m["start"][0] for m in res.data["matches"]] == [6]


async def test_deeply_nested_and_long_patterns_are_searched(run, files):
    files({"a.py": "print(1)\n", "deep.py": "f(" * 200 + ")" * 200 + "\n"})
    res = await run.call("ast_grep", {"pattern": "f(" * 200 + ")" * 200, "path": "deep.py"})
    assert res.ok and res.data["total"] == 1, res.text
    for pattern in ("f(" * 4000 + ")" * 4000, "\n".join(["print($A)"] * 1_500)):
        res = await run.call("ast_grep", {"pattern": pattern, "path": "a.py"})
        assert res.ok and res.data["total"] == 0, res.text


async def test_a_pattern_with_an_error_node_is_matched_as_the_cli_does_and_says_so(run, files):
    # `$S` stands where TypeScript wants a string: ast-grep's parse of the pattern has an
    # ERROR node, and it matches the imports all the same (the CLI too, with a warning).
    files({"m.ts": "import { a, b } from 'x';\nimport c from 'y';\n"})
    res = await run.call("ast_grep", {"pattern": "import { $$$N } from $S", "path": "m.ts"})
    assert [(m["text"], m["captures"]) for m in res.data["matches"]] == [
        ("import { a, b } from 'x';", {"N": "a, b", "S": "'x'"})]
    assert res.data["pattern_error_node"] == "import { $$$N } from $S"
    assert "with an ERROR node at `import { $$$N } from $S`" in res.text


async def test_a_pattern_of_several_statements_is_a_run_the_answer_notes(run, files):
    # The ast-grep CLI refuses a pattern of several nodes; the built-in matcher finds the run.
    files({"a.py": "x = 1\ny = 2\nz = 3\n"})
    res = await run.call("ast_grep", {"pattern": "x = $A\ny = $B", "path": "a.py"})
    assert [m["text"] for m in res.data["matches"]] == ["x = 1\ny = 2"]
    assert res.data["engine"] == "built-in"
    assert "take a pattern of one node only" in res.text


async def test_files_with_syntax_errors_are_named_searched_cold_and_warm(run, files):
    # The ERROR nodes are looked for in the same walk as the matches, once per file version.
    files({"app.py": PY, "broken.py": "x = = 1\nprint(x)\n", "clean.py": "print(1)\n",
           "web.js": "function f( {\n  console.log(1)\n}\n", "ok.js": "console.log(2)\n"})
    for _ in range(2):
        py = await run.call("ast_grep", {"pattern": "print($A)", "language": "python"})
        assert py.ok, py.text
        assert py.data["parse_errors"] == ["broken.py"]
        assert {m["file"] for m in py.data["matches"]} >= {"app.py", "clean.py"}
        assert "1 file(s) have syntax errors" in py.text
        js = await run.call("ast_grep", {"pattern": "console.log($A)", "language": "javascript"})
        assert js.data["parse_errors"] == ["web.js"]
        assert "ok.js" in {m["file"] for m in js.data["matches"]}
    files({"broken.py": "def f(x):\n    print(x)\n"})  # repaired: no longer named
    again = await run.call("ast_grep", {"pattern": "print($A)", "language": "python"})
    assert again.data["parse_errors"] == [] and "broken.py" in {
        m["file"] for m in again.data["matches"]}


@pytest.mark.skipif(not pack_installed(), reason="needs tree-sitter-language-pack (grammars)")
async def test_sql_patterns_with_metavariables_search(run, files):
    # tree-sitter-sql's identifiers are ASCII: `$` stands in as an ASCII name there (the
    # grammar pack is a test dependency; without it SQL is `unavailable`, tested elsewhere).
    files({"q.sql": "SELECT a, b FROM orders;\nDELETE FROM logs WHERE day < 3;\n",
           "other.sql": "UPDATE t SET a = 1;\n"})
    found = await run.call("ast_grep", {"pattern": "SELECT $$$C FROM $T", "language": "sql"})
    assert found.ok, found.text
    assert [(m["file"], m["start"][0], m["captures"]["T"]) for m in found.data["matches"]] == [
        ("q.sql", 1, "orders")]
    delete = await run.call("ast_grep", {"pattern": "DELETE FROM $T WHERE $W", "path": "q.sql"})
    assert [m["captures"] for m in delete.data["matches"]] == [{"T": "logs", "W": "day < 3"}]
    none = await run.call("ast_grep", {"pattern": "DELETE FROM $T WHERE $W",
                                       "path": "other.sql"})
    assert none.ok and none.data["total"] == 0, none.text
