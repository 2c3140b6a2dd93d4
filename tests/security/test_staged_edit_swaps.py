"""resolve accept after a swap: a staged edit writes the file it was computed on, or nothing.

The attack: stage an edit, then replace the staged file's folder (or the file) with a link
to an outside copy holding identical bytes. The content check alone passes; the file's
identity does not, and the writer opens no link.
"""

from __future__ import annotations

import os

import pytest

from jupyter_agent_tools import Runtime

PARSER = "jupyter_agent_tools.structural.provider:ParserProvider"
SOURCE = "print('hello')\n"


@pytest.fixture
def staged(tmp_path, jp_asyncio_loop):
    """A run over root/ with pkg/app.py staged for rewrite; outside/pkg/app.py is a copy."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    for top in (root, outside):
        (top / "pkg").mkdir(parents=True)
        (top / "pkg" / "app.py").write_text(SOURCE)
    runtime = Runtime(root_dir=str(root), resource_providers=[PARSER])
    run = jp_asyncio_loop.run_until_complete(runtime.create_run())
    staged = jp_asyncio_loop.run_until_complete(run.call("ast_edit", {
        "pattern": "print($A)", "rewrite": "log($A)", "path": "pkg", "language": "python"}))
    assert staged.ok and staged.data["edit_id"], staged.text
    yield root, outside, run, staged.data["edit_id"]
    jp_asyncio_loop.run_until_complete(runtime.shutdown())


def snapshot(folder):
    return {path: (path.read_bytes(), path.stat().st_mtime_ns)
            for path in sorted(folder.rglob("*")) if path.is_file()}


async def test_a_folder_swapped_for_a_link_to_an_identical_copy_is_not_written(staged):
    root, outside, run, edit_id = staged
    os.rename(root / "pkg", root / "pkg.moved")
    os.symlink(outside / "pkg", root / "pkg")
    before_outside, before_inside = snapshot(outside), snapshot(root / "pkg.moved")
    result = await run.call("resolve", {"edit_id": edit_id, "action": "accept"})
    assert result.code in {"stale_edit", "path_outside_root"}, result.text
    assert "pkg/app.py" in result.error["message"]
    assert snapshot(outside) == before_outside  # nothing written outside
    assert snapshot(root / "pkg.moved") == before_inside  # nor inside
    assert sorted(os.listdir(outside / "pkg")) == ["app.py"]


async def test_a_file_swapped_for_a_link_to_an_identical_copy_is_not_written(staged):
    root, outside, run, edit_id = staged
    os.unlink(root / "pkg" / "app.py")
    os.symlink(outside / "pkg" / "app.py", root / "pkg" / "app.py")
    before = snapshot(outside)
    result = await run.call("resolve", {"edit_id": edit_id, "action": "accept"})
    assert result.code in {"stale_edit", "path_outside_root"}, result.text
    assert snapshot(outside) == before
    assert (root / "pkg" / "app.py").is_symlink()  # the link itself was not replaced either
    assert sorted(os.listdir(root / "pkg")) == ["app.py"]


async def test_a_file_replaced_by_an_identical_file_is_stale(staged):
    root, _, run, edit_id = staged
    (root / "pkg" / "copy.py").write_text(SOURCE)  # same bytes, another file, renamed over
    os.replace(root / "pkg" / "copy.py", root / "pkg" / "app.py")
    result = await run.call("resolve", {"edit_id": edit_id, "action": "accept"})
    assert result.code == "stale_edit" and result.data["stale_files"] == ["pkg/app.py"]
    assert (root / "pkg" / "app.py").read_text() == SOURCE


async def test_an_untouched_staged_edit_is_written_and_keeps_the_file_mode(staged):
    root, _, run, edit_id = staged
    (root / "pkg" / "app.py").chmod(0o640)
    result = await run.call("resolve", {"edit_id": edit_id, "action": "accept"})
    assert result.ok, result.text
    assert (root / "pkg" / "app.py").read_text() == "log('hello')\n"
    assert (root / "pkg" / "app.py").stat().st_mode & 0o777 == 0o640
