"""read {path, cell, outputs: "images"}: one cell by number or id, and saved plots as images."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import nbformat
import pytest
from matplotlib.figure import Figure
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from PIL import Image

OLD_NOTEBOOK = Path(__file__).parents[1] / "notebooks" / "data" / "old_rates_nbformat3.json"


def _plot_png(dpi: int) -> bytes:
    """A real matplotlib line plot, as the inline backend saves it into a notebook."""
    figure = Figure(figsize=(8, 5))  # no pyplot: no backend, no global figure list
    axes = figure.subplots()
    axes.plot(range(200), [(x % 37) ** 1.5 for x in range(200)], label="sales")
    axes.scatter(range(0, 200, 3), [(x * 7) % 50 for x in range(0, 200, 3)], s=4)
    axes.set_title("Monthly sales")
    axes.legend()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def plots() -> dict[str, bytes]:
    return {"big": _plot_png(150), "small": _plot_png(20)}


def _write(root: Path, plots: dict[str, bytes]) -> nbformat.NotebookNode:
    def figure(png: bytes):
        return new_output("display_data", data={"image/png": base64.b64encode(png).decode(),
                                                "text/plain": "<Figure size 800x500>"})

    notebook = new_notebook(cells=[
        new_markdown_cell("# Sales"),
        new_code_cell("import matplotlib.pyplot as plt\nplt.plot(sales)", execution_count=1,
                      outputs=[new_output("stream", name="stdout", text="plotting\n"),
                               figure(plots["big"])]),
        new_code_cell("plt.plot(small)", execution_count=2, outputs=[figure(plots["small"])]),
        new_code_cell("svg", execution_count=3, outputs=[new_output(
            "display_data", data={"image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg'/>",
                                  "text/plain": "<svg>"})]),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                "language": "python"}})
    nbformat.write(notebook, str(root / "sales.ipynb"))
    return notebook


async def test_read_returns_saved_images_downscaled_to_the_limit(runtime_factory, root, plots):
    assert len(plots["big"]) > 40_000  # a plot as notebooks hold them: over the default limit
    _write(root, plots)
    run = await runtime_factory().create_run()
    result = await run.call("read", {"path": "sales.ipynb", "outputs": "images"})
    assert result.ok, result.error
    big, small = [block for block in result.blocks if block["type"] == "image"]
    svg = next(block for block in result.blocks if block["type"] == "svg")
    assert svg["svg"].startswith("<svg")
    shown = base64.b64decode(big["data"])
    assert big["mime_type"] == "image/png" and len(shown) <= 40_000
    with Image.open(io.BytesIO(shown)) as image, Image.open(io.BytesIO(plots["big"])) as saved:
        # Legible: its colours reduced (a palette PNG), not its pixels, since that fits.
        assert image.mode == "P" and image.size == saved.size == (1200, 750)
    assert base64.b64decode(small["data"]) == plots["small"]  # under the limit: as saved
    assert "[image 1: image/png 1200x750" in result.text
    assert "(re-encoded as palette PNG from 1200x750" in result.text
    assert result.data["cells"][1]["outputs"][1]["image"].startswith("image 1: image/png")
    # The text of the outputs is shown in full, as with outputs=true.
    assert "  | plotting" in result.text
    plain = await run.call("read", {"path": "sales.ipynb", "outputs": True})
    assert plain.blocks == [] and "image 1" not in plain.text


async def test_images_over_the_limit_or_the_count_are_left_out_saying_why(runtime_factory, root,
                                                                         plots):
    _write(root, plots)
    tiny = await runtime_factory(max_read_image_bytes=60).create_run()
    result = await tiny.call("read", {"path": "sales.ipynb", "outputs": "images"})
    assert result.ok and [b["type"] for b in result.blocks] == ["svg"]
    assert "not shown, " in result.text and "max_read_image_bytes" in result.text
    assert "[2 images left out: over the 60-byte limit" in result.text
    one = await runtime_factory(max_read_images=1).create_run()
    counted = await one.call("read", {"path": "sales.ipynb", "outputs": "images"})
    assert len(counted.blocks) == 1
    assert "images of cells 3, 4 not returned: at most 1 per read" in counted.text
    third = await one.call("read", {"path": "sales.ipynb", "cell": 3, "outputs": "images"})
    assert len(third.blocks) == 1
    assert base64.b64decode(third.blocks[0]["data"]) == plots["small"]


async def test_read_one_cell_by_number_or_by_id(runtime, root, plots):
    notebook = _write(root, plots)
    run = await runtime.create_run()
    by_number = await run.call("read", {"path": "sales.ipynb", "cell": 2})
    assert by_number.ok, by_number.error
    assert by_number.text.splitlines()[1:4] == [
        f"[cell 2, id {notebook.cells[1].id}] code, python, run [1]",
        "1\timport matplotlib.pyplot as plt", "2\tplt.plot(sales)"]
    assert "[cell 3" not in by_number.text and "offset=" not in by_number.text
    assert [c["cell"] for c in by_number.data["cells"]] == [2]
    assert by_number.blocks == [] and "outputs: stream stdout" in by_number.text
    by_id = await run.call("read", {"path": "sales.ipynb", "cell": notebook.cells[2].id})
    assert by_id.ok and [(c["cell"], c["id"]) for c in by_id.data["cells"]] == [
        (3, notebook.cells[2].id)]
    # A number sent as a string (some clients send every argument so) is a number.
    as_text = await run.call("read", {"path": "sales.ipynb", "cell": "4"})
    assert [c["cell"] for c in as_text.data["cells"]] == [4]


async def test_bad_cells_are_refused_naming_what_there_is(runtime, root, plots):
    _write(root, plots)
    (root / "old.ipynb").write_text(OLD_NOTEBOOK.read_text())
    (root / "notes.txt").write_text("hello\n")
    run = await runtime.create_run()
    unknown = await run.call("read", {"path": "sales.ipynb", "cell": "no-such-id"})
    assert unknown.code == "invalid_arguments"
    assert "no cell has the id 'no-such-id'; the notebook has 4 cells" in unknown.error["message"]
    assert "see each cell's id" in unknown.error["message"]
    past = await run.call("read", {"path": "sales.ipynb", "cell": 9})
    assert past.code == "invalid_arguments" and "has 4 cells" in past.error["message"]
    no_ids = await run.call("read", {"path": "old.ipynb", "cell": "abc"})
    assert no_ids.code == "invalid_arguments"
    assert "cells have no ids: nbformat before 4.5" in no_ids.error["message"]
    assert "Name the cell by number" in no_ids.error["message"]
    plain = await run.call("read", {"path": "notes.txt", "cell": 1})
    assert plain.code == "invalid_arguments" and "plain file" in plain.error["message"]
    paged = await run.call("read", {"path": "sales.ipynb", "cell": 1, "offset": 2})
    assert paged.code == "invalid_arguments" and "leave them out" in paged.error["message"]
    for bad in ({"cell": 0}, {"cell": ""}, {"outputs": "pictures"}):
        assert (await run.call("read", {"path": "sales.ipynb", **bad})).code == "invalid_arguments"


async def test_edit_names_a_cell_by_id_too(runtime, root, plots):
    notebook = _write(root, plots)
    run = await runtime.create_run()
    cell_id = notebook.cells[2].id
    result = await run.call("edit", {"path": "sales.ipynb", "cell": cell_id,
                                     "old_string": "small", "new_string": "tiny"})
    assert result.ok, result.error
    assert result.data["cell"] == 3 and "[cell 3] 1:10" in result.text
    assert nbformat.read(str(root / "sales.ipynb"), 4).cells[2].source == "plt.plot(tiny)"
    unknown = await run.call("edit", {"path": "sales.ipynb", "cell": "nope",
                                      "old_string": "a", "new_string": "b"})
    assert unknown.code == "invalid_arguments" and "'nope'" in unknown.error["message"]
