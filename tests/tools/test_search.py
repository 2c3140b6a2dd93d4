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
