"""apply_patch: many files, all or nothing."""

from __future__ import annotations

import os
import resource
import signal

import pytest

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


def _modify(path: str) -> str:
    return f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-old\n+new\n"


@pytest.mark.parametrize(("path", "code", "says"), [
    ("x" * 300, "invalid_arguments", "too long"),
    ("notes.txt/inner.txt", "not_found", "not a folder"),
    ("folder", "invalid_arguments", "is a folder"),
    ("pipe", "invalid_arguments", "not a regular file"),
])
async def test_os_refusals_are_contract_errors_and_change_nothing(runtime, root, path, code, says):
    (root / "notes.txt").write_text("old\n")
    (root / "folder").mkdir()
    os.mkfifo(root / "pipe")
    run = await runtime.create_run()
    result = await run.call("apply_patch", {"patch": _modify("notes.txt") + _modify(path)})
    assert result.code == code and says in result.error["message"], result.text
    assert "bug in the tool" not in result.text
    assert (root / "notes.txt").read_text() == "old\n"


async def test_a_failed_fourth_file_names_it_and_restores_the_other_three(runtime, root):
    for i in range(1, 4):
        (root / f"f{i}.py").write_text("old\n")
    patch = "".join(_modify(f"f{i}.py") for i in range(1, 4))
    patch += "--- /dev/null\n+++ b/f4.py\n@@ -0,0 +1 @@\n+" + "y" * 4096 + "\n"
    run = await runtime.create_run()
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, hard))  # a real "file too large"
    try:
        result = await run.call("apply_patch", {"patch": patch})
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
    assert result.code == "failed", result.text
    assert result.error["message"].startswith(
        "Writing f4.py failed (File too large); no file was changed.")
    assert ".tmp" not in result.text
    assert sorted(p.name for p in root.iterdir()) == ["f1.py", "f2.py", "f3.py"]
    assert all((root / f"f{i}.py").read_text() == "old\n" for i in range(1, 4))


async def test_a_patch_that_breaks_a_notebook_changes_nothing(runtime, root):
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    nbformat.write(new_notebook(cells=[new_code_cell("x = 1")]), root / "a.ipynb")
    _files(root)
    before = {path.name: path.read_bytes() for path in root.iterdir()}
    lines = (root / "a.ipynb").read_text().splitlines()
    at = next(index for index, line in enumerate(lines) if '"cell_type"' in line) + 1
    broken = (f"--- a/one.py\n+++ b/one.py\n@@ -1 +1 @@\n-a = 1\n+a = 10\n"
              f"--- a/a.ipynb\n+++ b/a.ipynb\n@@ -{at},1 +{at},1 @@\n-{lines[at - 1]}\n"
              f'+   "cell_typo": "code",\n')
    run = await runtime.create_run()
    result = await run.call("apply_patch", {"patch": broken})
    assert result.code == "invalid_arguments", result.text
    assert "a.ipynb is not a valid nbformat 4 notebook: at cells/0" in result.error["message"]
    assert {path.name: path.read_bytes() for path in root.iterdir()} == before
    fixed = broken.replace('"cell_typo"', '"cell_type"')
    assert (await run.call("apply_patch", {"patch": fixed})).ok
