"""What a notebook error means to an agent: a contract code and what to do next.

The one place the notebooks package's exceptions (`notebooks/errors.py`, facts only) become
ToolErrors, as `runtime/file_errors.py` is for the files package. `doing` says what the
call was doing: an invalid notebook means one thing to write (the content given is wrong),
another to edit (the file must be repaired first), another to a tool that only reads it
(language servers: it is served once repaired).
"""

from __future__ import annotations

from typing import Literal

from ..notebooks import (
    CellChanged,
    CellGone,
    CellOutOfRange,
    EditSpansCells,
    EditTouchesMagic,
    InvalidNotebook,
    LineOutOfRange,
    NotebookError,
    NotKernelCode,
    StaleNotebook,
    UnknownCellId,
)
from ..runtime import ErrorCode, ToolError

Doing = Literal["read", "edit", "write"]

_REPAIR = {
    "not_utf8": " Look at it with bash.",
    "old_format": " Convert it with `jupyter nbconvert --to notebook --inplace`.",
}


def notebook_error(exc: NotebookError, *, doing: Doing = "edit",
                   path: str | None = None) -> ToolError:
    """The ToolError for one of the notebooks package's exceptions; `path` (root-relative)
    heads the message when the exception does not name the notebook itself."""
    where = f"{path}: " if path else ""
    invalid = ErrorCode.INVALID_ARGUMENTS
    if isinstance(exc, InvalidNotebook):
        if exc.reason == "unloadable":  # one answer, whatever the call was doing
            return ToolError(invalid, str(exc))
        said = f"{exc}{_REPAIR.get(exc.reason, '')}"
        if doing == "write":
            return ToolError(invalid, f"{said} Nothing was written. Write the whole notebook as "
                             "nbformat 4 JSON, or change one cell with edit {path, cell, "
                             "old_string, new_string}.")
        if doing == "read":
            return ToolError(invalid, f"{said} It is used as a notebook once repaired: read "
                             "shows its text; write the whole corrected notebook.")
        return ToolError(ErrorCode.FAILED, f"{said} Cells cannot be edited until it is "
                         "repaired: read shows its text; write the whole corrected notebook.")
    if isinstance(exc, StaleNotebook):
        return ToolError(ErrorCode.STALE_EDIT, f"{exc} Read it again and redo the change on its "
                         "current content.")
    if isinstance(exc, CellOutOfRange):
        return ToolError(invalid, f"{where}{exc} Read it to see them.",
                         data={"cell": exc.cell, "cell_count": exc.cell_count})
    if isinstance(exc, UnknownCellId):
        how = ("Read it to see each cell's id, or name the cell by number" if exc.has_ids
               else "Name the cell by number (read shows them)")
        return ToolError(invalid, f"{where}{exc} {how}.",
                         data={"cell": exc.cell_id, "cell_count": exc.cell_count})
    if isinstance(exc, CellChanged):
        return ToolError(ErrorCode.STALE_EDIT, f"{where}{exc} Read the cell again and redo the "
                         "change on what it holds now.", data={"cell": exc.cell, "id": exc.cell_id})
    if isinstance(exc, CellGone):
        return ToolError(ErrorCode.NOT_FOUND, f"{where}{exc} Read the notebook to see its "
                         "cells now.", data={"id": exc.cell_id})
    if isinstance(exc, LineOutOfRange):
        return ToolError(invalid, f"{where}{exc} Read the notebook to see the cell's lines.",
                         data={"cell": exc.cell, "line_count": exc.line_count})
    if isinstance(exc, NotKernelCode):
        return ToolError(invalid, f"{where}{exc} Name a code cell in the notebook's language; "
                         "read the notebook to see each cell's language.", data={"cell": exc.cell})
    if isinstance(exc, EditSpansCells):
        return ToolError(invalid, f"{where}{exc} Nothing was changed; edit each cell on its own.")
    if isinstance(exc, EditTouchesMagic):
        return ToolError(invalid, f"{where}{exc} Nothing was changed; change the code around "
                         "it, or edit the cell's text with `edit`.", data={"cell": exc.cell})
    return ToolError(ErrorCode.FAILED, f"{where}{exc}. Read the notebook to see its cells, "
                     "then try again.")
