"""Containment at the moment of use: a swap after the path was checked redirects nothing."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys

import pytest

from jupyter_agent_tools.files import (
    FileIdentity,
    FilesError,
    read_text_inside,
    resolve_inside,
    write_files_atomically,
)
from jupyter_agent_tools.files.contained import FolderReader
from jupyter_agent_tools.files.errors import FileMissing, LinkSwapped, OutsideRoot
from jupyter_agent_tools.runtime.file_errors import file_error


@pytest.fixture
def tree(tmp_path):
    """root/pkg/f.py inside; outside/pkg/f.py an identical copy the attacker links to."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    for top in (root, outside):
        (top / "pkg").mkdir(parents=True)
        (top / "pkg" / "f.py").write_text("x = 1\n")
    return root, outside


def swap_folder_for_link(root, outside):
    os.rename(root / "pkg", root / "pkg.real")
    os.symlink(outside / "pkg", root / "pkg")


def test_a_folder_swapped_for_a_link_after_the_check_is_refused(tree):
    root, outside = tree
    checked = resolve_inside(root, root, "pkg/f.py")
    swap_folder_for_link(root, outside)
    with pytest.raises(FilesError) as refused:
        write_files_atomically({checked: "x = 2\n"}, root=root)
    assert file_error(refused.value).code.value == "path_outside_root"
    assert "pkg/f.py" in file_error(refused.value).message and "symbolic link" in file_error(refused.value).message
    assert (outside / "pkg" / "f.py").read_text() == "x = 1\n"
    assert (root / "pkg.real" / "f.py").read_text() == "x = 1\n"
    assert sorted(os.listdir(outside / "pkg")) == ["f.py"]


def test_a_file_swapped_for_a_link_is_neither_read_nor_written(tree):
    root, outside = tree
    checked = resolve_inside(root, root, "pkg/f.py")
    os.unlink(checked)
    os.symlink(outside / "pkg" / "f.py", checked)
    with pytest.raises(FilesError) as read:
        read_text_inside(root, checked, 1000)
    assert file_error(read.value).code.value == "path_outside_root"
    with pytest.raises(FilesError) as written:
        write_files_atomically({checked: "x = 2\n"}, root=root,
                               expected={checked: FileIdentity.of_path(outside / "pkg" / "f.py")})
    assert file_error(written.value).code.value == "path_outside_root"
    assert (outside / "pkg" / "f.py").read_text() == "x = 1\n"


def test_one_refused_target_writes_no_other(tree):
    root, outside = tree
    (root / "a.py").write_text("a = 1\n")
    targets = {resolve_inside(root, root, "a.py"): "a = 2\n",
               resolve_inside(root, root, "new/b.py"): "b = 1\n",
               resolve_inside(root, root, "pkg/f.py"): "x = 2\n"}
    swap_folder_for_link(root, outside)
    with pytest.raises(FilesError):
        write_files_atomically(targets, root=root)
    assert (root / "a.py").read_text() == "a = 1\n"
    assert not (root / "new").exists()  # the folder it created is gone again
    assert (outside / "pkg" / "f.py").read_text() == "x = 1\n"
    assert sorted(os.listdir(root)) == ["a.py", "pkg", "pkg.real"]


# Swaps root/pkg and root/pkg.swap (a link to the outside copy) atomically, in a loop, in
# another process: renameat2(RENAME_EXCHANGE), so pkg always exists, as a folder or a link.
SWAPPER = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
os.chdir(sys.argv[1])
print("ready", flush=True)
while True:
    if libc.renameat2(AT_FDCWD, b"pkg", AT_FDCWD, b"pkg.swap", RENAME_EXCHANGE) != 0:
        sys.exit(ctypes.get_errno())
