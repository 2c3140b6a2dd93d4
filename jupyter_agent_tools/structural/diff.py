"""The unified diff of a rewrite, made from where its replacements are.

A rewrite knows which byte ranges it replaced, so the diff needs no sequence matching:
each replacement changes the lines it touches (replacements sharing a line change them
together), every other line is kept. `difflib.unified_diff` over the whole file finds the
same changes, at a cost that grows with the square of the lines when lines repeat (a
7,000-line file of repeated blocks took it a second); this takes time in proportion to the
file. The output is difflib's format (git-style headers, hunks of 3 lines of context, hunks
closer than 6 lines merged, "\\ No newline at end of file"), and within a change, the lines
a rewrite kept (the start or end of a multi-line match) show as context, as difflib would
show them. Where the spans do not map onto the lines of the text as read (bytes a codec
cannot read at a span's edge), difflib's diff is taken instead.
"""

from __future__ import annotations

import codecs
import difflib
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate

_CONTEXT = 3
# A change this large (lines before x lines after) is shown as a block of - and + lines
# rather than matched line by line inside.
_MAX_MATCHED_CELLS = 40_000

Opcode = tuple[str, int, int, int, int]


def rewrite_diff(relpath: str, before: bytes, after: bytes,
                 replaced: Sequence[tuple[int, int]], written: Sequence[tuple[int, int]],
                 encoding: str = "utf-8") -> str:
    """A git-style unified diff of one file (a/ and b/ prefixes), read in `encoding`:
    `replaced` are the byte ranges of `before` a rewrite replaced, in order and not
    overlapping, and `written` the ranges of `after` that replaced them."""
    old_text = before.decode(encoding, "replace")
    new_text = after.decode(encoding, "replace")
    old = old_text.splitlines(keepends=True)
    new = new_text.splitlines(keepends=True)
    opcodes = _opcodes(old, new, _chars(before, old_text, replaced, encoding),
                       _chars(after, new_text, written, encoding))
    if opcodes is None:
        lines: Iterator[str] = difflib.unified_diff(old, new, f"a/{relpath}", f"b/{relpath}")
    else:
        lines = _unified(old, new, opcodes, f"a/{relpath}", f"b/{relpath}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def _chars(data: bytes, text: str, spans: Sequence[tuple[int, int]], encoding: str
           ) -> list[tuple[int, int]]:
    """`spans` (byte offsets, ascending) as offsets in `text`, `data` decoded."""
    if len(text) == len(data):  # one byte a character (ASCII, a one-byte codec)
        return list(spans)
    decoder = codecs.getincrementaldecoder(encoding)("replace")
    chars = position = 0
    found: list[tuple[int, int]] = []
    for start, end in spans:
        chars += len(decoder.decode(data[position:start]))
        begins = chars
        chars += len(decoder.decode(data[start:end]))
        position = end
        found.append((begins, chars))
    return found


def _opcodes(old: list[str], new: list[str], replaced: list[tuple[int, int]],
             written: list[tuple[int, int]]) -> list[Opcode] | None:
    """difflib's opcodes for the two texts' lines, from the replacements' character spans;
    None when a span's edges do not fall where the lines say they should."""
    old_starts = [0, *accumulate(map(len, old))]
    new_starts = [0, *accumulate(map(len, new))]
    regions: list[tuple[int, int, int, int]] = []  # old lines [i1, i2), new lines [j1, j2)
    index = 0
    while index < len(replaced):
        # The lines the replacement touches, and those of the next ones sharing a line.
        # The line its end is on counts even when it ends at the line's start: in the new
        # text that line continues the replacement's last line unless this ends in a break.
        start, end = replaced[index]
        first = _line(old_starts, start)
        last = min(len(old), _line(old_starts, end) + 1)
        new_start, new_end = written[index]
        index += 1
        while index < len(replaced) and _line(old_starts, replaced[index][0]) < last:
            end = replaced[index][1]
            last = min(len(old), _line(old_starts, end) + 1)
            new_end = written[index][1]
            index += 1
        # What is left of those lines around the replacements is the same text in both.
        j1 = _exact(new_starts, new_start - (start - old_starts[first]))
        j2 = _exact(new_starts, new_end + (old_starts[last] - end))
        if j1 is None or j2 is None or j2 < j1:
            return None
        regions.append((first, last, j1, j2))
    changes: list[Opcode] = []
    i = j = 0
    for i1, i2, j1, j2 in regions:
        if i1 - i != j1 - j:  # the lines between are not the same count: not what it seems
            return None
        changes.extend(_changed(old, new, i1, i2, j1, j2))
        i, j = i2, j2
    if len(old) - i != len(new) - j:
        return None
    return _complete(changes, len(old), len(new))


