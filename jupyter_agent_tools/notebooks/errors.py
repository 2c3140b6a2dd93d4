"""What can go wrong with a notebook, as the notebooks package says it (no tool codes here).

The tools translate these into contract errors; each message already says what to do next.
"""

from __future__ import annotations


class NotebookError(Exception):
    """The base of every notebook failure; `str(error)` is a message for the agent."""


class InvalidNotebook(NotebookError):
    """The bytes are not a notebook this package can work on (JSON, nbformat 4 schema)."""


class CellOutOfRange(NotebookError):
    """A cell number that the notebook does not have."""

    def __init__(self, message: str, *, cell: int, cell_count: int) -> None:
        super().__init__(message)
        self.cell = cell
        self.cell_count = cell_count


class StaleNotebook(NotebookError):
    """The file on disk is no longer the notebook the change was computed on."""
