"""glob and grep honour .gitignore, skip binaries and bound their results."""

from __future__ import annotations


def _project(root):
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    print('hi')\n")
    (root / "src" / "util.py").write_text("# print is not called here\n")
    (root / "build").mkdir()
    (root / "build" / "gen.py").write_text("print('generated')\n")
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "debug.log").write_text("print\n")
    (root / "image.png").write_bytes(b"\x89PNG\x00\x00print")


async def test_glob_matches_at_any_depth_and_skips_ignored(runtime, root):
    _project(root)
    run = await runtime.create_run()
    result = await run.call("glob", {"pattern": "*.py"})
    assert result.data["files"] == ["src/app.py", "src/util.py"]
    anchored = await run.call("glob", {"pattern": "src/a*.py"})
    assert anchored.data["files"] == ["src/app.py"]
    none = await run.call("glob", {"pattern": "*.rs"})
    assert none.ok and none.data["total"] == 0 and "No files" in none.text


async def test_grep_finds_lines_and_counts_what_it_skipped(runtime, root):
    _project(root)
    run = await runtime.create_run()
    result = await run.call("grep", {"pattern": r"print\("})
    assert [(m["file"], m["line"]) for m in result.data["matches"]] == [("src/app.py", 2)]
    assert "src/app.py:2:     print('hi')" in result.text
    assert result.data["skipped"]["ignored"] >= 2 and result.data["skipped"]["binary"] == 1
    only_util = await run.call("grep", {"pattern": "print", "glob": "util.py"})
    assert [m["file"] for m in only_util.data["matches"]] == ["src/util.py"]


async def test_grep_bounds_results_and_rejects_bad_regex(runtime, root):
    runtime.grep_max_results = 5
    (root / "many.txt").write_text("hit\n" * 20)
    run = await runtime.create_run()
    result = await run.call("grep", {"pattern": "hit"})
    assert len(result.data["matches"]) == 5 and result.data["total"] == 20
    assert "15 more" in result.text
    bad = await run.call("grep", {"pattern": "("})
    assert bad.code == "invalid_arguments" and "Escape" in bad.error["message"]


def _tour_layout(root):
    """Binder's layout: the tour's scratch copy lives in a folder the repository ignores."""
    (root / ".gitignore").write_text("agent-tools-runs/\n*.log\n")
    copy = root / "notebooks" / "agent-tools-runs" / "tour-1"
    (copy / "build").mkdir(parents=True)
    (copy / ".gitignore").write_text("build/\n")
    (copy / "app.py").write_text("def greet():\n    return 'hello'\n")
    (copy / "run.log").write_text("hello from a log\n")
    (copy / "build" / "gen.py").write_text("hello = 'generated'\n")
    (root / "main.py").write_text("print('hello')\n")
    return copy


async def test_a_search_that_starts_inside_an_ignored_folder_searches_it(runtime, root):
    _tour_layout(root)
    from_root = await runtime.create_run()
    whole = await from_root.call("grep", {"pattern": "hello"})
    assert [m["file"] for m in whole.data["matches"]] == ["main.py"]

    inside = await runtime.create_run(cwd="notebooks/agent-tools-runs/tour-1")
    grep = await inside.call("grep", {"pattern": "hello"})
    # The start is searched; the rules still apply below it (*.log from the root, build/ here).
    assert [(m["file"], m["line"]) for m in grep.data["matches"]] == [("app.py", 2)]
    assert grep.data["skipped"]["ignored"] == 2
    glob = await inside.call("glob", {"pattern": "*.py"})
    assert glob.data["files"] == ["app.py"]
    listing = await inside.call("glob", {"pattern": "**/*"})  # the tour's first call
    assert listing.data["files"] == ["app.py"], listing.text
    assert listing.data["skipped"]["hidden"] == 1 and "hidden: true" in listing.text
    hidden = await inside.call("glob", {"pattern": "**/*", "hidden": True})
    assert hidden.data["files"] == [".gitignore", "app.py"], hidden.text

    named = await from_root.call("grep", {"pattern": "hello",
                                          "path": "notebooks/agent-tools-runs/tour-1"})
    assert [m["file"] for m in named.data["matches"]] == ["notebooks/agent-tools-runs/tour-1/app.py"]
    named_glob = await from_root.call("glob", {"pattern": "*", "path": "notebooks/agent-tools-runs",
                                               "hidden": True})
    assert named_glob.data["files"] == ["notebooks/agent-tools-runs/tour-1/.gitignore",
                                        "notebooks/agent-tools-runs/tour-1/app.py"]


