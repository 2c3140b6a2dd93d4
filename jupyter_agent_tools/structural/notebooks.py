"""Structural search in notebooks: the kernel's code cells searched as one virtual document.

A worker parses a notebook's virtual document (its code cells in the kernel's language,
IPython syntax masked in place, see notebooks.virtual) and maps each match back to its
cell: `cell` from 1, line and column within the cell's source. A match that spans two
cells, or stands on masked syntax (the `...` that replaces `x = !ls`), is no match.
The worker imports this module only when it meets a notebook (nbformat is slow to load).
"""

from __future__ import annotations

import bisect
import hashlib
import json
from typing import Any

from ..files.nbformat3 import cells_as_v4, is_nbformat3
from ..notebooks.document import JsonStyle, Notebook
from ..notebooks.virtual import VirtualDocument
from .astgrep import Found
from .cache import CachedFile, Stamp

OTHER_LANGUAGE = "other_language"
INVALID_NOTEBOOK = "invalid_notebook"

# Searching never writes the file back: the formatting it would be written with is moot.
NEVER_WRITTEN = JsonStyle(indent=1, separators=(",", ": "), ensure_ascii=False, newline="\n",
                           trailing_newline=True, exact=False)


def notebook_entry(stamp: Stamp, raw: bytes, language: str) -> CachedFile:
    """The cache entry of a notebook read as `raw`, for a search in `language`.

    Its virtual document is built later, by `with_document`, once a search cannot rule the
    notebook out from its raw bytes. Not validated against the nbformat schema (that is
    slow, and a search only needs the cells); a rewrite reads the notebook again, validated,
    before it stages anything.
    """
    try:
        data = json.loads(raw)
        if is_nbformat3(data):  # searched as read shows it: upgraded to nbformat 4
            data = {"nbformat": 4, "nbformat_minor": 4, "metadata": data.get("metadata", {}),
                    "cells": cells_as_v4(data)}
        if not (isinstance(data, dict) and data.get("nbformat") == 4
                and isinstance(data.get("cells"), list)):
            return CachedFile(stamp, b"", skip=INVALID_NOTEBOOK)
        notebook = Notebook(data, NEVER_WRITTEN)
        if notebook.language != language:
            return CachedFile(stamp, b"", skip=OTHER_LANGUAGE)
    except (ValueError, TypeError, AttributeError, KeyError):  # not JSON, odd metadata or cells
        return CachedFile(stamp, b"", skip=INVALID_NOTEBOOK)
    return CachedFile(stamp, raw, document=notebook, file_hash=hashlib.sha256(raw).hexdigest())


def is_pending(entry: CachedFile) -> bool:
    """Whether `entry` is a notebook whose virtual document is not built yet."""
    return isinstance(entry.document, Notebook)


def ruled_out(raw: bytes, literals: tuple[bytes, ...]) -> bool:
    """Whether a notebook's raw JSON shows it cannot match: it lacks a literal that JSON
    writes as is (printable ASCII, no quote, backslash or slash, which writers may escape)."""
    return any(literal not in raw for literal in literals
               if all(32 <= byte < 127 and byte not in _ESCAPED for byte in literal))


_ESCAPED = frozenset(b'"\\/')


def with_document(entry: CachedFile) -> CachedFile:
    """`entry` with its virtual document built: `source` becomes the document's text."""
    try:
        document = VirtualDocument.of(entry.document)
    except (TypeError, AttributeError, KeyError):  # cells that are not nbformat's
        return CachedFile(entry.stamp, b"", skip=INVALID_NOTEBOOK)
    source = document.text.encode("utf-8")
    return CachedFile(entry.stamp, source,
                      document=SearchableNotebook(document, DocumentText(source)),
                      file_hash=entry.file_hash)


class SearchableNotebook:
    """A notebook as a worker keeps it: its virtual document and how to place matches."""

    def __init__(self, document: VirtualDocument, text: DocumentText) -> None:
        self.document = document
        self.text = text
        self._cell_offsets: dict[int, list[int]] = {}

    def cell_text(self, cell: int, first_line: int, start: tuple[int, int],
                  end: tuple[int, int]) -> str:
        """The cell's own text (not the masked one) between two document positions."""
        source = self.document.sources[cell]
        offsets = self._cell_offsets.get(cell)
        if offsets is None:
            offsets = self._cell_offsets[cell] = [0]
            for line in source.splitlines(keepends=True):
                offsets.append(offsets[-1] + len(line))
        return source[offsets[start[0] - first_line] + start[1]:
                      offsets[end[0] - first_line] + end[1]]


class DocumentText:
    """Byte offsets of a virtual document's text as (line, character), both from 0."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self._line_starts = [0]
        start = source.find(b"\n")
        while start != -1:
            self._line_starts.append(start + 1)
            start = source.find(b"\n", start + 1)

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._line_starts, offset) - 1
        start = self._line_starts[line]
        return line, len(self.source[start:offset].decode("utf-8", "replace"))


def _on_masked_syntax(document: VirtualDocument, start: tuple[int, int],
                      end: tuple[int, int]) -> bool:
    """Whether a range lies within one masked span (what it matched is not the cell's code)."""
    return start[0] == end[0] and any(
        mask.line == start[0] and mask.start <= start[1] and end[1] <= max(mask.end,
                                                                          mask.start + 3)
        for mask in document.masks)


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def describe_in_cell(path: str, notebook: SearchableNotebook, found: Found, *, max_text: int,
                     with_ranges: bool) -> dict[str, Any] | None:
    """A match addressed by cell (positions from 1 within it); None when it is no match."""
    document, text = notebook.document, notebook.text
    start = text.position(found.start_byte)
    end = text.position(found.end_byte)
    where = document.cell_position(*start)
    until = document.cell_position(*end)
    if where is None or until is None or where.cell != until.cell:
        return None
    spans = found.spans
    ranges = [(start, end)] + [(text.position(a), text.position(b))
                               for a, b in filter(None, spans.values())]
    if any(_on_masked_syntax(document, a, b) for a, b in ranges):
        return None
    first_line = start[0] - where.line
    captures = {name: notebook.cell_text(where.cell, first_line, text.position(span[0]),
                                         text.position(span[1])) if span else ""
                for name, span in spans.items()}
    match: dict[str, Any] = {
        "file": path,
        "cell": where.cell,
        "start": [where.line + 1, where.character + 1],
        "end": [until.line + 1, until.character + 1],
        "text": _bounded(notebook.cell_text(where.cell, first_line, start, end), max_text),
        "captures": {name: _bounded(value, max_text) for name, value in captures.items()},
    }
    if with_ranges:  # byte ranges in the virtual document's text, which a rewrite rebuilds
        match["range"] = [found.start_byte, found.end_byte]
        match["capture_ranges"] = spans
    return match
