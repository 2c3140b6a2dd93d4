"""The per-run record of every call: tool, label, arguments, origin, outcome, duration."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class TranscriptEntry:
    call_id: str
    tool: str
    label: str
    args: dict[str, Any]
    origin: str
    started_at: float
    ok: bool | None = None
    error_code: str | None = None
    duration_ms: float | None = None
    text: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class Transcript:
    """An append-only, bounded list of calls (the oldest are dropped past `max_entries`)."""

    def __init__(self, max_entries: int = 10_000, max_text_chars: int = 2_000) -> None:
        self._entries: list[TranscriptEntry] = []
        self._max_entries = max_entries
        self._max_text_chars = max_text_chars

    def start(self, entry: TranscriptEntry) -> TranscriptEntry:
        self._entries.append(entry)
        if len(self._entries) > self._max_entries:
            del self._entries[0]
        return entry

    def finish(
        self, entry: TranscriptEntry, *, ok: bool, error_code: str | None, duration_ms: float, text: str
    ) -> None:
        entry.ok = ok
        entry.error_code = error_code
        entry.duration_ms = round(duration_ms, 3)
        entry.text = text[: self._max_text_chars]

    def entries(self) -> list[TranscriptEntry]:
        return list(self._entries)

    def to_json(self) -> list[dict[str, Any]]:
        return [entry.to_json() for entry in self._entries]
