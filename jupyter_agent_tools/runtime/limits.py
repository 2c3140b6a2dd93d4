"""Output bounds: one place that cuts text and says that it did."""

from __future__ import annotations


def bound_text(text: str, max_chars: int, *, what: str = "output") -> tuple[str, bool]:
    """Cut `text` to `max_chars`, keeping its head and tail, with a note in the middle."""
    if len(text) <= max_chars:
        return text, False
    head = max_chars * 2 // 3
    tail = max_chars - head
    omitted = len(text) - head - tail
    note = f"\n[... {what} cut: {omitted} characters omitted of {len(text)} ...]\n"
    return text[:head] + note + text[len(text) - tail :], True