def _line(starts: list[int], offset: int) -> int:
    """The index of the line holding character `offset` (len(lines) past the last)."""
    return bisect_right(starts, offset) - 1 if offset < starts[-1] else len(starts) - 1


def _exact(starts: list[int], offset: int) -> int | None:
    """The index of the line starting at `offset` (len(lines) at the end); None if none does."""
    at = bisect_left(starts, offset)
    return at if at < len(starts) and starts[at] == offset else None


def _changed(old: list[str], new: list[str], i1: int, i2: int, j1: int, j2: int
             ) -> list[Opcode]:
    """The opcodes of one changed block: the lines kept at its ends are left out (they are
    equal), and what is left is matched line by line when small enough."""
    while i1 < i2 and j1 < j2 and old[i1] == new[j1]:
        i1, j1 = i1 + 1, j1 + 1
    while i2 > i1 and j2 > j1 and old[i2 - 1] == new[j2 - 1]:
        i2, j2 = i2 - 1, j2 - 1
    if i1 == i2 and j1 == j2:
        return []
    if i1 == i2 or j1 == j2 or (i2 - i1 == 1 and j2 - j1 == 1) \
            or (i2 - i1) * (j2 - j1) > _MAX_MATCHED_CELLS:
        return [("insert" if i1 == i2 else "delete" if j1 == j2 else "replace", i1, i2, j1, j2)]
    matcher = difflib.SequenceMatcher(None, old[i1:i2], new[j1:j2], autojunk=False)
    return [(tag, a1 + i1, a2 + i1, b1 + j1, b2 + j1)
            for tag, a1, a2, b1, b2 in matcher.get_opcodes()]


def _complete(changes: list[Opcode], old_lines: int, new_lines: int) -> list[Opcode]:
    """The opcodes of the whole file: equal runs between `changes` (ascending), and changes
    side by side joined into one (difflib never puts two next to each other)."""
    codes: list[Opcode] = []

    def add(code: Opcode) -> None:
        if codes and (codes[-1][0] == "equal") == (code[0] == "equal"):
            tag, i1, _, j1, _ = codes[-1]
            codes[-1] = (tag if tag == code[0] else "replace", i1, code[2], j1, code[4])
        else:
            codes.append(code)

    i = j = 0
    for tag, i1, i2, j1, j2 in [*changes, ("equal", old_lines, old_lines, new_lines, new_lines)]:
        if (i1, j1) != (i, j):
            add(("equal", i, i1, j, j1))
        if i2 > i1 or j2 > j1:
            add((tag, i1, i2, j1, j2))
        i, j = i2, j2
    return codes


def _grouped(opcodes: list[Opcode], n: int = _CONTEXT) -> Iterator[list[Opcode]]:
    """The hunks: difflib's SequenceMatcher.get_grouped_opcodes over these opcodes."""
    codes = list(opcodes) or [("equal", 0, 1, 0, 1)]
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > n + n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _range(start: int, stop: int) -> str:
    """A hunk's line range, as difflib writes it."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start if not length else start + 1},{length}"


def _unified(old: list[str], new: list[str], opcodes: list[Opcode], fromfile: str,
             tofile: str) -> Iterator[str]:
    """difflib.unified_diff's lines, for these opcodes."""
    started = False
    for group in _grouped(opcodes):
        if not started:
            started = True
            yield f"--- {fromfile}\n"
            yield f"+++ {tofile}\n"
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for line in old[i1:i2]:
                    yield " " + line
                continue
            if tag in {"replace", "delete"}:
                for line in old[i1:i2]:
                    yield "-" + line
            if tag in {"replace", "insert"}:
                for line in new[j1:j2]:
                    yield "+" + line
