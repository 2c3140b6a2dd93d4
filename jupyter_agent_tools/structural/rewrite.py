"""Filling a rewrite template with a match's captures, indented as the ast-grep CLI does.

Indentation counts spaces only, as ast-grep counts it. A multi-line capture moves with its
first line: its later lines shift by the difference between the indentation of the line it
came from and that of the template line it lands on (a line with fewer spaces than a
shift takes away is left as it is). Then every later line of the filled template gains the
indentation of the line the match starts on. `ast-grep run --rewrite` writes the same bytes
(tests/structural/differential).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_METAVAR = re.compile(r"\$\$\$([A-Z_][A-Z0-9_]*)|\$([A-Z_][A-Z0-9_]*)")
_ANY_METAVAR = re.compile(r"\$\$\$(?:[A-Z_][A-Z0-9_]*)?|\$[A-Z_][A-Z0-9_]*")


@dataclass(frozen=True)
class Replacement:
    """One match to replace: its byte range and its captures' byte ranges."""

    start: int
    end: int
    captures: dict[str, tuple[int, int] | None]


def unbound_metavariables(template: str, bound: Iterable[str]) -> list[str]:
    """The metavariables `template` uses, as written ($Z, $$$B, $_), that are not `bound`.

    Anonymous ones (`$_`, bare `$$$`) never bind, so a template using them is always wrong.
    """
    names = set(bound) - {"_"}
    unbound: list[str] = []
    for found in _ANY_METAVAR.finditer(template):
        written = found.group(0)
        if written.lstrip("$") not in names and written not in unbound:
            unbound.append(written)
    return unbound


def _leading_spaces(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _line_up_to(source: bytes, offset: int, encoding: str = "utf-8") -> str:
    """The line holding byte `offset` of `source`, up to it."""
    return source[source.rfind(b"\n", 0, offset) + 1:offset].decode(encoding, "replace")


def _shift(text: str, by: int) -> str:
    """`text` with its later lines indented `by` more spaces (fewer when negative)."""
    lines = text.split("\n")
    for index in range(1, len(lines)):
        line = lines[index]
        if by > 0:
            lines[index] = " " * by + line
        elif line.startswith(" " * -by):
            lines[index] = line[-by:]
    return "\n".join(lines)


def fill(template: str, source: bytes, replacement: Replacement,
         encoding: str = "utf-8") -> str:
    """The text that replaces `replacement` in `source` (whose bytes are in `encoding`)."""
    out: list[str] = []
    position = 0
    for found in _METAVAR.finditer(template):
        out.append(template[position:found.start()])
        position = found.end()
        name = found.group(1) or found.group(2)
        if name not in replacement.captures:
            out.append(found.group(0))  # not a capture of the pattern: literal text
            continue
        span = replacement.captures[name]
        if span is None:
            continue
        captured = source[span[0]:span[1]].decode(encoding, "replace")
        origin = _leading_spaces(_line_up_to(source, span[0], encoding))
        if "\n" in captured and origin:
            landing = _leading_spaces(template[template.rfind("\n", 0, found.start()) + 1:])
            captured = _shift(captured, landing - origin)
        out.append(captured)
    out.append(template[position:])
    return _shift("".join(out), _leading_spaces(_line_up_to(source, replacement.start,
                                                            encoding)))


def non_overlapping(replacements: list[Replacement]) -> list[Replacement]:
    """The replacements that are applied, in order: of overlapping ones the outermost."""
    chosen: list[Replacement] = []
    end = -1
    for replacement in sorted(replacements, key=lambda r: (r.start, -r.end)):
        if replacement.start >= end:
            chosen.append(replacement)
            end = replacement.end
    return chosen


def apply(template: str, source: bytes, replacements: list[Replacement],
          encoding: str = "utf-8") -> tuple[bytes, list[tuple[int, int]]]:
    """`source` with every non-overlapping replacement applied (outermost first wins), and
    the byte range each replacement occupies in the result. The replacements are written in
    `encoding`, the source's own (UnicodeEncodeError when it cannot hold them)."""
    chosen = non_overlapping(replacements)
    pieces: list[bytes] = []
    spans: list[tuple[int, int]] = []
    position = written = 0
    for replacement in chosen:
        kept = source[position:replacement.start]
        filled = fill(template, source, replacement, encoding).encode(encoding)
        pieces += [kept, filled]
        written += len(kept)
        spans.append((written, written + len(filled)))
        written += len(filled)
        position = replacement.end
    pieces.append(source[position:])
    return b"".join(pieces), spans
