"""read, write, edit: examples of use and their errors."""

from __future__ import annotations


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
