"""read, write, edit: examples of use and their errors."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

FILE_TOOLS = {
    "read": lambda path: {"path": path},
    "write": lambda path: {"path": path, "content": "new\n"},
    "edit": lambda path: {"path": path, "old_string": "old", "new_string": "new"},
}


async def test_read_numbers_lines_and_pages(runtime, root):
    (root / "poem.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    run = await runtime.create_run()
    result = await run.call("read", {"path": "poem.txt", "offset": 4, "limit": 2})
    assert result.ok
    assert result.text.splitlines()[:2] == ["4\tline 4", "5\tline 5"]
    assert "offset=6" in result.text
    assert result.data == {"path": "poem.txt", "start_line": 4, "end_line": 5, "total_lines": 10}


async def test_read_refuses_binary_and_missing_files(runtime, root):
    (root / "blob.bin").write_bytes(b"\x00\x01\x02")
    run = await runtime.create_run()
    binary = await run.call("read", {"path": "blob.bin"})
    assert binary.code == "failed" and "binary" in binary.error["message"]
    missing = await run.call("read", {"path": "nope.txt"})
    assert missing.code == "not_found"
    assert (await run.call("read", {"path": "x", "offset": 0})).code == "invalid_arguments"


async def test_read_refuses_oversized_files(runtime, root):
    runtime.read_max_bytes = 100
    (root / "big.txt").write_text("x" * 200)
    run = await runtime.create_run()
    result = await run.call("read", {"path": "big.txt"})
    assert result.code == "failed" and "limit" in result.error["message"]


async def test_write_creates_parents_and_reports(runtime, root):
    run = await runtime.create_run()
    result = await run.call("write", {"path": "pkg/mod.py", "content": "x = 1\n"})
    assert result.ok and result.data["created"] is True
    assert (root / "pkg" / "mod.py").read_text() == "x = 1\n"
    again = await run.call("write", {"path": "pkg/mod.py", "content": "x = 2\n"})
    assert again.data["created"] is False and again.text.startswith("Overwrote")
    assert (await run.call("write", {"path": "pkg", "content": ""})).code == "invalid_arguments"


async def test_edit_requires_a_unique_match_unless_replace_all(runtime, root):
    target = root / "a.py"
    target.write_text("x = 1\ny = 1\nx = 1\n")
    run = await runtime.create_run()
    ambiguous = await run.call("edit", {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"})
    assert ambiguous.code == "invalid_arguments"
    assert "2 times" in ambiguous.error["message"] and "lines 1, 3" in ambiguous.error["message"]
    assert target.read_text() == "x = 1\ny = 1\nx = 1\n"
    missing = await run.call("edit", {"path": "a.py", "old_string": "z = 1", "new_string": "z"})
    assert missing.code == "not_found"
    unique = await run.call("edit", {"path": "a.py", "old_string": "y = 1", "new_string": "y = 3"})
    assert unique.ok and target.read_text() == "x = 1\ny = 3\nx = 1\n"
    everywhere = await run.call(
        "edit", {"path": "a.py", "old_string": "x = 1", "new_string": "x = 9", "replace_all": True}
    )
    assert everywhere.data["replacements"] == 2 and target.read_text() == "x = 9\ny = 3\nx = 9\n"


async def test_edit_validates_its_arguments(runtime):
    run = await runtime.create_run()
    for args in [{"path": "a"}, {"path": "a", "old_string": "", "new_string": "b"},
                 {"path": "a", "old_string": "a", "new_string": "b", "replace_all": "often"}]:
        assert (await run.call("edit", args)).code == "invalid_arguments"


# What the operating system refuses, and how each file tool answers it: a contract code,
# the name the agent used, and never "a bug in the tool".
OS_REFUSALS = [
    ("x" * 300, "invalid_arguments", "too long"),
    ("/".join(["folder"] * 700), "invalid_arguments", "too long"),
    ("notes.txt/inner.txt", "not_found", "not a folder"),
    ("folder", "invalid_arguments", "is a folder"),
    ("pipe", "invalid_arguments", "not a regular file"),
]


@pytest.mark.parametrize("tool", sorted(FILE_TOOLS))
@pytest.mark.parametrize(("path", "code", "says"), OS_REFUSALS)
async def test_os_refusals_are_contract_errors(runtime, root, tool, path, code, says):
    (root / "notes.txt").write_text("old\n")
    (root / "folder").mkdir()
    os.mkfifo(root / "pipe")  # opening it for reading would hang a naive tool
    run = await runtime.create_run()
    result = await run.call(tool, FILE_TOOLS[tool](path))
    assert result.code == code and says in result.error["message"], result.text
    assert "bug in the tool" not in result.text
    assert (root / "notes.txt").read_text() == "old\n"


# Root ignores file permissions: the refusal is real only for another user.
# The interpreter's own files may be unreadable to that user: import first, then drop.
AS_NOBODY = """
import asyncio, json, os, sys
from jupyter_agent_tools import Runtime