async def test_a_gitignore_above_the_root_hides_nothing(runtime_factory, root):
    # A home folder's catch-all .gitignore (a dotfiles trick) is outside the project.
    (root.parent / ".gitignore").write_text("*\n")
    (root / "sub").mkdir()
    (root / "sub" / "a.py").write_text("needle\n")
    run = await runtime_factory().create_run()
    assert (await run.call("grep", {"pattern": "needle"})).data["total"] == 1
    assert (await run.call("grep", {"pattern": "needle", "path": "sub"})).data["total"] == 1
    assert (await run.call("glob", {"pattern": "*.py"})).data["files"] == ["sub/a.py"]


async def test_grep_glob_is_anchored_to_the_path_searched(runtime, root):
    (root / "pkg" / "src").mkdir(parents=True)
    (root / "pkg" / "src" / "a.py").write_text("needle\n")
    (root / "pkg" / "b.py").write_text("needle\n")
    (root / "src").mkdir()
    (root / "src" / "c.py").write_text("needle\n")
    run = await runtime.create_run()
    anchored = await run.call("grep", {"pattern": "needle", "path": "pkg", "glob": "src/*.py"})
    assert [m["file"] for m in anchored.data["matches"]] == ["pkg/src/a.py"]
    any_depth = await run.call("grep", {"pattern": "needle", "path": "pkg", "glob": "*.py"})
    assert [m["file"] for m in any_depth.data["matches"]] == ["pkg/b.py", "pkg/src/a.py"]


async def test_grep_never_reads_through_links_out_of_the_root(runtime, root, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("needle: the secret\n")
    (root / "linked_folder").symlink_to(outside, target_is_directory=True)
    (root / "linked_file.txt").symlink_to(outside / "secret.txt")
    (root / "inside.txt").write_text("needle inside\n")
    run = await runtime.create_run()
    result = await run.call("grep", {"pattern": "needle"})
    assert [m["file"] for m in result.data["matches"]] == ["inside.txt"]
    assert "secret" not in result.text
    through = await run.call("grep", {"pattern": "needle", "path": "linked_folder"})
    assert through.code == "path_outside_root" and "secret" not in through.text
    deeper = await run.call("grep", {"pattern": "needle", "path": "linked_folder/secret.txt"})
    assert deeper.code == "path_outside_root"


async def test_grep_skips_skip_dirs_and_oversized_files(runtime_factory, root):
    (root / ".ipynb_checkpoints").mkdir()
    (root / ".ipynb_checkpoints" / "copy.py").write_text("needle\n")
    (root / "big.txt").write_text("needle\n" + "x" * 5_000)
    (root / "small.txt").write_text("needle\n")
    run = await runtime_factory(read_max_bytes=1_000).create_run()
    result = await run.call("grep", {"pattern": "needle", "hidden": True})
    assert [m["file"] for m in result.data["matches"]] == ["small.txt"]
    assert result.data["skipped"]["oversized"] == 1 and "1 oversized" in result.text
    # Named, a skipped folder is refused (rg would search it): checkpoints are copies.
    for tool, args in (("grep", {"pattern": "needle"}), ("glob", {"pattern": "*"})):
        named = await run.call(tool, args | {"path": ".ipynb_checkpoints"})
        assert named.code == "invalid_arguments" and "never enter" in named.error["message"]


async def test_node_modules_follows_the_ignore_rules(runtime, root):
    # As in rg: searched unless a .gitignore leaves it out, and then counted as ignored.
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / "index.js").write_text("needle\n")
    (root / "app.js").write_text("needle\n")
    run = await runtime.create_run()
    searched = await run.call("grep", {"pattern": "needle"})
    assert [m["file"] for m in searched.data["matches"]] == ["app.js",
                                                            "node_modules/pkg/index.js"]
    (root / ".gitignore").write_text("node_modules/\n")
    left_out = await run.call("grep", {"pattern": "needle"})
    assert [m["file"] for m in left_out.data["matches"]] == ["app.js"]
    assert left_out.data["skipped"]["ignored"] == 1 and "1 ignored" in left_out.text
    listed = await run.call("glob", {"pattern": "*.js"})
    assert listed.data["files"] == ["app.js"] and listed.data["skipped"]["ignored"] == 1


