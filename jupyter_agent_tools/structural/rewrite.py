"""Filling a rewrite template with a match's captures, keeping indentation sensible.

The template's later lines are indented like the line the match starts on. A multi-line
capture keeps its own shape: its later lines lose the indentation of the line it came
from and gain the indentation of the line it lands on.
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


def _indent_of_line(source: bytes, offset: int) -> bytes:
    line_start = source.rfind(b"\n", 0, offset) + 1
    line = source[line_start:offset]
    return line[: len(line) - len(line.lstrip(b" \t"))]


def _leading_ws(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _reshape(text: str, from_indent: str, to_indent: str) -> str:
    lines = text.split("\n")
    for index in range(1, len(lines)):
        line = lines[index]
        if line.startswith(from_indent):
            line = line[len(from_indent):]
        lines[index] = (to_indent + line) if line.strip() else line
    return "\n".join(lines)


def fill(template: str, source: bytes, replacement: Replacement,
         encoding: str = "utf-8") -> str:
    """The text that replaces `replacement` in `source` (whose bytes are in `encoding`)."""
    match_indent = _indent_of_line(source, replacement.start).decode(encoding, "replace")
    prefix = source[source.rfind(b"\n", 0, replacement.start) + 1: replacement.start]
    template = template.replace("\n", "\n" + match_indent)
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
        if "\n" in captured:
            written = prefix.decode(encoding, "replace") + "".join(out)
            landing = _leading_ws(written.rsplit("\n", 1)[-1])
            origin = _indent_of_line(source, span[0]).decode(encoding, "replace")
            captured = _reshape(captured, origin, landing)
        out.append(captured)
    out.append(template[position:])
    return "".join(out)


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
