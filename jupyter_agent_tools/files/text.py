"""Text files as the tools read and write them: their encoding and their line endings.

A file is decoded as UTF-8 when its bytes are valid UTF-8, else as Windows-1252 when it has
bytes in 0x80-0x9F and they decode as it, else as Latin-1 (which decodes any bytes). Both fallbacks give every byte back on encoding, so a file written in the encoding
it was read in keeps every byte the change did not touch; the atomic writer does that for
every text it writes over an existing file, or refuses (NotEncodable).

Line endings are the file's own: a text with CRLF line breaks is matched and changed as
lines (`LineBreakText`), and new lines take the file's break.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Literal

from .errors import NotEncodable

UTF8 = "utf-8"
# Python's codec names, and how messages name them.
ENCODING_NAMES = {UTF8: "UTF-8", "cp1252": "Windows-1252", "latin-1": "Latin-1 (ISO-8859-1)"}

LineEndings = Literal["lf", "crlf", "mixed"]
CRLF = "\r\n"


_C1_BYTES = re.compile(b"[\x80-\x9f]")


def detect_encoding(data: bytes) -> str:
    """The codec a file's bytes are read with: utf-8; else cp1252 when it has bytes in
    0x80-0x9F (Latin-1's unused control codes, Windows-1252's quotes, dashes and euro sign)
    and they decode as it; else latin-1."""
    try:
        data.decode(UTF8)
    except UnicodeDecodeError:
        pass
    else:
        return UTF8
    if _C1_BYTES.search(data):
        try:
            data.decode("cp1252")
        except UnicodeDecodeError:
            return "latin-1"
        return "cp1252"
    return "latin-1"


@dataclass(frozen=True)
class DecodedText:
    """A text file's content and the codec it was read with (a key of ENCODING_NAMES)."""

    text: str
    encoding: str

    @classmethod
    def of(cls, data: bytes) -> DecodedText:
        encoding = detect_encoding(data)
        return cls(data.decode(encoding), encoding)

    @property
    def encoding_name(self) -> str:
        return ENCODING_NAMES[self.encoding]


def encode_text(text: str, encoding: str, shown: str) -> bytes:
    """`text` in `encoding`; NotEncodable naming the first character it cannot hold."""
    try:
        return text.encode(encoding)
    except UnicodeEncodeError as exc:
        line = text.count("\n", 0, exc.start) + 1
        raise NotEncodable(shown, ENCODING_NAMES.get(encoding, encoding),
                           exc.object[exc.start], line) from None


def line_endings(text: str) -> LineEndings | None:
    """The file's line breaks: all CRLF, all LF, mixed, or None when it has none."""
    crlf = text.count(CRLF)
    lf = text.count("\n") - crlf
    if not crlf:
        return "lf" if lf else None
    return "mixed" if lf else "crlf"


class LineBreakText:
    """A text searched with CRLF and LF as the same line break.

    `plain` is the text with every CRLF as LF (what `read` shows): a needle is found there
    and its span mapped back to the text, so an `old_string` written with `\\n` matches
    CRLF lines. A replacement's line breaks are the file's: CRLF in a CRLF file; in a file
    with mixed endings, the break of the text it replaces (the first inside it, else the
    one ending its line).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.plain = text.replace(CRLF, "\n")
        self.endings = line_endings(text)
        # Where each LF of `plain` that was a CRLF stands in `plain`, ascending.
        self._crlf_at: list[int] = []
        if len(self.plain) != len(text):
            at = text.find(CRLF)
            while at != -1:
                self._crlf_at.append(at - len(self._crlf_at))
                at = text.find(CRLF, at + 2)

    def offset(self, plain_offset: int) -> int:
        """The offset in `text` of an offset in `plain`."""
        return plain_offset + bisect.bisect_left(self._crlf_at, plain_offset)

    def starts(self, needle: str) -> list[int]:
        """Where the non-overlapping occurrences of `needle` start in `plain`; `needle`'s own
        CRLFs count as LF."""
        needle = needle.replace(CRLF, "\n")
        starts: list[int] = []
        at = self.plain.find(needle)
        while at != -1:
            starts.append(at)
            at = self.plain.find(needle, at + len(needle))
        return starts

    def replaced(self, old: str, new: str, starts: list[int]) -> str:
        """The text with `old` at each of `starts` (from `self.starts(old)`) made `new`."""
        old_length = len(old.replace(CRLF, "\n"))
        new = new.replace(CRLF, "\n")
        pieces: list[str] = []
        done = 0
        for start in starts:
            begin, end = self.offset(start), self.offset(start + old_length)
            pieces.append(self.text[done:begin])
            pieces.append(new.replace("\n", self._break_for(begin, end)) if "\n" in new
                          else new)
            done = end
        pieces.append(self.text[done:])
        return "".join(pieces)

    def _break_for(self, begin: int, end: int) -> str:
        """The line break new lines get in place of text[begin:end]."""
        if self.endings != "mixed":
            return CRLF if self.endings == "crlf" else "\n"
        newline = self.text.find("\n", begin, end)
        if newline == -1:
            newline = self.text.find("\n", end)
        if newline == -1:
            newline = self.text.rfind("\n", 0, begin)
        return CRLF if newline > 0 and self.text[newline - 1] == "\r" else "\n"