async def test_a_catastrophic_regex_is_linear_time(runtime, root):
    # Under a backtracking engine `(a+)+$` on these lines takes longer than the universe.
    (root / "redos.txt").write_text(("a" * 5_000 + "!\n") * 200)
    run = await runtime.create_run()
    result = await run.call("grep", {"pattern": "(a+)+$"})
    assert result.ok and result.data["total"] == 0


async def test_grep_reports_ripgreps_own_message_for_unsupported_syntax(runtime, root):
    (root / "a.txt").write_text("abab\n")
    run = await runtime.create_run()
    backreference = await run.call("grep", {"pattern": r"(ab)\1"})
    assert backreference.code == "invalid_arguments"
    assert "backreferences are not supported" in backreference.error["message"]
    assert "--pcre2" not in backreference.error["message"]
    bad_glob = await run.call("grep", {"pattern": "ab", "glob": "{unclosed"})
    assert bad_glob.code == "invalid_arguments" and "glob" in bad_glob.error["message"]


async def test_free_text_arguments_are_bounded(runtime_factory, root):
    run = await runtime_factory(search_max_argument_chars=100).create_run()
    long_pattern = await run.call("grep", {"pattern": "a" * 101})
    assert long_pattern.code == "invalid_arguments" and "100-character" in long_pattern.error["message"]
    long_glob = await run.call("glob", {"pattern": "*" * 101})
    assert long_glob.code == "invalid_arguments"
    nul = await run.call("grep", {"pattern": "a\x00b"})
    assert nul.code == "invalid_arguments" and "NUL" in nul.error["message"]


async def test_grep_is_bounded_in_time_and_output(runtime_factory, root):
    (root / "many.txt").write_text("needle in a haystack\n" * 5_000)
    run = await runtime_factory(max_grep_output_bytes=20_000).create_run()
    cut = await run.call("grep", {"pattern": "needle"})
    # Past the output bound the matches are counted, not kept: the note gives the real count
    # (it once said "at least 0 more" whenever the bound cut before max_grep_results).
    shown = len(cut.data["matches"])
    assert cut.ok and cut.data["complete"] and 0 < shown < 200
    assert cut.data["total"] == 5_000
    assert f"[{5_000 - shown} more matches not shown;" in cut.text and "at least" not in cut.text
    slow = await runtime_factory(grep_timeout_seconds=0.0001).create_run()
    stopped = await slow.call("grep", {"pattern": "needle"})
    assert stopped.code == "timeout" and "Narrow" in stopped.error["message"]


def _ripgreps() -> list:
    import psutil

    return [p for p in psutil.Process().children(recursive=True) if p.name() == "rg"]


