"""Staged edits: rewrites computed by ast_edit, written only when resolve accepts them.

Each file's content hash and identity (device, inode, folder) are taken at staging time;
accepting re-checks every file, reached from the root without following links, and
refuses the whole edit if any changed since: equal bytes in another file (a folder
swapped for a link to an outside copy) are not the staged file. Edits belong to one run: ids are per run,
and no run can see another's store.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from ..files import (
    FileIdentity,
    FilesError,
    identity_inside,
    read_bytes_inside,
    write_files_atomically,
)
from ..runtime.store import RunRecorder


class EditStatus(str, Enum):
    """Where an edit stands; only a staged one can be resolved."""

    STAGED = "staged"
    ACCEPTED = "accepted"
    DISCARDED = "discarded"
    STALE = "stale"


# The snapshot of a file an edit creates: there was nothing.
ABSENT = ""


def content_hash(data: bytes) -> str:
    """The snapshot of a file's content (sha256, hex)."""
    return hashlib.sha256(data).hexdigest()


@dataclass
class FileChange:
    """One file of a staged edit: where, what it was (hash), what it becomes."""

    path: Path
    relpath: str
    snapshot: str  # sha256 of the content the edit was computed on
    new_content: bytes
    replacements: int
    diff: str
    # Which file was read; taken when the change is made, that is at staging.
    identity: FileIdentity | None = None
    # A notebook's change: each changed cell's source, before and after (by cell number).
    cells: dict[int, tuple[str, str]] = field(default_factory=dict)
    # An old notebook's format ("3.0"): writing saves it as nbformat 4.5.
    upgraded_from: str | None = None

    def __post_init__(self) -> None:
        if self.identity is None:
            self.identity = FileIdentity.of_path(self.path)

    def to_record(self) -> dict[str, Any]:
        """What the run store keeps of it (JSON, but for `new_content`: bytes)."""
        identity = self.identity
        return {"path": str(self.path), "relpath": self.relpath, "snapshot": self.snapshot,
                "new_content": self.new_content, "replacements": self.replacements,
                "diff": self.diff,
                "identity": None if identity is None else [
                    identity.device, identity.inode, identity.folder_device,
                    identity.folder_inode],
                "cells": [[cell, before, after] for cell, (before, after) in self.cells.items()],
                "upgraded_from": self.upgraded_from}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> FileChange:
        """A change as `to_record` kept it (blocking: one without an identity looks at the
        file, as at staging)."""
        identity = record["identity"]
        return cls(Path(record["path"]), record["relpath"], record["snapshot"],
                   record["new_content"], record["replacements"], record["diff"],
                   None if identity is None else FileIdentity(*identity),
                   {cell: (before, after) for cell, before, after in record["cells"]},
                   record["upgraded_from"])

    def is_stale(self, root: Path) -> bool:
        """Whether the file under `root` is no longer the one, with the content, staged."""
        if self.snapshot == ABSENT:  # a file the edit creates: stale once anything is there
            return os.path.lexists(self.path)
        if identity_inside(root, self.path) != self.identity:
            return True
        try:
            return content_hash(read_bytes_inside(root, self.path)) != self.snapshot
        except FilesError:  # gone, or now behind a link: certainly not the snapshot
            return True