"""


def test_reads_and_writes_racing_a_folder_swap_never_reach_outside(tree):
    root, outside = tree
    (outside / "pkg" / "f.py").write_text("outside\n")
    checked = resolve_inside(root, root, "pkg/f.py")
    os.symlink(outside / "pkg", root / "pkg.swap")
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(root)],
                               stdout=subprocess.PIPE, text=True)
    outcomes: dict[str, int] = {}

    def write(count: int) -> str:
        write_files_atomically({checked: f"x = {count}\n"}, root=root)
        return "written"

    def read(_: int) -> str:
        return "read " + read_text_inside(root, checked, 1000)[:1]

    def read_in_a_batch(_: int) -> str:  # as a search worker: the folder opened afresh
        with FolderReader(root) as reader:
            return "read " + reader.read_bytes(str(checked))[:1].decode()

    try:
        assert swapper.stdout is not None and swapper.stdout.readline() == "ready\n"
        for count in range(2000):  # a race lost one time in a thousand still shows
            for use in (write, read, read_in_a_batch):
                try:
                    outcome = use(count)
                except FilesError as error:
                    outcome = file_error(error).code.value
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
    finally:
        swapper.kill()
        swapper.wait()
    # Each attempt used the file inside, or was refused as a link swap: never "missing" (a
    # lookup racing the rename), never the outside file.
    assert {"written", "read x", "path_outside_root"} <= set(outcomes), outcomes
    assert set(outcomes) <= {"written", "read x", "path_outside_root"}, outcomes
    assert (outside / "pkg" / "f.py").read_text() == "outside\n"
    assert sorted(os.listdir(outside / "pkg")) == ["f.py"]


def test_new_files_get_the_umask_mode_and_existing_ones_keep_theirs(tmp_path):
    previous = os.umask(0o022)
    try:
        new, script = tmp_path / "new.txt", tmp_path / "run.sh"
        script.write_text("echo")
        script.chmod(0o750)
        write_files_atomically({new: "hello", script: "echo hi"}, root=tmp_path)
        os.umask(0o027)
        write_files_atomically({tmp_path / "private.txt": "x"}, root=tmp_path)
    finally:
        os.umask(previous)
    assert new.stat().st_mode & 0o777 == 0o644
    assert script.stat().st_mode & 0o777 == 0o750
    assert (tmp_path / "private.txt").stat().st_mode & 0o777 == 0o640


def test_a_real_write_failure_names_the_file_not_its_temporary(tmp_path):
    files = [tmp_path / f"f{i}.py" for i in range(1, 5)]
    for path in files[:3]:
        path.write_text("old\n")
    # A real disk refusal without mocks: files over 1 kB are too big for this process.
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, hard))
    try:
        with pytest.raises(FilesError) as failed:
            write_files_atomically({**{p: "new\n" for p in files[:3]}, files[3]: "y" * 4096},
                                   root=tmp_path)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
    message = file_error(failed.value).message
    assert file_error(failed.value).code.value == "failed"
    assert message.startswith("Writing f4.py failed (File too large); no file was changed.")
    assert ".tmp" not in message
    assert [p.read_text() for p in files[:3]] == ["old\n"] * 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f1.py", "f2.py", "f3.py"]


def test_reads_refuse_folders_pipes_and_missing_files_by_name(tmp_path):
    (tmp_path / "dir").mkdir()
    os.mkfifo(tmp_path / "pipe")
    cases = {"dir": "invalid_arguments", "pipe": "invalid_arguments",
             "gone.py": "not_found", "dir/gone/x.py": "not_found"}
    for name, code in cases.items():
        with pytest.raises(FilesError) as refused:
            read_text_inside(tmp_path, tmp_path / name, 1000)
        assert file_error(refused.value).code.value == code and name in file_error(refused.value).message


def test_a_path_too_long_for_the_os_is_invalid_arguments(tmp_path):
    for path in ("x" * 300, "/".join(["abcdefgh"] * 600)):
        with pytest.raises(FilesError) as refused:
            resolve_inside(tmp_path, tmp_path, path)
        assert file_error(refused.value).code.value == "invalid_arguments"
        assert "too long" in file_error(refused.value).message


def test_a_folder_reader_reads_as_read_bytes_inside_does(tree):
    root, outside = tree
    (outside / "pkg" / "f.py").write_text("outside\n")
    (root / "top.py").write_text("top\n")
    with FolderReader(root, max_folders=1) as reader:
        assert reader.read_bytes(str(root / "pkg" / "f.py")) == b"x = 1\n"
        assert reader.read_bytes(str(root / "top.py")) == b"top\n"  # pkg's descriptor let go
        swap_folder_for_link(root, outside)
        with pytest.raises(LinkSwapped):  # opened again, from the root: the link is refused
            reader.read_bytes(str(root / "pkg" / "f.py"))
        with pytest.raises(FileMissing):
            reader.read_bytes(str(root / "gone.py"))
        with pytest.raises(OutsideRoot):
            reader.read_bytes(str(outside / "pkg" / "f.py"))
