"""notebook create: a new notebook as JupyterLab writes one (kernelspec, language_info, cell
ids, at least one cell so JupyterLab adds none), and run_all's counts on it (a real kernel)."""

from __future__ import annotations

import json
import platform

import nbformat
import pytest


@pytest.fixture
def notebook_runtime(runtime_factory):
    return runtime_factory({"KernelFactory": {"warm_pool": {}, "idle_timeout_seconds": 30.0}})


async def test_a_new_notebook_has_jupyterlabs_metadata_and_its_first_cells(
        notebook_runtime, root):
    run = await notebook_runtime.create_run()
    created = await run.call("notebook", {"action": "create", "path": "analysis.ipynb",
                                          "cells": ["sales = [3, 5, 8]", "total = sum(sales)"]})
    assert created.ok, created.text
    saved = json.loads((root / "analysis.ipynb").read_text())
    nbformat.validate(saved)
    assert (saved["nbformat"], saved["nbformat_minor"]) == (4, 5)
    assert saved["metadata"]["kernelspec"] == {"display_name": "Python 3 (ipykernel)",
                                               "language": "python", "name": "python3"}
    info = saved["metadata"]["language_info"]
    assert info["name"] == "python" and info["pygments_lexer"] == "ipython3"
    assert info["codemirror_mode"] == {"name": "ipython", "version": 3}
    assert info["version"] == platform.python_version()
    assert ["".join(c["source"]) for c in saved["cells"]] == ["sales = [3, 5, 8]",
                                                          "total = sum(sales)"]
    ids = [c["id"] for c in saved["cells"]]
    assert created.data["cells"] == [{"cell": 1, "id": ids[0]}, {"cell": 2, "id": ids[1]}]
    assert created.data["created"] is True and created.data["kernel"] == "python3"

    # The cells are the agent's own: a change right after is not stale.
    changed = await run.call("notebook", {"action": "set_source", "path": "analysis.ipynb",
                                          "cell": 2, "source": "total = max(sales)"})
    assert changed.ok, changed.text

    # Nothing is written over what exists, nor for a kernel the server lacks.
    again = await run.call("notebook", {"action": "create", "path": "analysis.ipynb"})
    assert again.code == "invalid_arguments" and "exists already" in again.error["message"]
    assert "".join(json.loads((root / "analysis.ipynb").read_text())["cells"][1]["source"]) == \
        "total = max(sales)"
    unknown = await run.call("notebook", {"action": "create", "path": "other.ipynb",
                                          "kernel": "cobol"})
    assert unknown.code == "invalid_arguments" and "python3" in unknown.error["message"]
    assert not (root / "other.ipynb").exists()
    plain = await run.call("notebook", {"action": "create", "path": "notes.txt"})
    assert plain.code == "invalid_arguments" and not (root / "notes.txt").exists()
    numbers = await run.call("notebook", {"action": "create", "path": "n.ipynb", "cells": [1]})
    assert numbers.code == "invalid_arguments" and not (root / "n.ipynb").exists()


async def test_with_no_cells_one_empty_cell_and_run_all_counts_hold(notebook_runtime, root):
    run = await notebook_runtime.create_run()
    created = await run.call("notebook", {"action": "create", "path": "fresh.ipynb"})
    assert created.ok, created.text
    assert created.data["cell_count"] == 1 and "one empty code cell" in created.text
    saved = json.loads((root / "fresh.ipynb").read_text())
    assert [(c["cell_type"], "".join(c["source"])) for c in saved["cells"]] == [("code", "")]

    for source in ("x = 20", "x + 1", "x * 2"):
        inserted = await run.call("notebook", {"action": "insert", "path": "fresh.ipynb",
                                               "source": source})
        assert inserted.ok, inserted.text
    ran = await run.call("notebook", {"action": "run_all", "path": "fresh.ipynb"})
    assert ran.ok, ran.text
    cells = json.loads((root / "fresh.ipynb").read_text())["cells"]
    # The empty cell is not run (as JupyterLab does not): no count repeated beside [1].
    assert [c["execution_count"] for c in cells] == [None, 1, 2, 3]
    assert [c["cell"] for c in ran.data["cells"]] == [2, 3, 4]
