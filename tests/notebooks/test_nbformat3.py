"""nbformat 3 notebooks: read upgraded by nbformat, searched the same way, saved as 4.5."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import nbformat
import pytest

from jupyter_agent_tools.files.nbformat3 import cells_as_v4, is_nbformat3
from jupyter_agent_tools.notebooks import InvalidNotebook, Notebook

# An IPython 2 notebook as it saved them: worksheets, `input`, `prompt_number`, a heading
# cell, outputs with their MIME types as keys.
V3_NOTEBOOK = Path(__file__).parent / "data" / "old_rates_nbformat3.json"


def v3_text() -> str:
    return V3_NOTEBOOK.read_text()


def test_an_nbformat3_notebook_is_read_upgraded_by_nbformat():
    notebook = Notebook.from_text(v3_text(), name="old.ipynb")
    assert (notebook.format, notebook.saved_format, notebook.upgraded_from) == ("3.0", "4.5",
                                                                                "3.0")
    assert [(c.number, c.cell_type, c.source, c.id) for c in notebook.cells] == [
        (1, "markdown", "## Old analysis of rates", None),
        (2, "code", "import math\nrate = math.pi / 2\nprint(rate)", None),
        (3, "markdown", "The *rate* is half of pi.", None),
        (4, "raw", "raw rate", None),
    ]
    code = notebook.cells[1]
    assert code.execution_count == 3 and code.language.name == "python"
    assert [o.kinds for o in code.outputs] == [("stdout",), ("text/plain", "image/png")]


def test_a_change_saves_it_as_nbformat_4_5_as_jupyterlab_does():
    notebook = Notebook.from_text(v3_text(), name="old.ipynb")
    saved = notebook.with_sources({2: "rate = 1"}).decode()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # valid, ids included: nbformat has nothing to repair
        node = nbformat.reads(saved, as_version=nbformat.NO_CONVERT)
        nbformat.validate(node)
    assert (node.nbformat, node.nbformat_minor) == (4, 5)
    assert [cell.source for cell in node.cells] == [
        "## Old analysis of rates", "rate = 1", "The *rate* is half of pi.", "raw rate"]
    assert len({cell.id for cell in node.cells}) == 4
    assert node.cells[1].outputs[1].data["image/png"].startswith("iVBOR")
    assert "orig_nbformat" not in node.metadata
    assert saved == nbformat.writes(node) + "\n"  # nbformat's own style, as JupyterLab saves


def test_searches_see_the_cells_nbformat_upgrades_to():
    """The search side's upgrade (no nbformat: grep's threads cannot import it) agrees
    with nbformat's, cell by cell."""
    data = json.loads(v3_text())
    assert is_nbformat3(data) and not is_nbformat3({"nbformat": 4, "cells": []})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        upgraded = nbformat.reads(v3_text(), as_version=4)
    assert [(c["cell_type"], c["source"]) for c in cells_as_v4(data)] == [
        (c.cell_type, c.source) for c in upgraded.cells]


@pytest.mark.parametrize("broken", [
    {"nbformat": 3, "nbformat_minor": 0, "metadata": {}},
    {"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": [{}]}]},
])
def test_an_old_notebook_nbformat_cannot_upgrade_is_invalid(broken):
    with pytest.raises(InvalidNotebook) as refused:
        Notebook.from_text(json.dumps(broken), name="bad.ipynb")
    assert refused.value.reason == "old_format" and refused.value.nbformat == 3
    assert "bad.ipynb is nbformat 3" in str(refused.value)
