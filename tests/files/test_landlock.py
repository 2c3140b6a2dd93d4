"""Landlock: a thread that confines itself reads only beneath what it allowed; others are free."""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from jupyter_agent_tools.files import landlock

pytestmark = pytest.mark.skipif(not landlock.available(), reason="the kernel has no Landlock")


def test_a_confined_thread_and_its_children_read_only_beneath_what_it_allowed(root, tmp_path):
    (root / "inside.txt").write_text("inside\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")
    (root / "link.txt").symlink_to(outside)

    def confined() -> tuple[str, list[str], str]:
        system = {Path(folder): landlock.READ_FILE | landlock.READ_DIR | landlock.EXECUTE
                  for folder in ("/usr", "/lib", "/lib64", "/bin") if Path(folder).exists()}
        landlock.restrict_thread_reads({root: landlock.READ_FILE | landlock.READ_DIR, **system})
        refused = []
        for path in (outside, root / "link.txt"):
            try:
                path.read_text()
            except PermissionError:
                refused.append(path.name)
        child = subprocess.run(["/usr/bin/cat", str(outside)], capture_output=True, text=True,
                               check=False)
        return (root / "inside.txt").read_text(), refused, child.stderr

    with ThreadPoolExecutor(max_workers=1) as thread:
        inside, refused, child_error = thread.submit(confined).result()
    assert inside == "inside\n"
    assert refused == ["outside.txt", "link.txt"]
    assert "Permission denied" in child_error
    # The rest of the process is not confined.
    assert outside.read_text() == "outside\n"
