"""Files keep their encoding and line endings through read, edit, write and apply_patch."""

from __future__ import annotations

LATIN1 = "# Caf\xe9 cr\xe8me: \xbd price\nname = 'M\xfcller'\nprice = 3\n".encode("latin-1")
# Windows-1252 only: curly quotes and the euro sign are in 0x80-0x9F, C1 controls in Latin-1.
WINDOWS = "title = \u201cRésumé\u201d\ncost = '5 \u20ac'\n".encode("cp1252")


async def test_read_names_an_encoding_that_is_not_utf8(runtime, root):
    (root / "legacy.py").write_bytes(LATIN1)
    (root / "windows.py").write_bytes(WINDOWS)
    run = await runtime.create_run()
    latin = await run.call("read", {"path": "legacy.py"})
    assert latin.ok and "1\t# Caf\xe9 cr\xe8me: \xbd price" in latin.text
    assert latin.data["encoding"] == "latin-1" and "encoding: Latin-1" in latin.text
    windows = await run.call("read", {"path": "windows.py"})
    assert windows.data["encoding"] == "cp1252"
    assert "1\ttitle = \u201cRésumé\u201d" in windows.text and "Windows-1252" in windows.text


async def test_edit_writes_a_latin1_file_back_in_latin1(runtime, root):
    path = root / "legacy.py"
    path.write_bytes(LATIN1)
    run = await runtime.create_run()
    result = await run.call("edit", {"path": "legacy.py", "old_string": "price = 3",
                                     "new_string": "price = 4  # \xe0 d\xe9finir"})
    assert result.ok, result.error
    assert "kept its Latin-1 (ISO-8859-1) encoding" in result.text
    # The untouched bytes are the very same, and the new text is in Latin-1 too.
    assert path.read_bytes() == LATIN1.replace(b"price = 3",
                                               "price = 4  # \xe0 d\xe9finir".encode("latin-1"))


async def test_edit_refuses_a_character_the_encoding_cannot_hold(runtime, root):
    path = root / "legacy.py"
    path.write_bytes(LATIN1)
    run = await runtime.create_run()
    result = await run.call("edit", {"path": "legacy.py", "old_string": "price = 3",
                                     "new_string": "price = '3 \u20ac'"})
    assert result.code == "failed"
    message = result.error["message"]
    assert "legacy.py is Latin-1 (ISO-8859-1) text" in message and "'\u20ac'" in message
    assert "nothing was written" in message
    assert path.read_bytes() == LATIN1
    # Windows-1252 has the euro sign: the same edit of a Windows-1252 file is kept in it.
    (root / "windows.py").write_bytes(WINDOWS)
    euro = await run.call("edit", {"path": "windows.py", "old_string": "cost = '5 \u20ac'",
                                   "new_string": "cost = '6 \u20ac'"})
    assert euro.ok and (root / "windows.py").read_bytes() == WINDOWS.replace(b"5 \x80", b"6 \x80")


async def test_write_apply_patch_keep_the_encoding_and_new_files_are_utf8(runtime, root):
    path = root / "legacy.py"
    path.write_bytes(LATIN1)
    run = await runtime.create_run()
    patch = ("--- a/legacy.py\n+++ b/legacy.py\n@@ -2,2 +2,2 @@\n name = 'M\xfcller'\n"
             "-price = 3\n+price = 5  # r\xe9duit\n")
    patched = await run.call("apply_patch", {"patch": patch})
    assert patched.ok, patched.error
    assert path.read_bytes() == LATIN1.replace(b"price = 3", "price = 5  # r\xe9duit"
                                               .encode("latin-1"))
    written = await run.call("write", {"path": "legacy.py", "content": "x = '\xe9t\xe9'\n"})
    assert written.ok and path.read_bytes() == "x = '\xe9t\xe9'\n".encode("latin-1")
    refused = await run.call("write", {"path": "legacy.py", "content": "x = '\u2603'\n"})
    assert refused.code == "failed" and "Latin-1" in refused.error["message"]
    created = await run.call("write", {"path": "new.py", "content": "x = '\u2603'\n"})
    assert created.ok and (root / "new.py").read_bytes() == "x = '\u2603'\n".encode()


CRLF_TEXT = b"def f():\r\n    a = 1\r\n    return a\r\n\r\nprint(f())\r\n"