async def main():
    runtime = Runtime(root_dir=sys.argv[1], resource_providers=[])
    run = await runtime.create_run()
    await run.call("read", {"path": "."})  # loads what a call needs, while still allowed
    os.setgid(65534); os.setuid(65534)
    answers = {}
    for tool, args in json.loads(sys.argv[2]).items():
        result = await run.call(tool, args)
        answers[tool] = [result.code, result.error and result.error["message"]]
    await runtime.shutdown()
    print(json.dumps(answers))

asyncio.run(main())
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another user")
def test_files_the_server_user_may_not_touch_are_permission_denied():
    with tempfile.TemporaryDirectory() as top:
        root = Path(top)
        root.chmod(0o755)
        (root / "locked.txt").write_text("old\n")
        (root / "locked.txt").chmod(0o000)
        (root / "sealed").mkdir(mode=0o555)
        calls = {**{tool: make("locked.txt") for tool, make in FILE_TOOLS.items()},
                 "apply_patch": {"patch": "--- /dev/null\n+++ b/sealed/new.txt\n@@ -0,0 +1 @@\n+x\n"}}
        done = subprocess.run([sys.executable, "-c", AS_NOBODY, str(root), json.dumps(calls)],
                              capture_output=True, text=True, timeout=120, check=True)
        answers = json.loads(done.stdout.splitlines()[-1])
        for tool, (code, message) in answers.items():
            assert code == "permission_denied", (tool, message)
            assert "server's user" in message and "permissions" in message
        assert (root / "locked.txt").stat().st_mode & 0o777 == 0
        assert list((root / "sealed").iterdir()) == []


async def test_write_gives_new_files_the_usual_mode_and_keeps_existing_modes(runtime, root):
    previous = os.umask(0o022)
    try:
        run = await runtime.create_run()
        (root / "tool.sh").write_text("echo\n")
        (root / "tool.sh").chmod(0o755)
        assert (await run.call("write", {"path": "fresh.txt", "content": "x"})).ok
        assert (await run.call("edit", {"path": "tool.sh", "old_string": "echo",
                                        "new_string": "echo hi"})).ok
    finally:
        os.umask(previous)
    assert (root / "fresh.txt").stat().st_mode & 0o777 == 0o644
    assert (root / "tool.sh").stat().st_mode & 0o777 == 0o755


async def test_a_failed_write_names_the_file_and_leaves_no_temporary(runtime, root):
    run = await runtime.create_run()
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, hard))  # a real "file too large"
    try:
        result = await run.call("write", {"path": "pkg/f4.py", "content": "y" * 4096})
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
    assert result.code == "failed"
    assert result.error["message"].startswith("Writing pkg/f4.py failed (File too large)")
    assert ".tmp" not in result.text
    assert list(root.iterdir()) == []  # neither the file, its temporary, nor its folder


async def test_links_that_stay_inside_the_root_still_work(runtime, root):
    (root / "real").mkdir()
    (root / "real" / "mod.py").write_text("old\n")
    os.symlink(root / "real", root / "alias")
    os.symlink(root / "real" / "mod.py", root / "mod_link.py")
    run = await runtime.create_run()
    assert "old" in (await run.call("read", {"path": "alias/mod.py"})).text
    edited = await run.call("edit", {"path": "mod_link.py", "old_string": "old", "new_string": "new"})
    assert edited.ok and edited.data["path"] == "real/mod.py"  # results name the real file
    assert (await run.call("write", {"path": "alias/added.py", "content": "x\n"})).ok
    assert (root / "real" / "mod.py").read_text() == "new\n"
    assert (root / "real" / "added.py").read_text() == "x\n"
    assert (root / "mod_link.py").is_symlink() and (root / "alias").is_symlink()
