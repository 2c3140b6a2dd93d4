"""Reading a small file from the kernel's caches on the event loop (`files.cached`), and `read`
answering from it exactly as from its usual read in a thread."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from jupyter_agent_tools.files import cached
from jupyter_agent_tools.files.cached import CachedLookup, NotCached, read_cached_beneath

pytestmark = pytest.mark.skipif(not cached.available(),
                                reason="needs Linux 5.12+ (openat2 with RESOLVE_CACHED)")


def evict(path: Path) -> None:
    """Drop the file's pages from memory (written back first), as if never read."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def test_a_small_file_in_memory_is_read_and_anything_else_is_left_to_the_thread(root: Path):
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("x = 1\n")
    assert read_cached_beneath(root, "src/a.py", 1000) == b"x = 1\n"
    assert read_cached_beneath(root, "src/../src/a.py", 1000) == b"x = 1\n"
    (root / "empty.txt").write_text("")
    assert read_cached_beneath(root, "empty.txt", 1000) == b""

    (root / "link.py").symlink_to(root / "src" / "a.py")
    (root / "folder-link").symlink_to(root / "src")
    (root / "big.txt").write_text("y" * 2000)
    os.mkfifo(root / "pipe")
    outside = root.parent / "outside.txt"
    outside.write_text("secret\n")
    for refused in ("link.py", "folder-link/a.py", "../outside.txt", str(outside), "big.txt",
                    "pipe", "src", "missing.py", "src/a.py\x00"):
        assert read_cached_beneath(root, refused, 1000) is None, refused


def test_a_file_not_in_memory_is_not_waited_for(root: Path):
    kind = subprocess.run(["stat", "-f", "-c", "%T", str(root)], capture_output=True,
                          text=True, check=True).stdout.strip()
    if kind == "tmpfs":
        pytest.skip("a tmpfs file is always in memory")
    big = root / "big.txt"
    big.write_text("y" * 20_000)
    assert read_cached_beneath(root, "big.txt", 65_536) == b"y" * 20_000
    evict(big)
    assert read_cached_beneath(root, "big.txt", 65_536) is None


@pytest.fixture
def thread_hops(thread_hops_of) -> list[str]:
    """The functions `read` sends to a worker thread."""
    return thread_hops_of("jupyter_agent_tools.tools.files")


FILES = {
    "plain.py": "".join(f"value_{i} = {i}\n" for i in range(40)).encode(),
    "crlf.txt": b"one\r\ntwo\r\n",
    "latin.txt": "caf\u00e9\n".encode("cp1252"),
    "empty.txt": b"",
    "binary.bin": b"\x00\x01\x02",
    "sub/deeper.md": b"# title\n\ntext\n",
}


async def test_read_answers_from_memory_as_from_its_thread(runtime_factory, root: Path,
                                                           thread_hops):
    for name, data in FILES.items():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_bytes(data)
    (root / "link.py").symlink_to(root / "plain.py")
    on_loop = await runtime_factory().create_run(cwd="sub")
    in_thread = await runtime_factory({"Runtime": {"max_loop_read_bytes": 0}}).create_run(
        cwd="sub")
    for path, args in [(f"../{name}", {}) for name in FILES] + [
            ("deeper.md", {"offset": 2, "limit": 1}), ("../link.py", {}),
            ("../missing.py", {}), ("../sub", {})]:
        thread_hops.clear()
        fast = await on_loop.call("read", {"path": path, **args})
        hops = list(thread_hops)
        slow = await in_thread.call("read", {"path": path, **args})
        assert (fast.ok, fast.text, fast.data, fast.code) == \
            (slow.ok, slow.text, slow.data, slow.code), path
        # A text file of the root read from memory; a link, a binary or missing file, a
        # folder: the usual read in a thread, which says what is wrong.
        expected = [] if fast.ok and path != "../link.py" else ["_read_plain_file"]
        assert hops == expected, path


def test_a_lookup_answers_from_the_caches_as_stat_does(root: Path):
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("x = 1\n")
    (root / "link.py").symlink_to(root / "src" / "a.py")
    (root / "folder-link").symlink_to(root / "src")
    outside = root.parent / "outside.txt"
    outside.write_text("secret\n")
    lookup = CachedLookup(root)
    for present in (root, root / "src", root / "src" / "a.py"):
        found, expected = lookup(present), os.stat(present)
        assert found is not None and (found.st_ino, found.st_mode, found.st_size,
                                      found.st_mtime_ns) == (expected.st_ino, expected.st_mode,
                                                             expected.st_size,
                                                             expected.st_mtime_ns), present
    absent = root / "src" / "missing.py"
    with pytest.raises(NotCached):  # never looked up: only the disk can say
        lookup(absent)
    with pytest.raises(FileNotFoundError):
        os.stat(absent)  # the kernel now knows it is absent
    assert lookup(absent) is None
    # A link (the thread's os.stat follows it), anything not beneath the root, a NUL.
    for refused in (root / "link.py", root / "folder-link" / "a.py", outside,
                    root / "src" / ".." / ".." / "outside.txt", Path("/etc/passwd"),
                    root / "src" / "a.py\x00"):
        with pytest.raises(NotCached):
            lookup(refused)
