"""The per-run record of every call: tool, label, arguments, origin, outcome, duration."""

from __future__ import annotations

import sys
from collections import deque
from dataclasses import dataclass, field, fields
from typing import Any

from pydantic_core import to_json

#: What a run's transcript keeps by default: calls, and bytes of arguments plus texts.
DEFAULT_MAX_TRANSCRIPT_ENTRIES = 10_000
DEFAULT_MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024


@dataclass
class TranscriptEntry:
    """One call. `args_omitted_bytes` is set (and `args` empty) when the call's arguments alone
    were larger than the transcript may hold: such a call cannot be replayed."""

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
    args_omitted_bytes: int | None = None
    data: dict[str, Any] | None = None
    # The transcript's bookkeeping, not part of the record: the entry's place among every
    # entry ever started, and what it counts against the byte bound.
    _sequence: int = field(default=-1, repr=False, compare=False)
    _held_bytes: int = field(default=0, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        # Shallow: asdict would deep-copy every argument (megabytes for a `write`).
        return {name: getattr(self, name) for name in _RECORD_FIELDS}


_RECORD_FIELDS = tuple(f.name for f in fields(TranscriptEntry) if not f.name.startswith("_"))


def memory_bytes(text: str) -> int:
    """What a string holds in memory: 1, 2 or 4 bytes a character (found in O(1), no copy)."""
    return sys.getsizeof(text)


def estimated_args_bytes(args: dict[str, Any]) -> int:
    """About what `args` hold, cheaply: a string its size in memory (O(1) for a megabyte
    `content`, whatever its characters), other values their JSON (serialized in Rust)."""
    size = 2
    for key, value in args.items():
        size += memory_bytes(str(key))
        if isinstance(value, str):
            size += memory_bytes(value)
        else:
            size += len(to_json(value, serialize_unknown=True))
    return size


class Transcript:
    """An append-only list of calls, bounded in entries and in bytes.

    Past `max_entries` calls, or past `max_bytes` of arguments, labels and texts (`held_bytes`),
    the oldest entries are dropped and counted in `dropped`. A call costs the estimate of its
    own arguments, whatever the transcript already holds: nothing is measured twice.
    """

    def __init__(self, max_entries: int = DEFAULT_MAX_TRANSCRIPT_ENTRIES,
                 max_bytes: int = DEFAULT_MAX_TRANSCRIPT_BYTES, max_text_chars: int = 2_000,
                 max_data_chars: int = 16_000) -> None:
        self._entries: deque[TranscriptEntry] = deque()
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._max_text_chars = max_text_chars
        self._max_data_chars = max_data_chars
        self._started = 0
        self.held_bytes = 0
        self.dropped = 0

    def start(self, entry: TranscriptEntry) -> TranscriptEntry:
        """Keep `entry` (its arguments replaced by their size when they alone exceed the bound)."""
        args_bytes = estimated_args_bytes(entry.args)
        if args_bytes > self._max_bytes:
            # Left out, not shortened (a shortened argument would replay wrong): the marker
            # tells replay to refuse the call.
            entry.args, entry.args_omitted_bytes = {}, args_bytes
            args_bytes = estimated_args_bytes(entry.args)
        entry._sequence = self._started
        self._started += 1
        self._entries.append(entry)
        self._hold(entry, args_bytes + memory_bytes(entry.label))
        return entry

    def finish(
        self, entry: TranscriptEntry, *, ok: bool, error_code: str | None, duration_ms: float,
        text: str, data: dict[str, Any] | None = None,
    ) -> None:
        """`data` (given only by tools that keep it, whose data is small) is kept when its JSON
        is within `max_data_chars`; else left out (never cut: front ends act on it)."""
        entry.ok = ok
        entry.error_code = error_code
        entry.duration_ms = round(duration_ms, 3)
        entry.text = text[: self._max_text_chars]
        size = memory_bytes(entry.text)
        if data:
            data_chars = len(to_json(data, serialize_unknown=True))
            if data_chars <= self._max_data_chars:
                entry.data = data
                size += data_chars
        if entry._sequence >= self.dropped:  # still held: a long call may outlive its entry
            self._hold(entry, size)

    def restore(self, records: list[dict[str, Any]]) -> list[TranscriptEntry]:
        """Keep the finished calls of an earlier run, as recorded (`to_json`): a conversation
        picked up in a new run after its run ended. The same bounds apply."""
        restored = []
        for record in records:
            entry = TranscriptEntry(**{name: record[name] for name in _RECORD_FIELDS
                                       if name in record})
            entry._sequence = self._started
            self._started += 1
            self._entries.append(entry)
            restored.append(entry)
            self._hold(entry, estimated_args_bytes(entry.args) + memory_bytes(entry.label)
                       + memory_bytes(entry.text or ""))
        return [entry for entry in restored if entry._sequence >= self.dropped]

    def _hold(self, entry: TranscriptEntry, size: int) -> None:
        entry._held_bytes += size
        self.held_bytes += size
        # Oldest first; the newest entry stays whatever its size (its arguments are bounded).
        while len(self._entries) > 1 and (len(self._entries) > self._max_entries
                                          or self.held_bytes > self._max_bytes):
            self.held_bytes -= self._entries.popleft()._held_bytes
            self.dropped += 1

    def entries(self) -> list[TranscriptEntry]:
        return list(self._entries)

    def to_json(self) -> list[dict[str, Any]]:
        return [entry.to_json() for entry in self._entries]
