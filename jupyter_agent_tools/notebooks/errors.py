"""What can go wrong with a notebook, as the notebooks package says it: facts only.

Each exception carries what happened as attributes and a plain message stating it. What
the agent should do next, and the contract's error code, are the tools' to say
(`tools/notebook_errors.py`).
"""

from __future__ import annotations

from typing import Literal

# Why bytes are not a notebook this package works on.
InvalidReason = Literal["not_utf8", "not_json", "not_a_notebook", "old_format", "schema",
                        "unloadable"]


class NotebookError(Exception):
    """The base of every notebook failure; `str(error)` states what happened."""


class InvalidNotebook(NotebookError):
    """The bytes are not a notebook this package can work on (JSON, nbformat 4 schema)."""

    def __init__(self, message: str, *, name: str, reason: InvalidReason,
                 nbformat: object = None) -> None:
        super().__init__(message)
        self.name = name
        self.reason = reason
        self.nbformat = nbformat  # the version the file claims, when reason is old_format


class CellOutOfRange(NotebookError):
    """A cell number that the notebook does not have."""

    def __init__(self, *, cell: int, cell_count: int, shared: bool = False) -> None:
        notebook = "the open notebook" if shared else "the notebook"
        super().__init__(f"there is no cell {cell}: {notebook} has {cell_count} cell"
                         f"{'' if cell_count == 1 else 's'} (numbered from 1).")
        self.cell = cell
        self.cell_count = cell_count


class UnknownCellId(NotebookError):
    """A cell id that no cell of the notebook has."""

    def __init__(self, *, cell_id: str, cell_count: int, has_ids: bool,
                 shared: bool = False) -> None:
        notebook = "the open notebook" if shared else "the notebook"
        why = "" if has_ids else f" ({notebook}'s cells have no ids: nbformat before 4.5)"
        super().__init__(f"no cell has the id {cell_id!r}{why}; {notebook} has {cell_count} "
                         f"cell{'' if cell_count == 1 else 's'} (numbered from 1).")
        self.cell_id = cell_id
        self.cell_count = cell_count
        self.has_ids = has_ids


class LineOutOfRange(NotebookError):
    """A line number that a cell does not have."""

    def __init__(self, *, cell: int, line: int, line_count: int) -> None:
        super().__init__(f"cell {cell} has {line_count} line{'' if line_count == 1 else 's'}; "
                         f"there is no line {line}.")
        self.cell = cell
        self.line = line
        self.line_count = line_count


class NotKernelCode(NotebookError):
    """A cell that is not in the kernel's language (markdown, raw, another cell magic)."""

    def __init__(self, *, cell: int, language: str) -> None:
        super().__init__(f"cell {cell} is not {language} code the kernel runs (a markdown or "
                         "raw cell, or a cell magic of another language).")
        self.cell = cell
        self.language = language


class EditSpansCells(NotebookError):
    """An edit of the virtual document that crosses a cell boundary."""

    def __init__(self) -> None:
        super().__init__("an edit of the virtual document spans more than one cell (or the "
                         "space between cells).")


class EditTouchesMagic(NotebookError):
    """An edit of masked IPython syntax (a magic, a shell command), absent from the code."""

    def __init__(self, *, cell: int, syntax: str) -> None:
        super().__init__(f"an edit touches IPython syntax ({syntax!r}) in cell {cell}; masked "
                         "magics and shell commands are not edited.")
        self.cell = cell
        self.syntax = syntax


class StaleNotebook(NotebookError):
    """The file on disk is no longer the notebook the change was computed on."""

    def __init__(self, shown: str) -> None:
        super().__init__(f"{shown} changed on disk since it was read (saved from JupyterLab or "
                         "by another tool); nothing was written.")
        self.shown = shown


class CellChanged(NotebookError):
    """A cell that no longer holds the type and source the change was computed on (the human
    typed, another run changed it), or (`seen_at`) that is no longer where the change saw it
    (cells were moved, inserted or deleted)."""

    def __init__(self, *, cell: int, cell_id: str | None, seen_at: int | None = None) -> None:
        if seen_at is None:
            fact = "its type or source is not what was read"
        else:
            fact = f"it was read as cell {seen_at}; cells were moved, inserted or deleted since"
        super().__init__(f"cell {cell} changed since it was last read ({fact}); nothing was "
                         "changed.")
        self.cell = cell
        self.cell_id = cell_id
        self.seen_at = seen_at


class CellGone(NotebookError):
    """A cell being run was deleted from the notebook meanwhile (its outputs have no place)."""

    def __init__(self, *, cell_id: str) -> None:
        super().__init__(f"the cell with id {cell_id!r} was deleted while it ran; its outputs "
                         "were not written anywhere.")
        self.cell_id = cell_id
