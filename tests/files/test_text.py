"""files.text: which encoding a file is read in, and CRLF text matched as lines."""

from __future__ import annotations

import pytest

from jupyter_agent_tools.files.text import DecodedText, LineBreakText, line_endings


@pytest.mark.parametrize("data, encoding", [
    ("caf\xe9 \u2603".encode(), "utf-8"),
    (b"", "utf-8"),
    ("caf\xe9".encode("latin-1"), "latin-1"),  # no byte in 0x80-0x9F: Latin-1
    ("\u201cquoted\u201d \u20ac".encode("cp1252"), "cp1252"),
    (b"\x81 is not Windows-1252", "latin-1"),  # 0x81 has no Windows-1252 character
])
def test_the_encoding_a_file_is_read_in_gives_every_byte_back(data, encoding):
    decoded = DecodedText.of(data)
    assert decoded.encoding == encoding
    assert decoded.text.encode(encoding) == data


@pytest.mark.parametrize("text, endings", [
    ("a\nb\n", "lf"), ("a\r\nb\r\n", "crlf"), ("a\r\nb\n", "mixed"), ("no break", None),
    ("", None),
])
def test_line_endings(text, endings):
    assert line_endings(text) == endings


def test_matches_at_and_across_line_breaks_map_back_to_the_text():
    text = LineBreakText("a\r\nb\r\n\r\nc")
    assert text.plain == "a\nb\n\nc"
    assert text.starts("\n") == [1, 3, 4]
    assert [text.offset(at) for at in text.starts("\n")] == [1, 4, 6]
    assert text.replaced("b\n\nc", "B\nC", text.starts("b\n\nc")) == "a\r\nB\r\nC"
    assert text.replaced("\n", "|", text.starts("\n")) == "a|b||c"
    # A needle with CRLF is the same needle.
    assert text.starts("a\r\nb") == text.starts("a\nb") == [0]
