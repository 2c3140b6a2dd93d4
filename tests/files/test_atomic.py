"""The atomic multi-file writer: all files change, or none."""

from __future__ import annotations

import fnmatch
import os
import subprocess
import sys
from pathlib import Path

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


_CRASHING_WRITE = """
import os, signal, sys
from pathlib import Path
from jupyter_agent_tools.files import write_files_atomically

def crash(*args, **kwargs):  # the process dies between writing the temp files and renaming
    os.kill(os.getpid(), signal.SIGKILL)

os.replace = crash
folder = Path(sys.argv[1])
write_files_atomically({folder / "a.txt": "new a", folder / "b.txt": "new b"})
"""


def _scratch(folder):
    return sorted(name for name in os.listdir(folder) if atomic.SCRATCH_NAME.fullmatch(name))


def test_a_crashed_writes_leftovers_are_removed_by_a_later_write_there(tmp_path, monkeypatch):
    (tmp_path / "a.txt").write_text("old a")
    (tmp_path / "b.txt").write_text("old b")
    # A user's own files that look alike are never touched.
    lookalikes = [".a.txt.1234abcd.bak", "a.12345678.tmp", ".a.txt.1234ABCD.tmp", "notes.tmp"]
    for name in lookalikes:
        (tmp_path / name).write_text("mine")
    crashed = subprocess.run([sys.executable, "-c", _CRASHING_WRITE, str(tmp_path)],
                             check=False, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert crashed.returncode == -9
    left = _scratch(tmp_path)
    # Two temp copies and the first file's backup link, all named so walks can skip them.
    assert sorted(name.rsplit(".", 1)[1] for name in left) == ["orig", "tmp", "tmp"]
    assert all(any(fnmatch.fnmatchcase(name, glob) for glob in atomic.SCRATCH_GLOBS)
               for name in left)
    assert (tmp_path / "a.txt").read_text() == "old a"

    atomic._swept.clear()
    write_files_atomically({tmp_path / "c.txt": "c"})
    assert _scratch(tmp_path) == left  # too recent: they may belong to a write in progress

    monkeypatch.setattr(atomic, "STALE_SCRATCH_SECONDS", 0.0)
    write_files_atomically({tmp_path / "c.txt": "c2"})
    assert _scratch(tmp_path) == left  # this folder was looked through a moment ago
    atomic._swept.clear()
    write_files_atomically({tmp_path / "c.txt": "c3"})
    assert _scratch(tmp_path) == []
    assert all((tmp_path / name).read_text() == "mine" for name in lookalikes)
    assert (tmp_path / "a.txt").read_text() == "old a" and (tmp_path / "c.txt").read_text() == "c3"


def test_stale_scratch_that_is_a_link_or_folder_is_left_alone(tmp_path):
    (tmp_path / ".x.py.0123abcd.tmp").mkdir()
    (tmp_path / ".y.py.0123abcd.orig").symlink_to("/etc/passwd")
    (tmp_path / ".z.py.0123abcd.tmp").write_text("partial")
    folder = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert atomic.remove_stale_scratch(folder, older_than=0) == [".z.py.0123abcd.tmp"]
    finally:
        os.close(folder)
    assert (tmp_path / ".x.py.0123abcd.tmp").is_dir()
    assert (tmp_path / ".y.py.0123abcd.orig").is_symlink()


def test_text_is_written_in_the_existing_files_encoding_or_nothing_is(tmp_path):
    latin, utf8 = tmp_path / "latin.txt", tmp_path / "utf8.txt"
    latin.write_bytes("caf\xe9\n".encode("latin-1"))
    utf8.write_text("caf\xe9\n")
    write_files_atomically({latin: "caf\xe9 cr\xe8me\n", utf8: "caf\xe9 cr\xe8me\n"})
    assert latin.read_bytes() == "caf\xe9 cr\xe8me\n".encode("latin-1")
    assert utf8.read_bytes() == "caf\xe9 cr\xe8me\n".encode()
    # A snowman has no Latin-1 byte: neither file changes, and no scratch file is left.
    with pytest.raises(FilesError) as refused:
        write_files_atomically({utf8: "\u2603\n", latin: "\u2603\n"}, root=tmp_path)
    assert str(refused.value) == ("latin.txt: is Latin-1 (ISO-8859-1) text, which cannot hold "
                                  "'\u2603' (U+2603, line 1 of the new text)")
    assert utf8.read_text() == "caf\xe9 cr\xe8me\n" and _scratch(tmp_path) == []
    assert file_error(refused.value).code == "failed"
