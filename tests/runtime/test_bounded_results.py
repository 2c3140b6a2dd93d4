"""Everything an agent receives is bounded and legible: structured content like the text, and
every image (eval's, notebook run's, read's) through one cap that reduces colours and picks
the format before it shrinks pixels. Real kernels, real notebooks, real Pillow."""

from __future__ import annotations

import base64
import io
import json
import random
import re

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output
from PIL import Image

from jupyter_agent_tools.notebooks.images import fit_image
from jupyter_agent_tools.runtime.limits import MIN_VALUE_CHARS, bound_data

BIG_FIGURE = (
    "import matplotlib.pyplot as plt\n"
    "figure, axes = plt.subplots(figsize=(13.08, 7.37), dpi=300)\n"
    "axes.plot(range(400), [(x % 37) ** 1.5 for x in range(400)], label='region sales')\n"
    "axes.set_title('Sales by region'); axes.legend()\nplt.show()")


@pytest.fixture
def kernels_runtime(runtime_factory):
    return runtime_factory({"KernelFactory": {"warm_pool": {}, "idle_timeout_seconds": 30.0}})


def _image(block: dict) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(block["data"])))


async def test_a_big_plot_from_eval_and_notebook_run_comes_back_legible_within_the_cap(
        kernels_runtime, root):
    run = await kernels_runtime.create_run()
    result = await run.call("eval", {"code": BIG_FIGURE,
                                     "description": "draw one large sales plot here"})
    assert result.ok, result.text
    (block,) = [b for b in result.blocks if b["type"] == "image"]
    assert len(base64.b64decode(block["data"])) <= 40_000
    with _image(block) as image:
        assert image.size[0] >= 1200 and image.mode == "P"  # colours reduced, pixels kept
    assert re.search(r"\[image 1: image/png \d{4}x\d+, [\d,]+ bytes \(downscaled as palette PNG "
                     r"from \d{4}x\d{4}, [\d,]+ bytes\)\]", result.text), result.text

    nbformat.write(new_notebook(cells=[new_code_cell(BIG_FIGURE)], metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}}),
        root / "plots.ipynb")
    ran = await run.call("notebook", {"action": "run_all", "path": "plots.ipynb"})
    assert ran.ok, ran.text
    (block,) = [b for b in ran.blocks if b["type"] == "image"]
    assert len(base64.b64decode(block["data"])) <= 40_000
    with _image(block) as image:
        assert image.size[0] >= 1200
    # The notebook keeps the figure as the kernel made it: only what the agent sees is fitted.
    saved = nbformat.read(root / "plots.ipynb", 4).cells[0].outputs[0]["data"]["image/png"]
    assert len(base64.b64decode(saved)) > 40_000


def test_a_photo_becomes_a_jpeg_before_it_shrinks_and_only_then_smaller():
    noise, width, height = random.Random(7), 900, 600
    pixels = bytearray()
    for y in range(height):  # smooth gradients with grain: thousands of colours, as a photo
        for x in range(width):
            grain = noise.randrange(24)
            pixels += bytes(((x * 255 // width + grain) % 256, (y * 255 // height + grain) % 256,
                             ((x + y) * 127 // (width + height) + grain) % 256))
    photo = Image.frombytes("RGB", (width, height), bytes(pixels))
    buffer = io.BytesIO()
    photo.save(buffer, "PNG")
    fitted = fit_image(buffer.getvalue(), "image/png", 200_000)
    assert fitted.mime_type == "image/jpeg" and fitted.reduced == "JPEG"
    assert fitted.data is not None and len(fitted.data) <= 200_000
    assert fitted.size == (900, 600)  # fits once re-encoded: no pixel lost
    smaller = fit_image(buffer.getvalue(), "image/png", 40_000)
    assert smaller.data is not None and len(smaller.data) <= 40_000
    assert smaller.size is not None and 64 <= smaller.size[0] < 900
    assert "downscaled as JPEG from 900x600" in smaller.line()


async def test_structured_content_is_bounded_like_the_text(runtime_factory, root):
    table = "\n".join(f"{row:>8} region-{row % 17:<4} {row * 3.25:>12.2f}"
                      for row in range(120_000))  # df.to_string() of a big frame
    nbformat.write(new_notebook(cells=[new_code_cell(
        "print(df.to_string())", execution_count=1,
        outputs=[new_output("stream", name="stdout", text=table)])]), root / "big.ipynb")
    run = await runtime_factory().create_run()
    result = await run.call("read", {"path": "big.ipynb", "outputs": True})
    assert result.ok, result.text
    assert len(table) > 3_000_000
    assert len(json.dumps(result.data)) < 40_000 and result.data["truncated"] is True
    assert len(result.text) < 31_000
    # What is kept is legible: the table's head and tail, the cut said in between.
    shown = json.dumps(result.data)
    assert "region-1" in shown and "characters omitted of" in shown
    assert json.loads(json.dumps(result.to_json()))["data"]["truncated"] is True


def test_bound_data_cuts_the_longest_strings_first_and_keeps_the_rest():
    data = {"path": "a.ipynb", "cells": [{"cell": 1, "text": "x" * 100_000},
                                         {"cell": 2, "text": "short"}], "count": 3}
    bounded, cut = bound_data(data, 30_000)
    assert cut and bounded["path"] == "a.ipynb" and bounded["count"] == 3
    assert bounded["cells"][1] == {"cell": 2, "text": "short"}
    assert 29_000 < len(bounded["cells"][0]["text"]) < 30_200
    assert data["cells"][0]["text"] == "x" * 100_000  # the tool's own data is not changed
    # Many short strings are never cut below a legible length.
    many = {"lines": ["y" * 300] * 200}
    assert bound_data(many, 30_000) == (many, False)
    wide = {"lines": ["z" * 2_000] * 100}
    bounded, cut = bound_data(wide, 30_000)
    assert cut and all(len(line) < 2_000 for line in bounded["lines"])
    assert all(len(line) >= MIN_VALUE_CHARS for line in bounded["lines"])
