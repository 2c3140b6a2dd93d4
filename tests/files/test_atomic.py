"""The atomic multi-file writer: all files change, or none."""

from __future__ import annotations

import os

import pytest

from jupyter_agent_tools.files import FileIdentity, FilesError, atomic, write_files_atomically
from jupyter_agent_tools.runtime.file_errors import file_error


def test_writes_creates_and_deletes_together(tmp_path):
    keep, new, gone = tmp_path / "keep.txt", tmp_path / "dir" / "new.txt", tmp_path / "gone.txt"
    keep.write_text("old")
    gone.write_text("bye")
    write_files_atomically({keep: "new", new: "fresh", gone: None})
    assert keep.read_text() == "new" and new.read_text() == "fresh" and not gone.exists()


def test_keeps_file_mode(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text("echo")
    script.chmod(0o755)
    write_files_atomically({script: "echo hi"})
    assert script.stat().st_mode & 0o777 == 0o755


def test_a_failure_on_the_third_of_four_files_restores_every_file(tmp_path, monkeypatch):
    files = [tmp_path / f"f{i}.txt" for i in range(4)]
    for i, path in enumerate(files[:3]):
        path.write_text(f"original {i}")
    real_replace = os.replace
    calls = []

    def flaky_replace(src, dst, **folder_fds):  # renames go through the folder's descriptor
        calls.append(dst)
        if len(calls) == 3:
            raise OSError(28, "No space left on device", dst)
        real_replace(src, dst, **folder_fds)

    monkeypatch.setattr(atomic.os, "replace", flaky_replace)
    with pytest.raises(FilesError) as failure:
        write_files_atomically({path: f"changed {i}" for i, path in enumerate(files)})
    assert file_error(failure.value).code.value == "failed" and "no file was changed" in file_error(failure.value).message
    assert [p.read_text() for p in files[:3]] == ["original 0", "original 1", "original 2"]
    assert not files[3].exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f0.txt", "f1.txt", "f2.txt"]


def test_a_file_replaced_since_its_identity_was_taken_is_stale_and_nothing_is_written(tmp_path):
    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.write_text("a = 1\n")
    second.write_text("b = 1\n")
    identities = {path: FileIdentity.of_path(path) for path in (first, second)}
    copy = tmp_path / "copy.py"
    copy.write_text("b = 1\n")  # the same bytes, another file, renamed over the staged one
    os.replace(copy, second)
    with pytest.raises(FilesError) as refused:
        write_files_atomically({first: "a = 2\n", second: "b = 2\n"}, root=tmp_path,
                               expected=identities)
    error = file_error(refused.value)
    assert error.code.value == "stale_edit" and "b.py" in error.message
    assert (first.read_text(), second.read_text()) == ("a = 1\n", "b = 1\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py"]
    write_files_atomically({first: "a = 2\n"}, root=tmp_path,
                           expected={first: identities[first]})  # the untouched one still is
    assert first.read_text() == "a = 2\n"
