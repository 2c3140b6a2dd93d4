"""apply_patch: many files, all or nothing."""

from __future__ import annotations

PATCH = """\
--- a/one.py
+++ b/one.py
@@ -1,3 +1,3 @@
 a = 1
-b = 2
+b = 20
 c = 3
--- a/two.py
+++ b/two.py
@@ -1,2 +1,2 @@
-x = 1
+x = 10
 y = 2
--- /dev/null
+++ b/three.py
@@ -0,0 +1 @@
+z = 3
"""


def _files(root):
    (root / "one.py").write_text("a = 1\nb = 2\nc = 3\n")
    (root / "two.py").write_text("x = 1\ny = 2\n")


async def test_applies_a_patch_across_files(runtime, root):
    _files(root)
    run = await runtime.create_run()
    result = await run.call("apply_patch", {"patch": PATCH})
    assert result.ok, result.text
    assert (root / "one.py").read_text() == "a = 1\nb = 20\nc = 3\n"
    assert (root / "two.py").read_text() == "x = 10\ny = 2\n"
    assert (root / "three.py").read_text() == "z = 3\n"
    assert result.data["files"] == ["one.py", "two.py", "three.py"]


async def test_a_hunk_that_does_not_apply_changes_nothing_anywhere(runtime, root):
    _files(root)
    (root / "two.py").write_text("x = 5\ny = 2\n")
    run = await runtime.create_run()
    result = await run.call("apply_patch", {"patch": PATCH})
    assert result.code == "failed"
    assert "Hunk 1 of two.py" in result.error["message"]
    assert (root / "one.py").read_text() == "a = 1\nb = 2\nc = 3\n"
    assert not (root / "three.py").exists()


async def test_hunks_that_drifted_still_apply_and_deletions_work(runtime, root):
    (root / "one.py").write_text("# header\n# more\na = 1\nb = 2\nc = 3\n")
    (root / "old.py").write_text("gone = True\n")
    patch = PATCH.split("--- a/two.py")[0] + (
        "--- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone = True\n"
    )
    run = await runtime.create_run()
    result = await run.call("apply_patch", {"patch": patch})
    assert result.ok, result.text
    assert (root / "one.py").read_text() == "# header\n# more\na = 1\nb = 20\nc = 3\n"
    assert not (root / "old.py").exists()


async def test_garbage_is_invalid_arguments(runtime):
    run = await runtime.create_run()
    result = await run.call("apply_patch", {"patch": "this is not a diff"})
    assert result.code == "invalid_arguments"