async def test_a_cancelled_or_timed_out_grep_leaves_no_ripgrep_behind(runtime_factory, root):
    import asyncio
    import os

    os.mkfifo(root / "never_written")  # rg blocks reading it: a search that never ends
    run = await runtime_factory().create_run()
    call = asyncio.ensure_future(run.call("grep", {"pattern": "x", "path": "never_written"}))
    for _ in range(100):
        await asyncio.sleep(0.05)
        if _ripgreps():
            break
    assert _ripgreps(), "rg did not start"
    call.cancel()
    await asyncio.gather(call, return_exceptions=True)
    await asyncio.sleep(0.2)
    assert _ripgreps() == []

    bounded = await runtime_factory(grep_timeout_seconds=0.5).create_run()
    stopped = await bounded.call("grep", {"pattern": "x", "path": "never_written"})
    assert stopped.code == "timeout" and _ripgreps() == []


async def test_a_file_named_as_path_follows_the_size_and_binary_rules(runtime_factory, root):
    (root / "big.txt").write_text("needle\n" + "x" * 5_000)
    (root / "blob.dat").write_bytes(b"needle\x00\x01")
    run = await runtime_factory(read_max_bytes=1_000).create_run()
    big = await run.call("grep", {"pattern": "needle", "path": "big.txt"})
    assert big.data["total"] == 0 and big.data["skipped"]["oversized"] == 1
    blob = await run.call("grep", {"pattern": "needle", "path": "blob.dat"})
    assert blob.data["total"] == 0 and blob.data["skipped"]["binary"] == 1


async def test_grep_and_glob_see_the_same_files(runtime, root):
    layout = {
        ".gitignore": "*.log\n/dist\ncache/\n",
        ".hidden.py": "x",
        ".ignore": "a.py\n",  # ripgrep's own ignore file: not a .gitignore, so not honoured
        "a.py": "x",
        "app.log": "x",
        "dist/out.js": "x",
        "lib/dist/keep.js": "x",
        "lib/.gitignore": "!keep.log\ngen_*\n",
        "lib/keep.log": "x",
        "lib/gen_1.py": "x",
        "lib/cache/c.py": "x",
        "lib/deep/ok.py": "x",
    }
    for name, content in layout.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)
    run = await runtime.create_run()
    hidden = {"hidden": True}
    listed = (await run.call("glob", {"pattern": "*"} | hidden)).data["files"]
    searched = sorted({m["file"] for m in
                       (await run.call("grep", {"pattern": "."} | hidden)).data["matches"]})
    assert listed == searched == [".gitignore", ".hidden.py", ".ignore", "a.py",
                                  "lib/.gitignore", "lib/deep/ok.py", "lib/dist/keep.js",
                                  "lib/keep.log"]
    for start in ("lib", "lib/deep"):
        below = (await run.call("glob", {"pattern": "*", "path": start} | hidden)).data["files"]
        found = (await run.call("grep", {"pattern": ".", "path": start} | hidden)).data["matches"]
        assert below == sorted({m["file"] for m in found})
    # Without `hidden`, both leave the hidden files out alike.
    listed = (await run.call("glob", {"pattern": "*"})).data["files"]
    searched = sorted({m["file"] for m in (await run.call("grep", {"pattern": "."})).data["matches"]})
    assert listed == searched == ["a.py", "lib/deep/ok.py", "lib/dist/keep.js", "lib/keep.log"]


