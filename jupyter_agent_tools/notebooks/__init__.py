"""Notebooks as source files: cells by number, languages, a virtual document, safe writes.

The resource behind every tool that works on `.ipynb` files; it knows nothing of tools or
HTTP and fails with its own exceptions (`NotebookError` and subclasses), which the tools
turn into contract errors. A place in a notebook is (file, cell, line, column): `cell`
counts every cell from 1, as JupyterLab's status bar does.
"""

from .disk import (
    NotebookFile,
    check_unchanged,
    content_hash,
    read_notebook,
    write_cells,
    write_run_state,
    write_sources,
)
from .document import (
    Cell,
    CellRef,
    JsonStyle,
    Notebook,
    OutputSummary,
    cell_number,
    is_notebook_path,
    validate,
)
from .editing import (
    CellEditor,
    CellType,
    FileCells,
    OutputChange,
    new_cell,
    resolve_cell,
)
from .errors import (
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
from .images import SavedImage, saved_images
from .journal import CellChange, NotebookJournal
from .language import CellLanguage, cell_language, language_name, notebook_language
from .live_outputs import LiveOutputs
from .shared import (
    SharedChange,
    SharedNotebook,
    SharedRewrite,
    open_shared_changes,
    open_shared_notebook,
    write_with_open_notebooks,
)
from .virtual import CellPosition, CellSpan, DocumentEdit, Mask, VirtualDocument

__all__ = [
    "Cell",
    "CellChange",
    "CellChanged",
    "CellEditor",
    "CellGone",
    "CellLanguage",
    "CellOutOfRange",
    "CellPosition",
    "CellRef",
    "CellSpan",
    "CellType",
    "DocumentEdit",
    "EditSpansCells",
    "EditTouchesMagic",
    "FileCells",
    "InvalidNotebook",
    "JsonStyle",
    "LineOutOfRange",
    "LiveOutputs",
    "Mask",
    "NotKernelCode",
    "Notebook",
    "NotebookError",
    "NotebookFile",
    "NotebookJournal",
    "OutputChange",
    "OutputSummary",
    "SavedImage",
    "SharedChange",
    "SharedNotebook",
    "SharedRewrite",
    "StaleNotebook",
    "UnknownCellId",
    "VirtualDocument",
    "cell_language",
    "cell_number",
    "check_unchanged",
    "content_hash",
    "is_notebook_path",
    "language_name",
    "new_cell",
    "notebook_language",
    "open_shared_changes",
    "open_shared_notebook",
    "read_notebook",
    "resolve_cell",
    "saved_images",
    "validate",
    "write_cells",
    "write_run_state",
    "write_sources",
    "write_with_open_notebooks",
]
