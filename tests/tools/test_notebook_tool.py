"""notebook on a closed notebook (an embedded runtime: no server, so no open documents):
cells changed in the file's own style, run in a real kernel with outputs saved into the file,
addresses by number and id, and the refusals."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


def write_notebook(path: Path, *cells, minor: int | None = None) -> None:
    notebook = new_notebook(cells=list(cells), metadata={"kernelspec": KERNELSPEC})
    if minor is not None:  # an older notebook: no cell ids
        notebook.nbformat_minor = minor
        for cell in notebook.cells:
            cell.pop("id", None)
    nbformat.write(notebook, path)


def cells_on_disk(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"])


@pytest.fixture
def notebook_runtime(runtime_factory):
    return runtime_factory({"KernelFactory": {"warm_pool": {}, "idle_timeout_seconds": 30.0}})


async def test_cells_are_inserted_moved_retyped_and_deleted_by_number_or_id(
        notebook_runtime, root):
    path = root / "analysis.ipynb"
    write_notebook(path, new_markdown_cell("# Sales"), new_code_cell("sales = [3, 5, 8]"),
                   minor=4)
    run = await notebook_runtime.create_run()

    # An old notebook without ids gets them as JupyterLab gives them, and says so.
    inserted = await run.call("notebook", {"action": "insert", "path": "analysis.ipynb",
                                           "source": "total = sum(sales)\ntotal"})
    assert inserted.ok, inserted.text
    assert "now have ids" in inserted.text and "nbformat 4.5" in inserted.text
    saved = json.loads(path.read_text())
    assert saved["nbformat_minor"] == 5 and all(cell["id"] for cell in saved["cells"])
    total_id = inserted.data["cells"][0]["id"]
    assert inserted.data["cells"] == [{"cell": 3, "id": total_id}]
    assert inserted.data["cell_count"] == 3 and inserted.data["shared_document"] is False
    # The file's style is kept: sources as lists of lines, as nbformat wrote them.
    assert saved["cells"][2]["source"] == ["total = sum(sales)\n", "total"]

    # After a cell, addressed by id; at a position, by index.
    first_code = saved["cells"][1]["id"]
    note = await run.call("notebook", {"action": "insert", "path": "analysis.ipynb",
                                       "cell": first_code, "cell_type": "markdown",
                                       "source": "The total of the sales:"})
    assert note.data["cells"][0]["cell"] == 3
    top = await run.call("notebook", {"action": "insert", "path": "analysis.ipynb",
                                      "index": 1, "cell_type": "raw", "source": "draft"})
    assert top.data["cells"][0]["cell"] == 1
    assert [source(c) for c in cells_on_disk(path)] == [
        "draft", "# Sales", "sales = [3, 5, 8]", "The total of the sales:",
        "total = sum(sales)\ntotal"]

    moved = await run.call("notebook", {"action": "move", "path": "analysis.ipynb",
                                        "cell": total_id, "index": 2})
    assert moved.ok and moved.data["cells"] == [{"cell": 2, "id": total_id}]
    retyped = await run.call("notebook", {"action": "set_type", "path": "analysis.ipynb",
                                          "cell": 1, "cell_type": "markdown"})
    assert retyped.ok and "from raw to markdown" in retyped.text
    deleted = await run.call("notebook", {"action": "delete", "path": "analysis.ipynb",
                                          "cell": total_id})
    assert deleted.ok and deleted.data["deleted"] == {"cell": 2, "id": total_id}
    on_disk = cells_on_disk(path)
    assert [(c["cell_type"], source(c)) for c in on_disk] == [
        ("markdown", "draft"), ("markdown", "# Sales"), ("code", "sales = [3, 5, 8]"),
        ("markdown", "The total of the sales:")]
    assert "outputs" not in on_disk[0] and on_disk[2]["outputs"] == []

    # A number as a string, as some agents send it, is a number.
    as_text = await run.call("notebook", {"action": "set_source", "path": "analysis.ipynb",
                                          "cell": "4", "source": "The sum:"})
    assert as_text.ok and source(cells_on_disk(path)[3]) == "The sum:"


async def test_bad_cells_and_places_name_the_valid_ones_and_change_nothing(
        notebook_runtime, root):
    path = root / "analysis.ipynb"
    write_notebook(path, new_code_cell("a = 1"), new_code_cell("b = 2"))
    before = path.read_bytes()
    run = await notebook_runtime.create_run()
    calls = {
        "unknown id": {"action": "delete", "cell": "no-such-id"},
        "number out of range": {"action": "set_source", "cell": 3, "source": "x"},
        "index past the end": {"action": "insert", "index": 4, "source": "x"},
        "move past the end": {"action": "move", "cell": 1, "index": 3},
        "both places": {"action": "insert", "index": 1, "cell": 1, "source": "x"},
        "run a markdown insert": {"action": "insert", "cell_type": "markdown", "source": "x",
                                  "run": True},
        "no cell to run": {"action": "run"},
        "missing source": {"action": "set_source", "cell": 1},
    }
    for what, args in calls.items():
        result = await run.call("notebook", {"path": "analysis.ipynb", **args})
        assert result.code == "invalid_arguments", (what, result.error)
    unknown = await run.call("notebook", {"action": "delete", "path": "analysis.ipynb",
                                          "cell": "no-such-id"})
    assert "has 2 cells" in unknown.error["message"]
    far = await run.call("notebook", {"action": "insert", "path": "analysis.ipynb",
                                      "index": 9, "source": "x"})
    assert "positions 1 to 3" in far.error["message"]
    needs = await run.call("notebook", {"action": "set_source", "path": "analysis.ipynb",
                                        "cell": 1})
    assert "notebook set_source needs `source`" in needs.error["message"]
    assert path.read_bytes() == before

    missing = await run.call("notebook", {"action": "insert", "path": "nope.ipynb",
                                          "source": "x"})
    assert missing.code == "not_found"
    (root / "notes.txt").write_text("hello\n")
    not_notebook = await run.call("notebook", {"action": "insert", "path": "notes.txt",
                                               "source": "x"})
    assert not_notebook.code == "invalid_arguments" and "not a notebook" in not_notebook.text
    outside = await run.call("notebook", {"action": "insert", "path": "../x.ipynb",
                                          "source": "x"})
    assert outside.code == "path_outside_root"


async def test_a_cell_changed_since_it_was_read_is_not_overwritten(notebook_runtime, root):
    path = root / "analysis.ipynb"
    write_notebook(path, new_code_cell("threshold = 10"))
    run = await notebook_runtime.create_run()
    listing = await run.call("read", {"path": "analysis.ipynb"})
    cell_id = listing.data["cells"][0]["id"]
    assert f"[cell 1, id {cell_id}]" in listing.text
    # The human changes the cell and saves, after the agent read it.
    notebook = nbformat.read(path, 4)
    notebook.cells[0].source = "threshold = 12  # tuned by hand"
    nbformat.write(notebook, path)
    for args in ({"action": "set_source", "source": "threshold = 20"},
                 {"action": "delete"}, {"action": "set_type", "cell_type": "markdown"}):
        refused = await run.call("notebook", {"path": "analysis.ipynb", "cell": cell_id, **args})
        assert refused.code == "stale_edit", (args, refused.error)
        assert "read it" in refused.error["message"]
    assert nbformat.read(path, 4).cells[0].source == "threshold = 12  # tuned by hand"
    # Read again: the change goes through.
    await run.call("read", {"path": "analysis.ipynb"})
    changed = await run.call("notebook", {"action": "set_source", "path": "analysis.ipynb",
                                          "cell": cell_id, "source": "threshold = 20"})
    assert changed.ok, changed.error
    # Its own change is what it has seen: it may change the cell again without reading.
    again = await run.call("notebook", {"action": "set_source", "path": "analysis.ipynb",
                                        "cell": 1, "source": "threshold = 30"})
    assert again.ok, again.error


async def test_cells_run_in_the_notebooks_kernel_and_their_outputs_are_saved(
        notebook_runtime, root):
    path = root / "analysis.ipynb"
    write_notebook(path, new_markdown_cell("# Sales"), new_code_cell("sales = [3, 5, 8]"),
                   new_code_cell("print('total', sum(sales))\nsum(sales) * 2"))
    run = await notebook_runtime.create_run()
    result = await run.call("notebook", {"action": "run_all", "path": "analysis.ipynb"})
    assert result.ok, result.text
    assert [cell["cell"] for cell in result.data["cells"]] == [2, 3]
    assert "total 16" in result.text and "32" in result.text
    assert "markdown" not in result.text  # run_all passes markdown cells by silently
    saved = nbformat.read(path, 4).cells
    assert saved[2].outputs[0] == {"output_type": "stream", "name": "stdout",
                                   "text": "total 16\n"}
    assert saved[2].outputs[1]["data"]["text/plain"] == "32"
    assert saved[2].execution_count == result.data["execution_count"] == \
        saved[1].execution_count + 1

    # A figure comes back as an image block and is saved as the notebook would save it.
    plotted = await run.call("notebook", {
        "action": "insert", "path": "analysis.ipynb", "run": True,
        "source": "import matplotlib\nmatplotlib.use('module://matplotlib_inline.backend_inline')"
                  "\nimport matplotlib.pyplot as plt\nplt.plot(sales)\nplt.show()"})
    assert plotted.ok, plotted.text
    assert any(block["type"] == "image" for block in plotted.blocks)
    figure = nbformat.read(path, 4).cells[3].outputs
    assert any("image/png" in output.get("data", {}) for output in figure)

    # A markdown cell named in run has nothing to run, and says so.
    told = await run.call("notebook", {"action": "run", "path": "analysis.ipynb", "cell": 1})
    assert told.ok and "cell 1 is a markdown cell: nothing to run" in told.text


async def test_a_failing_cell_stops_the_run_and_its_traceback_is_in_the_notebook(
        notebook_runtime, root):
    path = root / "analysis.ipynb"
    write_notebook(path, new_code_cell("rate = 1 / 0"), new_code_cell("print('after')"))
    run = await notebook_runtime.create_run()
    failed = await run.call("notebook", {"action": "run_all", "path": "analysis.ipynb"})
    assert failed.code == "failed" and "ZeroDivisionError" in failed.error["message"]
    assert "The 1 code cell after it did not run" in failed.error["message"]
    assert "ZeroDivisionError" in failed.text
    assert failed.data["cells"][0]["status"] == "error"
    saved = nbformat.read(path, 4).cells
    assert saved[0].outputs[0]["output_type"] == "error" and saved[1].outputs == []


async def test_a_cell_past_its_timeout_is_interrupted_and_says_so(notebook_runtime, root):
    path = root / "slow.ipynb"
    write_notebook(path, new_code_cell(
        "import time\nfor step in range(600):\n    print(step, flush=True)\n    time.sleep(0.05)"),
        new_code_cell("print('next')"))
    run = await notebook_runtime.create_run()
    stopped = await run.call("notebook", {"action": "run_all", "path": "slow.ipynb",
                                          "timeout_seconds": 1.0})
    assert stopped.code == "timeout" and "interrupted" in stopped.error["message"]
    assert "0\n1\n" in stopped.text  # what it printed before
    saved = nbformat.read(path, 4).cells
    assert any(o.get("ename") == "KeyboardInterrupt" for o in saved[0].outputs)
    assert saved[1].outputs == []
    # The kernel is still the same, and runs the next cell.
    after = await run.call("notebook", {"action": "run", "path": "slow.ipynb", "cell": 2})
    assert after.ok and "next" in after.text
    too_long = await run.call("notebook", {"action": "run", "path": "slow.ipynb", "cell": 2,
                                           "timeout_seconds": 10 ** 6})
    assert too_long.code == "invalid_arguments" and "max_notebook_run_timeout_seconds" in \
        too_long.error["message"]


async def test_a_kernel_that_dies_under_a_cell_is_kernel_died_and_the_cell_says_so(
        notebook_runtime, root):
    path = root / "crash.ipynb"
    write_notebook(path, new_code_cell("import os\nos._exit(1)"))
    run = await notebook_runtime.create_run()
    died = await run.call("notebook", {"action": "run", "path": "crash.ipynb", "cell": 1})
    assert died.code == "kernel_died", died.error
    outputs = nbformat.read(path, 4).cells[0].outputs
    assert "the kernel stopped while this cell ran" in outputs[-1]["text"]
    # Restart gives a fresh kernel that runs cells again.
    restarted = await run.call("notebook", {"action": "restart", "path": "crash.ipynb"})
    assert restarted.ok and "variables are gone" in restarted.text
    fine = await run.call("notebook", {"action": "insert", "path": "crash.ipynb",
                                       "source": "2 + 2", "run": True})
    assert fine.ok and "4" in fine.text


async def test_cell_changes_are_write_tier_and_runs_exec_tier(runtime_factory, root):
    path = root / "analysis.ipynb"
    write_notebook(path, new_code_cell("x = 1"))
    runtime = runtime_factory()
    plan = await runtime.create_run(surface="plan")
    assert "notebook" not in plan.tool_names()
    hidden = await plan.call("notebook", {"action": "list"})
    assert hidden.code == "unknown_tool"
    denied = await runtime.create_run(approvals="deny")
    listed = await denied.call("notebook", {"action": "list"})
    assert listed.ok  # list only reads
    for args, tier in (({"action": "insert", "source": "y = 2"}, "write"),
                       ({"action": "run", "cell": 1}, "exec"),
                       ({"action": "insert", "source": "y = 2", "run": True}, "exec")):
        refused = await denied.call("notebook", {"path": "analysis.ipynb", **args})
        assert refused.code == "permission_denied" and f"{tier}-tier" in refused.text
    assert len(nbformat.read(path, 4).cells) == 1


async def test_a_notebook_deleted_while_a_cell_runs_is_a_clear_error_and_nothing_is_written(
        notebook_runtime, root):
    path = root / "vanishing.ipynb"
    write_notebook(path, new_code_cell("import time\ntime.sleep(1.5)\nprint('done')"))
    run = await notebook_runtime.create_run()
    call = asyncio.ensure_future(run.call("notebook", {"action": "run", "path": "vanishing.ipynb",
                                                       "cell": 1}))
    await asyncio.sleep(0.8)
    path.rename(root / "renamed.ipynb")
    result = await call
    assert result.code == "not_found" and "vanishing.ipynb" in result.error["message"]
    assert not path.exists()
    assert nbformat.read(root / "renamed.ipynb", 4).cells[0].outputs == []


async def test_a_notebook_over_the_size_limit_is_refused_before_anything_changes(
        runtime_factory, root):
    path = root / "big.ipynb"
    write_notebook(path, new_code_cell("x = '" + "a" * 5_000 + "'"))
    before = path.read_bytes()
    runtime = runtime_factory(max_notebook_bytes=2_000)
    run = await runtime.create_run()
    refused = await run.call("notebook", {"action": "insert", "path": "big.ipynb",
                                          "source": "y = 1"})
    assert refused.code == "invalid_arguments" and "max_notebook_bytes" in refused.text, \
        refused.error
    assert path.read_bytes() == before


async def test_a_change_is_reverted_while_the_cell_holds_what_the_agent_left(
        notebook_runtime, root):
    path = root / "analysis.ipynb"
    write_notebook(path, new_code_cell("a = 1"), new_code_cell("b = 2"), new_code_cell("c = 3"))
    run = await notebook_runtime.create_run()

    def call(**args):
        return run.call("notebook", {"path": "analysis.ipynb", **args})

    def revert(change):
        return run.call("notebook", {"action": "revert", "change_id": change.data["change_id"]})

    inserted = await call(action="insert", index=2, source="x = 0")
    rewritten = await call(action="set_source", cell=3, source="b = 20")
    moved = await call(action="move", cell=4, index=1)
    retyped = await call(action="set_type", cell=3, cell_type="markdown")
    deleted = await call(action="delete", cell=2)
    assert [source(c) for c in cells_on_disk(path)] == ["c = 3", "x = 0", "b = 20"]
    assert all(r.ok and r.data["change_id"] for r in
               (inserted, rewritten, moved, retyped, deleted))

    for change in (deleted, retyped, moved, rewritten, inserted):
        undone = await revert(change)
        assert undone.ok, undone.error
        assert undone.data["reverted"] == change.data["change_id"]
    on_disk = cells_on_disk(path)
    assert [(c["cell_type"], source(c)) for c in on_disk] == [
        ("code", "a = 1"), ("code", "b = 2"), ("code", "c = 3")]

    again = await revert(inserted)
    assert again.code == "invalid_arguments" and "reverted once" in again.error["message"]

    # A cell the human changed after the agent is not reverted: the call says what changed.
    rewritten = await call(action="set_source", cell=1, source="a = 10\nprint(a)")
    notebook = nbformat.read(path, 4)
    notebook.cells[0].source = "a = 10\nprint(a, 'checked')"
    nbformat.write(notebook, path)
    refused = await revert(rewritten)
    assert refused.code == "stale_edit" and "print(a, 'checked')" in refused.error["message"]
    assert nbformat.read(path, 4).cells[0].source == "a = 10\nprint(a, 'checked')"


async def test_a_notebook_outside_the_runs_folder_is_checked_for_stale_cells_too(
        notebook_runtime, root):
    (root / "proj").mkdir()
    path = root / "shared.ipynb"
    write_notebook(path, new_code_cell("threshold = 10"))
    run = await notebook_runtime.create_run(cwd="proj")
    cell_id = (await run.call("read", {"path": "../shared.ipynb"})).data["cells"][0]["id"]
    notebook = nbformat.read(path, 4)
    notebook.cells[0].source = "threshold = 12"
    nbformat.write(notebook, path)
    refused = await run.call("notebook", {"action": "set_source", "path": "../shared.ipynb",
                                          "cell": cell_id, "source": "threshold = 20"})
    assert refused.code == "stale_edit", refused.error
    assert nbformat.read(path, 4).cells[0].source == "threshold = 12"
