"""notebook_error: the notebooks package's facts become contract errors that say what to do.

Each exception here is raised by the notebooks package itself, on a real file or notebook.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from jupyter_agent_tools.notebooks import (
    DocumentEdit,
    InvalidNotebook,
    Notebook,
    NotebookError,
    VirtualDocument,
    read_notebook,
    write_sources,
)
from jupyter_agent_tools.tools.notebook_errors import notebook_error

ADVICE = ("Read it", "Look at it", "Convert it", "redo", "edit each cell", "Use ", "Write ")


def _notebook() -> Notebook:
    return Notebook.from_text(nbformat.writes(new_notebook(
        cells=[new_markdown_cell("# Title"), new_code_cell("x = 1\n%time y = 2"),
               new_code_cell("z = 3")],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}})))


def _raised(action: Callable[[], object]) -> NotebookError:
    with pytest.raises(NotebookError) as caught:
        action()
    message = str(caught.value)
    assert not any(advice in message for advice in ADVICE), message  # facts only
    return caught.value


@pytest.mark.parametrize("text, reason, next_step", [
    ("{not json", "not_json", ""),
    ('{"nbformat": 3, "nbformat_minor": 0, "metadata": {}}', "old_format",
     "Convert it with `jupyter nbconvert --to notebook --inplace`."),
])
def test_an_invalid_notebook_says_what_next_for_each_use(text, reason, next_step):
    exc = _raised(lambda: Notebook.from_text(text, name="broken.ipynb"))
    assert isinstance(exc, InvalidNotebook) and (exc.name, exc.reason) == ("broken.ipynb", reason)
    written = notebook_error(exc, doing="write")
    assert written.code == "invalid_arguments"
    assert written.message.startswith(str(exc)) and next_step in written.message
    assert "Nothing was written." in written.message
    edited = notebook_error(exc)
    assert edited.code == "failed" and "Cells cannot be edited until it is repaired" in edited.message
    read = notebook_error(exc, doing="read")  # by a tool that only reads it (language servers)
    assert read.code == "invalid_arguments" and "used as a notebook once repaired" in read.message


def test_a_missing_cell_names_the_count_and_says_to_read():
    exc = _raised(lambda: _notebook().cell(7))
    error = notebook_error(exc, path="analysis.ipynb")
    assert error.code == "invalid_arguments"
    assert error.message == ("analysis.ipynb: there is no cell 7: the notebook has 3 cells "
                             "(numbered from 1). Read it to see them.")
    assert error.data == {"cell": 7, "cell_count": 3}


def test_virtual_document_refusals_say_what_to_do():
    document = VirtualDocument.of(_notebook())
    third = document.document_position(3, 0)
    crossing = _raised(lambda: document.cell_sources([DocumentEdit((0, 0), third, "z")]))
    assert "edit each cell on its own" in notebook_error(crossing).message
    magic = _raised(lambda: document.cell_sources([DocumentEdit((1, 1), (1, 4), "zz")]))
    assert notebook_error(magic).data == {"cell": 2}
    markdown = _raised(lambda: document.document_position(1, 0))
    assert "Name a code cell" in notebook_error(markdown).message
    past = _raised(lambda: document.document_position(2, 5))
    assert notebook_error(past).data == {"cell": 2, "line_count": 2}


def test_a_stale_notebook_says_to_read_it_again(tmp_path: Path):
    path = tmp_path / "analysis.ipynb"
    path.write_text(nbformat.writes(new_notebook(cells=[new_code_cell("x = 1")])))
    file = read_notebook(tmp_path, path, shown="analysis.ipynb")
    data = json.loads(path.read_text())
    data["cells"][0]["source"] = "x = 2"
    path.write_text(json.dumps(data))  # saved from JupyterLab meanwhile
    exc = _raised(lambda: write_sources(tmp_path, file, {1: "x = 3"}))
    error = notebook_error(exc)
    assert error.code == "stale_edit" and error.message.startswith("analysis.ipynb changed on disk")
    assert error.message.endswith("Read it again and redo the change on its current content.")
