"""The virtual document: the kernel's code cells as one file, IPython syntax masked."""

from __future__ import annotations

import ast

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_agent_tools.notebooks import DocumentEdit, Notebook, NotebookError, VirtualDocument


def virtual(notebook: nbformat.NotebookNode) -> VirtualDocument:
    return VirtualDocument.of(Notebook.from_text(nbformat.writes(notebook)))


def test_code_cells_of_the_kernel_are_one_document_with_a_line_map(python_notebook):
    document = virtual(python_notebook)
    # Markdown (cell 1) and the %%bash cell (3) are not Python the kernel runs.
    assert document.cells == [2, 4, 5]
    assert document.text.split("\n")[:7] == [
        "import pandas as pd", "#matplotlib inline", "files = ...", "sales = load(files)",
        "", "", "#%time"]
    place = document.cell_position(8, 4)  # `total` in the last line of cell 4
    assert place is not None and place.shown() == "[cell 4] 3:5"
    assert document.document_position(4, 2, 4) == (8, 4)
    assert document.cell_position(4) is None  # between cells
    with pytest.raises(NotebookError, match="cell 3 is not python code"):
        document.document_position(3, 0)


def test_masked_syntax_neither_breaks_a_parser_nor_matches(python_notebook):
    document = virtual(python_notebook)
    tree = ast.parse(document.text)  # IPython syntax unmasked would be a SyntaxError
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    assert {"sales", "total", "files", "load", "ratio"} <= names
    assert not {"matplotlib", "ls", "data", "time", "DataFrame"} & names
    assert [mask.original for mask in document.masks] == [
        "%matplotlib inline", "!ls data", "%%time", "pd.DataFrame?"]
    assert document.is_masked(2, 8) and not document.is_masked(2, 0)


def test_percent_signs_that_are_python_stay():
    notebook = new_notebook(cells=[new_code_cell(
        "ratio = (total\n   % 7)\ntext = '''\n%not a magic\n!nor a shell\n'''\nlong = 1 + \\\n  2")])
    document = virtual(notebook)
    assert document.masks == ()
    assert document.text == notebook.cells[0].source + "\n"


def test_other_kernels_are_not_masked(deno_notebook):
    document = virtual(deno_notebook)
    assert document.language == "typescript" and document.cells == [2, 3]
    assert document.masks == () and "  % 2 === 1);" in document.text


def test_document_edits_map_back_to_cell_sources(python_notebook):
    document = virtual(python_notebook)
    line, _ = document.document_position(4, 1)
    edits = [DocumentEdit((line, 14), (line, 17), "mean"),      # total = sales.sum()
             DocumentEdit((0, 17), (0, 19), "pandas")]            # import pandas as pd
    assert document.cell_sources(edits) == {
        2: "import pandas as pandas\n%matplotlib inline\nfiles = !ls data\nsales = load(files)",
        4: "%%time\ntotal = sales.mean()\ntotal",
    }
    with pytest.raises(NotebookError, match="IPython syntax"):
        document.cell_sources([DocumentEdit((2, 8), (2, 11), "glob()")])
    with pytest.raises(NotebookError, match="more than one cell"):
        document.cell_sources([DocumentEdit((3, 0), (7, 0), "")])
