"""Notebook: cells by number, output summaries, validation, and writing back only sources."""

from __future__ import annotations

import json
import re

import nbformat
import pytest

from jupyter_agent_tools.notebooks import CellOutOfRange, InvalidNotebook, Notebook


def changed_region(old: bytes, new: bytes) -> tuple[bytes, bytes]:
    """What differs between two byte strings once their common prefix and suffix are cut."""
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while (suffix < min(len(old), len(new)) - prefix
           and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]):
        suffix += 1
    return old[prefix:len(old) - suffix], new[prefix:len(new) - suffix]


def test_cells_are_numbered_from_one_over_every_cell(python_notebook):
    notebook = Notebook.from_text(nbformat.writes(python_notebook))
    assert [cell.number for cell in notebook.cells] == [1, 2, 3, 4, 5]
    assert [cell.cell_type for cell in notebook.cells] == ["markdown"] + ["code"] * 4
    third = notebook.cell(3)
    assert third.source == "%%bash\necho $HOME" and third.lines == ["%%bash", "echo $HOME"]
    assert notebook.cell(1).attachments == ("chart.png",)
    assert notebook.language == "python"
    for bad in (0, 6):
        with pytest.raises(CellOutOfRange, match="has 5 cells") as caught:
            notebook.cell(bad)
        assert caught.value.cell_count == 5


def test_outputs_are_summarized_by_type_and_size(python_notebook):
    notebook = Notebook.from_text(nbformat.writes(python_notebook))
    stream, = notebook.cell(2).outputs
    assert stream.line() == "stream stdout (15 chars)" and stream.text == "loaded 3 files\n"
    result, display = notebook.cell(4).outputs
    assert result.line() == "execute_result text/plain (2 bytes)" and result.text == "42"
    assert display.kinds == ("image/png", "text/plain") and display.size == 96
    error, = notebook.cell(5).outputs
    assert error.line() == "error NameError: name 'load' is not defined"


def test_a_source_change_leaves_every_other_byte_as_it_was(python_notebook):
    original = (nbformat.writes(python_notebook) + "\n").encode()  # as nbformat.write saves
    notebook = Notebook.from_bytes(original)
    assert notebook.style.exact and notebook.with_sources({}) == original
    new = notebook.with_sources({4: "%%time\ntotal = sales.mean()\ntotal"})
    assert changed_region(original, new) == (b"sum", b"mean")
    # A change of line count keeps the list-of-lines form nbformat uses.
    grown = json.loads(notebook.with_sources({2: "import pandas as pd\n\nimport numpy\n"}))
    assert grown["cells"][1]["source"] == ["import pandas as pd\n", "\n", "import numpy\n"]
    assert grown["cells"][1]["outputs"] == json.loads(original)["cells"][1]["outputs"]


def test_other_tools_formatting_is_kept_too(python_notebook):
    """Two-space indent, unsorted keys, ASCII escapes, CRLF, no final newline, string sources."""
    data = nbformat.from_dict(json.loads(nbformat.writes(python_notebook)))
    data["metadata"] = {"zeta": "ü", "alpha": 1, **data["metadata"]}
    data["cells"][1]["source"] = "".join(data["cells"][1]["source"])  # a plain string
    text = json.dumps(data, indent=2, ensure_ascii=True).replace("\n", "\r\n")
    notebook = Notebook.from_text(text)
    assert notebook.style.exact and notebook.style.indent == 2
    new = notebook.with_sources({2: notebook.cell(2).source.replace("sales =", "revenue =")})
    assert changed_region(text.encode(), new) == (b"sales", b"revenue")
    assert json.loads(new)["cells"][1]["source"].startswith("import pandas")


def test_unusual_spacing_is_normalized_and_said_so(python_notebook):
    text = nbformat.writes(python_notebook).replace('"cells": [', '"cells" :[', 1)
    notebook = Notebook.from_text(text)
    assert not notebook.style.exact
    assert json.loads(notebook.with_sources({2: "x = 1"}))["cells"][1]["source"] == ["x = 1"]


@pytest.mark.parametrize("text, says", [
    ("{not json", "not valid JSON (line 1, column 2"),
    ('{"a": 1}', "not a notebook"),
    ('{"nbformat": 5, "nbformat_minor": 0, "cells": [], "metadata": {}}', "nbformat 5"),
])
def test_what_is_not_a_notebook_is_refused_with_why(text, says):
    with pytest.raises(InvalidNotebook, match=re.escape(says)):
        Notebook.from_text(text, name="broken.ipynb")


def test_schema_errors_say_where(python_notebook):
    data = json.loads(nbformat.writes(python_notebook))
    data["cells"][2]["cell_type"] = "spreadsheet"
    with pytest.raises(InvalidNotebook, match=r"broken\.ipynb is not a valid nbformat 4 notebook"):
        Notebook.from_text(json.dumps(data), name="broken.ipynb")
    del data["cells"][2]["cell_type"]
    data["cells"][1].pop("outputs")
    with pytest.raises(InvalidNotebook, match="at cells/1"):
        Notebook.from_text(json.dumps(data))


def test_notebooks_without_cell_ids_are_read_and_written_unchanged(python_notebook):
    """nbformat 4.4 files have no ids; the validator must not add any to what is written."""
    data = json.loads(nbformat.writes(python_notebook))
    data["nbformat_minor"] = 4
    for cell in data["cells"]:
        del cell["id"]
    text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    notebook = Notebook.from_text(text)
    assert notebook.cell(2).id is None
    assert "id" not in json.loads(notebook.with_sources({2: "x = 1\n"}))["cells"][1]
