"""Output bounds: one place that cuts text and says that it did."""

from __future__ import annotations

from typing import Any


def bound_text(text: str, max_chars: int, *, what: str = "output") -> tuple[str, bool]:
    """Cut `text` to `max_chars`, keeping its head and tail, with a note in the middle."""
    if len(text) <= max_chars:
        return text, False
    head = max_chars * 2 // 3
    tail = max_chars - head
    omitted = len(text) - head - tail
    note = f"\n[... {what} cut: {omitted} characters omitted of {len(text)} ...]\n"
    return text[:head] + note + text[len(text) - tail :], True


# A string in structured content is never cut below this many characters: a bound met by
# cutting thousands of short strings to nothing would leave nothing legible.
MIN_VALUE_CHARS = 400


def bound_data(value: Any, max_chars: int, *, what: str = "value") -> tuple[Any, bool]:
    """`value` (JSON-like: dicts, lists, strings, numbers) with its strings cut, longest
    first, until their characters add up to about `max_chars` (each kept at least
    `MIN_VALUE_CHARS`, head and tail with a note, as `bound_text` cuts); whether any was.
    Containers along a cut string are copied; the rest is shared with `value`."""
    lengths: list[int] = []
    _string_lengths(value, lengths)
    total = sum(lengths)
    if total <= max_chars:
        return value, False
    cap = _water_level(sorted(lengths), max_chars)
    cap = max(cap, MIN_VALUE_CHARS)
    if not any(length > cap for length in lengths):
        return value, False
    return _cut_strings(value, cap, what), True


def _string_lengths(value: Any, into: list[int]) -> None:
    if isinstance(value, str):
        into.append(len(value))
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                into.append(len(key))
            _string_lengths(item, into)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _string_lengths(item, into)


def _water_level(ascending: list[int], budget: int) -> int:
    """The length `cap` such that the lengths, each cut to `cap`, add up to `budget`."""
    remaining = budget
    for index, length in enumerate(ascending):
        left = len(ascending) - index
        if length * left > remaining:
            return remaining // left
        remaining -= length
    return ascending[-1] if ascending else budget


def _cut_strings(value: Any, cap: int, what: str) -> Any:
    if isinstance(value, str):
        return bound_text(value, cap, what=what)[0] if len(value) > cap else value
    if isinstance(value, dict):
        return {key: _cut_strings(item, cap, what) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cut_strings(item, cap, what) for item in value]
    return value
