"""What diagnostics a run has already been shown, so writes report only new ones.

A diagnostic's identity is (severity, code, message), per file — never its position, so a
diagnostic that moved four lines down after an edit is not news. The journal keeps counts:
a second identical error in the same file is new; one that went away and came back is new
again.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from .positions import char_index

_SEVERITY = {1: "error", 2: "warning", 3: "info", 4: "hint"}
SEVERITY_LEVELS = {name: level for level, name in _SEVERITY.items()}

DiagnosticKey = tuple[str, str, str]


@dataclass(frozen=True)
class FileDiagnostic:
    """One diagnostic as results show it: relative path, 1-based line and column (within
    the cell `cell` of a notebook, numbered from 1; None for other files)."""

    path: str
    line: int
    column: int
    severity: str
    code: str
    message: str
    source: str
    cell: int | None = None

    @classmethod
    def from_lsp(cls, path: str, diagnostic: types.Diagnostic, default_source: str,
                 lines: list[str] | None = None) -> FileDiagnostic:
        """From an LSP diagnostic; with the file's `lines`, UTF-16 columns become characters."""
        code = diagnostic.code
        start = diagnostic.range.start
        column = start.character
        if lines is not None and start.line < len(lines):
            column = char_index(lines[start.line], start.character)
        return cls(
            path=path,
            line=start.line + 1,
            column=column + 1,
            severity=_SEVERITY.get(int(diagnostic.severity or 1), "error"),
            code="" if code is None else str(code),
            message=diagnostic.message,
            source=diagnostic.source or default_source,
        )

    @property
    def key(self) -> DiagnosticKey:
        return (self.severity, self.code, self.message)

    def to_json(self) -> dict[str, Any]:
        place: dict[str, Any] = {"path": self.path}
        if self.cell is not None:
            place["cell"] = self.cell
        return {**place, "line": self.line, "column": self.column,
                "severity": self.severity, "code": self.code, "message": self.message,
                "source": self.source}

    @property
    def place(self) -> str:
        """`main.py:4:5`, or `analysis.ipynb [cell 3] 4:5` in a notebook."""
        if self.cell is not None:
            return f"{self.path} [cell {self.cell}] {self.line}:{self.column}"
        return f"{self.path}:{self.line}:{self.column}"

    def describe(self) -> str:
        code = f"[{self.code}] " if self.code else ""
        message = " ".join(self.message.split())
        return f"{self.place} {self.severity} {code}{message} ({self.source})"


class DiagnosticsJournal:
    """Per run: the diagnostics last shown for each file, as counts by key."""

    def __init__(self) -> None:
        self._shown: dict[str, Counter[DiagnosticKey]] = {}

    def observe(self, path: str, diagnostics: list[FileDiagnostic]) -> list[FileDiagnostic]:
        """Record the current diagnostics of `path`; return those the run has not seen yet."""
        before = self._shown.get(path, Counter())
        now: Counter[DiagnosticKey] = Counter()
        new = []
        for diagnostic in diagnostics:
            now[diagnostic.key] += 1
            if now[diagnostic.key] > before[diagnostic.key]:
                new.append(diagnostic)
        self._shown[path] = now
        return new

    def forget(self, path: str) -> None:
        """The file is gone: if it comes back, all its diagnostics are news again."""
        self._shown.pop(path, None)

    def known(self, path: str) -> int:
        return sum(self._shown.get(path, Counter()).values())
