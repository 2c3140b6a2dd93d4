"""read, grep, ast_grep and edit on an nbformat 3 notebook."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat

# An IPython 2 (nbformat 3) notebook: worksheets, `input`, a heading cell, a PNG output.
V3_NOTEBOOK = Path(__file__).parents[1] / "notebooks" / "data" / "old_rates_nbformat3.json"


def v3_text() -> str:
    return V3_NOTEBOOK.read_text()


async def test_read_grep_and_ast_grep_see_an_nbformat3_notebooks_cells(runtime, root):
    (root / "old.ipynb").write_text(v3_text())
    run = await runtime.create_run()
    read = await run.call("read", {"path": "old.ipynb"})
    assert read.ok, read.error
    assert read.text.splitlines()[:5] == [
        "old.ipynb: python notebook, 4 cells", "[cell 1] markdown", "1\t## Old analysis of rates",
        "[cell 2] code, python, run [3]", "1\timport math"]
    assert "nbformat 3.0, shown upgraded to nbformat 4" in read.text
    assert read.data["nbformat"] == "3.0" and read.data["cells"][1]["id"] is None
    found = await run.call("grep", {"pattern": "rate"})
    assert found.ok and "invalid_notebook" not in found.data["skipped"], found.data
    assert [(m["cell"], m["line"], m["text"]) for m in found.data["matches"]] == [
        (1, 1, "## Old analysis of rates"), (2, 2, "rate = math.pi / 2"), (2, 3, "print(rate)"),
        (3, 1, "The *rate* is half of pi."), (4, 1, "raw rate")]
    structural = await run.call("ast_grep", {"pattern": "print($X)", "path": "old.ipynb"})
    assert structural.ok, structural.error
    assert [(m["cell"], m["start"], m["text"]) for m in structural.data["matches"]] == [
        (2, [3, 1], "print(rate)")]


async def test_edit_of_an_nbformat3_notebook_saves_it_as_nbformat_4_and_says_so(runtime, root):
    path = root / "old.ipynb"
    path.write_text(v3_text())
    run = await runtime.create_run()
    result = await run.call("edit", {"path": "old.ipynb", "cell": 2,
                                     "old_string": "math.pi / 2", "new_string": "math.tau / 4"})
    assert result.ok, result.error
    assert "saved as nbformat 4.5: the file was nbformat 3.0" in result.text
    assert result.data["nbformat"] == "4.5" and result.data["upgraded_from"] == "3.0"
    saved = nbformat.read(str(path), as_version=nbformat.NO_CONVERT)
    assert (saved.nbformat, saved.nbformat_minor) == (4, 5)
    assert saved.cells[1].source == "import math\nrate = math.tau / 4\nprint(rate)"
    assert saved.cells[1].outputs[0].text == "1.5707\n"
    # From now on it is an ordinary nbformat 4.5 notebook: its ids stay.
    again = await run.call("read", {"path": "old.ipynb"})
    assert again.data["nbformat"] == "4.5"
    assert [c["id"] for c in again.data["cells"]] == [c.id for c in saved.cells]
    plain = await run.call("edit", {"path": "old.ipynb", "cell": 2, "old_string": "tau",
                                    "new_string": "pi"})
    assert plain.ok and "upgraded_from" not in plain.data and "nbformat 3" not in plain.text


async def test_an_old_notebook_nbformat_cannot_upgrade_is_shown_as_text(runtime, root):
    (root / "bad.ipynb").write_text(json.dumps({"nbformat": 3, "metadata": {}}))
    run = await runtime.create_run()
    read = await run.call("read", {"path": "bad.ipynb"})
    assert read.ok and "shown as text: bad.ipynb is nbformat 3" in read.text
    edit = await run.call("edit", {"path": "bad.ipynb", "cell": 1, "old_string": "a",
                                   "new_string": "b"})
    assert edit.code == "failed" and "nbconvert" in edit.error["message"]


async def test_ast_edit_of_an_nbformat3_notebook_says_it_saves_nbformat_4(runtime, root):
    path = root / "old.ipynb"
    path.write_text(v3_text())
    run = await runtime.create_run()
    staged = await run.call("ast_edit", {"pattern": "print($X)", "rewrite": "show($X)",
                                         "path": "old.ipynb"})
    assert staged.ok, staged.error
    assert staged.data["upgraded_notebooks"] == {"old.ipynb": "3.0"}
    assert "old.ipynb is nbformat 3.0: accepting saves it as nbformat 4.5" in staged.text
    accepted = await run.call("resolve", {"edit_id": staged.data["edit_id"], "action": "accept"})
    assert accepted.ok and "saved it as nbformat 4.5" in accepted.text
    saved = nbformat.read(str(path), as_version=nbformat.NO_CONVERT)
    assert (saved.nbformat, saved.nbformat_minor) == (4, 5)
    assert saved.cells[1].source.endswith("show(rate)")
