"""Turning a server's WorkspaceEdit into new file contents, checked against the root."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path

from .errors import EditAfterDelete, EditOutsideRoot
from .positions import offset_of

TextEdit = types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit


@dataclass
class PlannedEdit:
    """Every file a WorkspaceEdit changes: new content (None: delete) and edit counts."""

    changes: dict[Path, str | None] = field(default_factory=dict)
    originals: dict[Path, str] = field(default_factory=dict)
    edit_counts: dict[Path, int] = field(default_factory=dict)

    def diff(self, relpath: Callable[[Path], str]) -> str:
        parts: list[str] = []
        for path, new in self.changes.items():
            old = self.originals.get(path, "")
            name = relpath(path)
            parts.extend(difflib.unified_diff(
                old.splitlines(keepends=True), (new or "").splitlines(keepends=True),
                f"a/{name}", "/dev/null" if new is None else f"b/{name}",
            ))
        return "".join(parts)


def edit_targets(edit: types.WorkspaceEdit) -> list[Path]:
    """Every file `edit` touches, as the server named them."""
    uris: list[str] = []
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit):
            uris.append(change.text_document.uri)
        elif isinstance(change, types.RenameFile):
            uris += [change.old_uri, change.new_uri]
        else:
            uris.append(change.uri)
    if not edit.document_changes:
        uris += list((edit.changes or {}).keys())
    return [Path(to_fs_path(uri) or uri) for uri in dict.fromkeys(uris)]


def plan_workspace_edit(edit: types.WorkspaceEdit, contained: Callable[[Path], Path | None],
                        relpath: Callable[[Path], str], read: Callable[[Path], str]) -> PlannedEdit:
    """Apply `edit` in memory (blocking: `read` reads files). `contained` maps a path to its
    real path inside the root, or None; one file outside refuses the whole edit."""
    outside = [path for path in edit_targets(edit) if contained(path) is None]
    if outside:
        raise EditOutsideRoot([relpath(path) for path in outside])

    def resolve(path: str) -> Path:
        real = contained(Path(path))
        assert real is not None  # checked above
        return real

    plan = PlannedEdit()

    def current(path: Path) -> str:
        if path not in plan.changes:
            text = read(path) if path.exists() else ""
            plan.originals[path] = text
            plan.changes[path] = text
        content = plan.changes[path]
        if content is None:
            raise EditAfterDelete(path)
        return content

    def apply(uri: str, edits: list[TextEdit]) -> None:
        path = resolve(to_fs_path(uri) or uri)
        text = current(path)
        ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character),
                         reverse=True)
        for text_edit in ordered:
            new_text = (text_edit.snippet.value if isinstance(text_edit, types.SnippetTextEdit)
                        else text_edit.new_text)
            start, end = offset_of(text, text_edit.range.start), offset_of(text, text_edit.range.end)
            text = text[:start] + new_text + text[end:]
        plan.changes[path] = text
        plan.edit_counts[path] = plan.edit_counts.get(path, 0) + len(edits)

    for document_change in edit.document_changes or []:
        if isinstance(document_change, types.TextDocumentEdit):
            apply(document_change.text_document.uri, list(document_change.edits))
        elif isinstance(document_change, types.CreateFile):
            path = resolve(to_fs_path(document_change.uri) or document_change.uri)
            plan.originals.setdefault(path, "")
            plan.changes.setdefault(path, "")
        elif isinstance(document_change, types.RenameFile):
            old = resolve(to_fs_path(document_change.old_uri) or document_change.old_uri)
            new = resolve(to_fs_path(document_change.new_uri) or document_change.new_uri)
            content = current(old)
            plan.changes[old] = None
            plan.originals.setdefault(new, "")
            plan.changes[new] = content
        elif isinstance(document_change, types.DeleteFile):
            path = resolve(to_fs_path(document_change.uri) or document_change.uri)
            current(path)
            plan.changes[path] = None
    if not edit.document_changes:
        for uri, edits in (edit.changes or {}).items():
            apply(uri, list(edits))
    # Files whose content did not change are not rewritten.
    for path in [p for p, new in plan.changes.items() if new == plan.originals.get(p)
                 and p.exists()]:
        del plan.changes[path]
    return plan
