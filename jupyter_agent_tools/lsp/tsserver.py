"""Diagnostics from typescript-language-server, asked for instead of awaited.

typescript-language-server publishes nothing when a clean file stays clean, so waiting for a
publication cannot tell "still clean" from "not checked yet". It forwards raw tsserver
requests through `typescript.tsserverRequest`, and the *Sync diagnostics requests answer for
the document's current version.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

_CATEGORY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
             "suggestion": types.DiagnosticSeverity.Hint, "message": types.DiagnosticSeverity.Information}
_REQUESTS = ("syntacticDiagnosticsSync", "semanticDiagnosticsSync")


def _position(point: dict[str, int]) -> types.Position:
    # tsserver counts lines and offsets from 1, in UTF-16 units like the LSP.
    return types.Position(line=max(point.get("line", 1) - 1, 0),
                          character=max(point.get("offset", 1) - 1, 0))


def _diagnostic(item: dict[str, Any]) -> types.Diagnostic:
    return types.Diagnostic(
        range=types.Range(_position(item.get("start", {})), _position(item.get("end", {}))),
        message=item.get("text", ""),
        severity=_CATEGORY.get(item.get("category", "error"), types.DiagnosticSeverity.Error),
        code=item.get("code"),
        source="typescript",
    )


def tsserver_requests(uri: str) -> list[tuple[str, types.ExecuteCommandParams]]:
    """The workspace/executeCommand requests that ask tsserver for `uri`'s diagnostics."""
    return [
        (types.WORKSPACE_EXECUTE_COMMAND, types.ExecuteCommandParams(
            command="typescript.tsserverRequest", arguments=[request, {"file": uri}]))
        for request in _REQUESTS
    ]


def tsserver_diagnostics(answers: list[Any]) -> list[types.Diagnostic]:
    """LSP diagnostics from the tsserver answers to `tsserver_requests`."""
    found: list[types.Diagnostic] = []
    for answer in answers:
        body = answer.get("body") if isinstance(answer, dict) else None
        found.extend(_diagnostic(item) for item in body or [] if isinstance(item, dict))
    return found