async def test_glob_speaks_ripgreps_dialect(runtime, root):
    for name in ("ui/app.ts", "ui/view.tsx", "ui/style.css", "pkg/myutils/core.py",
                 "pkg/myutils/string_utils.py", "pkg/main.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    run = await runtime.create_run()
    braces = await run.call("glob", {"pattern": "*.{ts,tsx}"})  # once a silent 0
    assert braces.data["files"] == ["ui/app.ts", "ui/view.tsx"]
    # A name glob matches names: not every file below a folder whose name matches.
    utils = await run.call("glob", {"pattern": "*utils*"})
    assert utils.data["files"] == ["pkg/myutils/string_utils.py"]
    grep_utils = await run.call("grep", {"pattern": "x", "glob": "*utils*"})
    assert [m["file"] for m in grep_utils.data["matches"]] == utils.data["files"]
    inside = await run.call("glob", {"pattern": "**/*utils*/**"})  # a folder: say so
    assert inside.data["files"] == ["pkg/myutils/core.py", "pkg/myutils/string_utils.py"]
    classes = await run.call("glob", {"pattern": "[!m]*.py"})
    assert classes.data["files"] == ["pkg/myutils/core.py", "pkg/myutils/string_utils.py"]
    negated = await run.call("glob", {"pattern": "!*.py", "path": "ui"})
    assert negated.data["files"] == ["ui/app.ts", "ui/style.css", "ui/view.tsx"]
    bad = await run.call("glob", {"pattern": "*.{ts"})
    assert bad.code == "invalid_arguments" and "unclosed" in bad.error["message"]


async def test_an_interrupted_writes_temp_file_is_never_listed(runtime, root):
    # What a crash between writing the temp file and renaming it leaves (files/atomic.py).
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("needle = 1\n")
    (root / "src" / ".app.py.0123abcd.tmp").write_text("needle = 2\n")
    (root / "src" / ".app.py.89abcdef.orig").write_text("needle = 0\n")
    run = await runtime.create_run()
    for pattern in ("*", "**", ".*", "*.tmp", "*.{py,tmp,orig}", "src/.app.py.*"):
        listed = await run.call("glob", {"pattern": pattern})
        assert not any(".app.py" in name for name in listed.data["files"]), pattern
    for glob in (None, "*", "*.tmp", ".*"):
        found = await run.call("grep", {"pattern": "needle"} | ({"glob": glob} if glob else {}))
        assert {m["file"] for m in found.data["matches"]} <= {"src/app.py"}, glob
    assert [p.name for p in run.walker().files(root)] == ["app.py"]


async def test_glob_bounds_its_answer_and_its_walk(runtime_factory, root):
    (root / "many").mkdir()
    for index in range(30):
        (root / "many" / f"f{index:02}.py").write_text("")
    run = await runtime_factory(max_glob_results=5).create_run()
    first = await run.call("glob", {"pattern": "*.py"})
    assert first.data["files"] == [f"many/f{index:02}.py" for index in range(5)]
    assert first.data["total"] == 30 and "[25 more not shown" in first.text
    walked = await runtime_factory(max_walk_entries=10).create_run()
    cut = await walked.call("glob", {"pattern": "*.py"})
    assert cut.data["truncated"] and "stopped at its bound" in cut.text
    assert cut.data["files"] == [f"many/f{index:02}.py" for index in range(10)]


async def test_grep_errors_and_hints_name_only_its_own_arguments(runtime, root):
    (root / "a.txt").write_text("one\ntwo\n--\n" * 10)  # apart: adjacent matches are one
    run = await runtime.create_run()
    across = await run.call("grep", {"pattern": "one\ntwo"})
    assert across.code == "invalid_arguments"
    message = across.error["message"]
    assert "`multiline: true`" in message and "-U" not in message and "--" not in message
    assert (await run.call("grep", {"pattern": "one\ntwo", "multiline": True})).data["total"] == 10
    some = await run.call("grep", {"pattern": "one", "max_results": 3})
    assert "7 more matches not shown; raise max_results (up to 1000)" in some.text
    (root / "b.txt").write_text("one\n" * 1200)
    capped = await run.call("grep", {"pattern": "one", "max_results": 1000})
    assert len(capped.data["matches"]) == 1000 and "raise max_results" not in capped.text
    over = await run.call("grep", {"pattern": "one", "max_results": 1001})
    assert over.code == "invalid_arguments"
    files = await run.call("grep", {"pattern": "one", "output_mode": "files", "max_results": 1})
    assert files.data["files"] == ["a.txt"] and files.data["total"] == 2
    assert "1 more files not shown; raise max_results" in files.text
    strict = await run.call("grep", {"pattern": "one", "case_insensitive": "true"})
    assert strict.code == "invalid_arguments"  # JSON booleans only