@dataclass
class StagedEdit:
    """A rewrite over one or many files, waiting for resolve."""

    id: str
    run_id: str
    pattern: str
    rewrite: str
    language: str
    files: list[FileChange]
    created_at: float = field(default_factory=time.time)
    status: EditStatus = EditStatus.STAGED
    pattern_kind: str = ""  # what the pattern parsed as (said when nothing matched)
    skipped: dict[str, int] = field(default_factory=dict)  # files not searched, by reason
    # Which tool staged it: ast_edit (pattern -> rewrite) or lsp (pattern: the code action).
    origin: str = "ast_edit"

    @property
    def replacements(self) -> int:
        return sum(change.replacements for change in self.files)

    @property
    def diff(self) -> str:
        return "".join(change.diff for change in self.files)

    def counts(self) -> dict[str, int]:
        return {change.relpath: change.replacements for change in self.files}

    def upgrades(self) -> dict[str, str]:
        """The old notebooks it saves as nbformat 4.5: relative path -> their format."""
        return {change.relpath: change.upgraded_from for change in self.files
                if change.upgraded_from is not None}

    def summary(self) -> dict[str, Any]:
        return {"edit_id": self.id, "status": self.status.value, "pattern": self.pattern,
                "rewrite": self.rewrite, "language": self.language, "origin": self.origin,
                "replacements": self.replacements, "files": self.counts(),
                "created_at": self.created_at}

    def to_json(self) -> dict[str, Any]:
        return {**self.summary(), "diff": self.diff}

    def to_record(self) -> dict[str, Any]:
        """What the run store keeps of it: enough to review, accept or discard it later."""
        return {"id": self.id, "run_id": self.run_id, "pattern": self.pattern,
                "rewrite": self.rewrite, "language": self.language, "origin": self.origin,
                "created_at": self.created_at,
                "files": [change.to_record() for change in self.files]}

    @classmethod
    def from_record(cls, record: dict[str, Any], status: str) -> StagedEdit:
        """An edit as `to_record` kept it, with its status (blocking: see FileChange)."""
        return cls(record["id"], record["run_id"], record["pattern"], record["rewrite"],
                   record["language"],
                   [FileChange.from_record(change) for change in record["files"]],
                   created_at=record["created_at"], status=EditStatus(status),
                   origin=record["origin"])

    @staticmethod
    def stale_files(root: Path, changes: list[FileChange]) -> list[str]:
        """Which of `changes` (relative paths) changed on disk, or were replaced, since
        staging."""
        return [change.relpath for change in changes if change.is_stale(root)]

    @staticmethod
    def write(root: Path, changes: list[FileChange]) -> list[Path]:
        """Write `changes`' files, all or nothing, only if each is still the file staged,
        with the content staged (a compare-and-swap: StaleFile, nothing written, if not)."""
        names = {change.path: change.relpath for change in changes}
        return write_files_atomically(
            {change.path: change.new_content for change in changes}, root=root,
            expected={change.path: change.identity for change in changes},
            based_on={change.path: change.snapshot if change.snapshot != ABSENT else None
                      for change in changes},
            relpath=names.__getitem__)


def unified_diff(relpath: str, before: bytes, after: bytes, encoding: str = "utf-8") -> str:
    """A git-style unified diff of one file (a/ and b/ prefixes), read in `encoding`."""
    old = before.decode(encoding, "replace").splitlines(keepends=True)
    new = after.decode(encoding, "replace").splitlines(keepends=True)
    lines = difflib.unified_diff(old, new, f"a/{relpath}", f"b/{relpath}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


class EditStore:
    """The staged edits of one run, oldest dropped past `max_edits`: the one place they are
    kept, and written to the run store (`record`) as they change."""

    def __init__(self, run_id: str, max_edits: int, record: RunRecorder | None = None) -> None:
        self.run_id = run_id
        self.max_edits = max_edits
        self.record = record or RunRecorder(None, run_id)
        self._edits: OrderedDict[str, StagedEdit] = OrderedDict()
        self._counter = 0

    def stage(self, pattern: str, rewrite: str, language: str,
              files: list[FileChange], origin: str = "ast_edit") -> StagedEdit:
        """Keep a new edit under the next id of this run ("edit_1", "edit_2", ...)."""
        self._counter += 1
        edit = StagedEdit(f"edit_{self._counter}", self.run_id, pattern, rewrite, language, files,
                          origin=origin)
        self._edits[edit.id] = edit
        if self.record:
            self.record.edit_staged(edit.id, edit.status.value, edit.created_at, edit.to_record())
        while len(self._edits) > self.max_edits:
            forgotten, _ = self._edits.popitem(last=False)
            self.record.edit_forgotten(forgotten)
        return edit

    def changed(self, edit: StagedEdit) -> None:
        """Say that `edit` was resolved (its status changed)."""
        self.record.edit_status(edit.id, edit.status.value)

    def restore(self, edit: StagedEdit) -> None:
        """Keep an edit the run store kept (an ended run's)."""
        self._edits[edit.id] = edit
        number = edit.id.removeprefix("edit_")
        if number.isdigit():
            self._counter = max(self._counter, int(number))

    def get(self, edit_id: str) -> StagedEdit | None:
        return self._edits.get(edit_id)

    def list(self) -> list[StagedEdit]:
        return list(self._edits.values())

    def clear(self) -> None:
        self._edits.clear()