async def test_read_marks_a_crlf_file(runtime, root):
    (root / "win.py").write_bytes(CRLF_TEXT)
    (root / "unix.py").write_bytes(CRLF_TEXT.replace(b"\r\n", b"\n"))
    run = await runtime.create_run()
    result = await run.call("read", {"path": "win.py"})
    assert result.ok and result.data["line_endings"] == "crlf"
    assert "line endings: CRLF" in result.text and "\r" not in result.text
    plain = await run.call("read", {"path": "unix.py"})
    assert plain.data["line_endings"] == "lf" and "line endings" not in plain.text


async def test_edit_matches_lf_old_string_in_a_crlf_file_and_writes_crlf(runtime, root):
    path = root / "win.py"
    path.write_bytes(CRLF_TEXT)
    run = await runtime.create_run()
    # Copied from read's output: lines joined with \n.
    result = await run.call("edit", {"path": "win.py",
                                     "old_string": "    a = 1\n    return a\n",
                                     "new_string": "    a = 1\n    b = 2\n    return a + b\n"})
    assert result.ok, result.error
    assert "kept its CRLF line endings" in result.text
    assert path.read_bytes() == (b"def f():\r\n    a = 1\r\n    b = 2\r\n    return a + b\r\n"
                                 b"\r\nprint(f())\r\n")
    # An old_string written with \r\n matches as well; one-line edits touch no line break.
    again = await run.call("edit", {"path": "win.py", "old_string": "b = 2\r\n    return",
                                    "new_string": "b = 3\n    return"})
    assert again.ok and b"    b = 3\r\n    return a + b\r\n" in path.read_bytes()
    assert b"\n" not in path.read_bytes().replace(b"\r\n", b"")


async def test_edit_in_a_crlf_file_reports_occurrences_by_line(runtime, root):
    (root / "win.txt").write_bytes(b"x\r\ny\r\nx\r\ny\r\n")
    run = await runtime.create_run()
    twice = await run.call("edit", {"path": "win.txt", "old_string": "x\ny", "new_string": "z"})
    assert twice.code == "invalid_arguments" and "lines 1, 3" in twice.error["message"]
    missing = await run.call("edit", {"path": "win.txt", "old_string": "y\nz", "new_string": "q"})
    assert missing.code == "not_found"
    everywhere = await run.call("edit", {"path": "win.txt", "old_string": "x\ny",
                                         "new_string": "a\nb", "replace_all": True})
    assert everywhere.data["replacements"] == 2
    assert (root / "win.txt").read_bytes() == b"a\r\nb\r\na\r\nb\r\n"


async def test_mixed_endings_take_the_break_of_the_replaced_text(runtime, root):
    path = root / "mixed.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\nfour\n")
    run = await runtime.create_run()
    read = await run.call("read", {"path": "mixed.txt"})
    assert read.data["line_endings"] == "mixed" and "mixed CRLF and LF" in read.text
    crlf_part = await run.call("edit", {"path": "mixed.txt", "old_string": "one\ntwo",
                                        "new_string": "one\n1.5\ntwo"})
    lf_part = await run.call("edit", {"path": "mixed.txt", "old_string": "four",
                                      "new_string": "four\nfive"})
    assert crlf_part.ok and lf_part.ok
    assert path.read_bytes() == b"one\r\n1.5\r\ntwo\r\nthree\nfour\nfive\n"
    # A match across both kinds of break is found; its new lines take the first one's.
    across = await run.call("edit", {"path": "mixed.txt", "old_string": "two\nthree\nfour",
                                     "new_string": "2\n3"})
    assert across.ok and path.read_bytes() == b"one\r\n1.5\r\n2\r\n3\nfive\n"


async def test_apply_patch_keeps_crlf_line_endings(runtime, root):
    path = root / "win.py"
    path.write_bytes(CRLF_TEXT)
    run = await runtime.create_run()
    patch = ("--- a/win.py\n+++ b/win.py\n@@ -1,3 +1,4 @@\n def f():\n     a = 1\n"
             "+    a += 1\n     return a\n")
    result = await run.call("apply_patch", {"patch": patch})
    assert result.ok, result.error
    assert path.read_bytes() == CRLF_TEXT.replace(b"a = 1\r\n", b"a = 1\r\n    a += 1\r\n")
