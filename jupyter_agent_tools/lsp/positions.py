"""Positions as an agent gives them (line + symbol) and as the LSP wants them (UTF-16 columns)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from lsprotocol import types

from .errors import LineOutOfRange, OccurrenceOutOfRange, SymbolNotOnLine

_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


def utf16_column(line: str, index: int) -> int:
    """The UTF-16 code-unit offset of the character at `index` of `line`."""
    return len(line[:index].encode("utf-16-le")) // 2


def char_index(line: str, column: int) -> int:
    """The character index of UTF-16 offset `column` in `line` (clamped to the line)."""
    units = 0
    for index, char in enumerate(line):
        if units >= column:
            return index
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line)


def offset_of(text: str, position: types.Position) -> int:
    """The string offset in `text` of an LSP position."""
    lines = text.splitlines(keepends=True)
    if position.line >= len(lines):
        return len(text)
    start = sum(len(line) for line in lines[: position.line])
    line = lines[position.line].rstrip("\r\n")
    return start + char_index(line, position.character)


@dataclass(frozen=True)
class SymbolPosition:
    """Where a symbol was found on a line, and what to tell the agent about the choice."""

    position: types.Position
    note: str = ""


def locate_symbol(text: str, line: int, symbol: str, occurrence: int | None, *,
                  first_line: int = 0, where: str = "the file") -> SymbolPosition:
    """The position of `symbol` on 1-based `line` of `text`.

    Whole-word matches win over substring matches; with several, the first (or the
    `occurrence`-th, 1-based) is taken and the result says so. `text` may be one part of
    what the server sees (a notebook cell), starting at its 0-based line `first_line`;
    `where` names that part in messages.
    """
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        raise LineOutOfRange(line, where, len(lines))
    source = lines[line - 1]
    word = re.compile(rf"(?<![\w$]){re.escape(symbol)}(?![\w$])")
    starts = [m.start() for m in word.finditer(source)]
    if not starts:
        starts = [m.start() for m in re.finditer(re.escape(symbol), source)]
    if not starts:
        names = sorted(set(_IDENTIFIER.findall(source)))
        raise SymbolNotOnLine(symbol, line, where, source, names)
    note = ""
    index = 0
    if occurrence is not None:
        if not 1 <= occurrence <= len(starts):
            raise OccurrenceOutOfRange(symbol, line, occurrence, len(starts))
        index = occurrence - 1
    elif len(starts) > 1:
        note = (f"{symbol!r} occurs {len(starts)} times on line {line}; used the first. Pass "
                "occurrence=N to pick another.")
    start = starts[index]
    return SymbolPosition(types.Position(line=first_line + line - 1,
                                         character=utf16_column(source, start)), note)
