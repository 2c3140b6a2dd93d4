"""A compact live transcript: one line per tool call or card, newest last."""

from __future__ import annotations

from collections import deque
from html import escape
from typing import Any

import ipywidgets as w


class TranscriptView(w.HTML):
    """The last `max_lines` calls and answers, one short line each."""

    def __init__(self, max_lines: int = 40) -> None:
        super().__init__()
        self.lines: deque[str] = deque(maxlen=max_lines)

    def add_event(self, event: dict[str, Any]) -> None:
        """Fold a run or space event into the transcript (others are ignored)."""
        kind = event.get("type")
        if kind == "call_finished":
            mark = "✓" if event.get("ok") else f"✗ {event.get('error_code')}"
            ms = event.get("duration_ms")
            took = f" {ms:.0f} ms" if isinstance(ms, (int, float)) else ""
            self.add_line(f"{mark} {event.get('label') or event.get('tool')}{took}")
        elif kind == "question_closed":
            card = event.get("card") or {}
            said = card.get("answer") or card.get("text") or ""
            if isinstance(said, list):
                said = ", ".join(said)
            self.add_line(f"#{card.get('number')} {card.get('status')}" + (f": {said}" if said else ""))

    def add_line(self, line: str) -> None:
        self.lines.append(line)
        self.value = (
            "<div style='font-family:monospace;font-size:12px;max-height:12em;overflow:auto'>"
            + "".join(f"<div>{escape(text)}</div>" for text in self.lines) + "</div>"
        )
