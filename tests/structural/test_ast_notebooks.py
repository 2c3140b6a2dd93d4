"""ast_grep / ast_edit / resolve on notebooks: code cells searched in the kernel's language,
matches addressed by cell, IPython syntax masked, rewrites that change only cell sources."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

PYTHON_CELLS = [
    new_markdown_cell("# Analysis\nprint('not code')\n![chart](attachment:chart.png)",
                      attachments={"chart.png": {"image/png": "iVBORw0KGgo="}}),
    new_code_cell("import pandas as pd\n%matplotlib inline\ndf = load('data.csv')",
                  execution_count=1),
    new_code_cell("%%time\nprint(df.head())\nfiles = !ls\n!pip install seaborn\ndf?",
                  execution_count=2,
                  outputs=[new_output("stream", name="stdout", text="   a  b\n0  1  2\n"),
                           new_output("display_data",
                                      data={"image/png": "iVBORw0KGgo=", "text/plain": "<Fig>"},
                                      metadata={"needs_background": "light"})]),
    new_code_cell("%%bash\necho print(x)"),
    new_code_cell("def show(frame):\n    print(frame)\n    return load(frame)"),
    new_code_cell("def timed():\n    %time show(df)\n    return df"),
]


def write_notebook(path: Path, cells, kernelspec: dict, language_info: dict,
                   **metadata) -> bytes:
    """A notebook written by nbformat as JupyterLab saves it; its bytes."""
    notebook = new_notebook(cells=cells, metadata={"kernelspec": kernelspec,
                                                   "language_info": language_info, **metadata})
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, str(path))
    return path.read_bytes()


def python_notebook(path: Path) -> bytes:
    return write_notebook(
        path, PYTHON_CELLS,
        {"name": "python3", "display_name": "Python 3", "language": "python"},
        {"name": "python", "version": "3.12.0"}, tags=["kept"])


def deno_notebook(path: Path) -> bytes:
    return write_notebook(
        path, [new_code_cell("const rows = load('data.csv');\nconsole.log(rows.length);"),
               new_markdown_cell("console.log(nothing)"),
               new_code_cell("function show(x: number): void {\n  console.log(x);\n}")],
        {"name": "deno", "display_name": "Deno", "language": "typescript"},
        {"name": "typescript", "file_extension": ".ts"})


async def test_matches_are_addressed_by_cell_and_line_within_it(run, root):
    python_notebook(root / "analysis.ipynb")
    (root / "helpers.py").write_text("print('module')\n")
    res = await run.call("ast_grep", {"pattern": "print($A)", "language": "python"})
    assert res.ok, res.text
    found = {(m["file"], m.get("cell"), tuple(m["start"]), m["text"])
             for m in res.data["matches"]}
    # Markdown and %%bash cells are not Python; the %%time cell's body is.
    assert found == {("analysis.ipynb", 3, (2, 1), "print(df.head())"),
                     ("analysis.ipynb", 5, (2, 5), "print(frame)"),
                     ("helpers.py", None, (1, 1), "print('module')")}
    assert "analysis.ipynb [cell 3] 2:1: print(df.head())" in res.text
    assert "analysis.ipynb [cell 5] 2:5: print(frame)" in res.text
    assert "helpers.py:1:1: print('module')" in res.text
    assert res.data["files_searched"] == 2 and res.data["parse_errors"] == []


async def test_magics_neither_break_parsing_nor_match(run, root):
    python_notebook(root / "analysis.ipynb")
    # `files = !ls` is masked as `files = ...`: an assignment pattern must not see it.
    res = await run.call("ast_grep", {"pattern": "$NAME = $VALUE", "path": "analysis.ipynb"})
    assert res.ok, res.text
    assert [(m["cell"], m["text"]) for m in res.data["matches"]] == [
        (2, "df = load('data.csv')")]
    assert res.data["parse_errors"] == []
    # Nor do names that appear only inside magics, shell commands and help requests.
    for pattern in ("matplotlib", "pip", "seaborn", "ls", "df.head"):
        found = await run.call("ast_grep", {"pattern": pattern, "path": "analysis.ipynb"})
        assert found.ok, found.text
        assert [m["cell"] for m in found.data["matches"]] == (
            [3] if pattern == "df.head" else []), (pattern, found.text)


async def test_a_notebook_is_searched_in_its_kernels_language(run, root):
    deno_notebook(root / "deno.ipynb")
    python_notebook(root / "analysis.ipynb")
    inferred = await run.call("ast_grep", {"pattern": "console.log($X)", "path": "deno.ipynb"})
    assert inferred.ok, inferred.text
    assert inferred.data["language"] == "typescript"
    assert [(m["cell"], m["start"], m["captures"]["X"]) for m in inferred.data["matches"]] == [
        (1, [2, 1], "rows.length"), (3, [2, 3], "x")]
    # A folder search in typescript reads the Deno notebook, not the Python one.
    folder = await run.call("ast_grep", {"pattern": "load($F)", "language": "typescript"})
    assert folder.ok, folder.text
    assert [(m["file"], m["cell"]) for m in folder.data["matches"]] == [("deno.ipynb", 1)]
    assert folder.data["files_searched"] == 1
    wrong = await run.call("ast_grep", {"pattern": "load($F)", "path": "deno.ipynb",
                                        "language": "python"})
    assert wrong.code == "invalid_arguments", wrong.text
    assert "typescript notebook" in wrong.error["message"]


async def test_code_escaped_in_the_json_is_found(run, root):
    # A writer that escapes non-ASCII (json's ensure_ascii): `café` is `caf\u00e9` on disk.
    notebook = new_notebook(cells=[new_markdown_cell("notes"),
                                   new_code_cell('café = 1\nprint(café, "a \\"quote\\"")')],
                            metadata={"kernelspec": {"name": "python3", "language": "python",
                                                     "display_name": "Python 3"}})
    (root / "escaped.ipynb").write_text(json.dumps(notebook, indent=1, ensure_ascii=True))
    assert "caf\\u00e9" in (root / "escaped.ipynb").read_text()
    for pattern in ("print(café, $S)", 'print($A, "a \\"quote\\"")'):
        res = await run.call("ast_grep", {"pattern": pattern, "language": "python"})
        assert res.ok, res.text
        assert [(m["cell"], m["start"]) for m in res.data["matches"]] == [(2, [2, 1])], pattern


async def test_rewrite_changes_only_cell_sources(run, root):
    path = root / "analysis.ipynb"
    before = python_notebook(path)
    staged = await run.call("ast_edit", {"pattern": "print($A)", "rewrite": "display($A)",
                                         "path": "analysis.ipynb"})
    assert staged.ok, staged.text
    assert staged.data["files"] == {"analysis.ipynb": 2}
    diff = staged.data["diff"]
    assert "--- a/analysis.ipynb [cell 3]\n+++ b/analysis.ipynb [cell 3]\n" in diff
    assert "-print(df.head())\n+display(df.head())\n" in diff
    assert "[cell 5]" in diff and "-    print(frame)\n+    display(frame)\n" in diff
    assert path.read_bytes() == before  # staged, not written
    done = await run.call("resolve", {"edit_id": staged.data["edit_id"], "action": "accept"})
    assert done.ok, done.text
    after = path.read_bytes()
    old, new = json.loads(before), json.loads(after)
    assert "".join(new["cells"][2]["source"]) == ("%%time\ndisplay(df.head())\nfiles = !ls\n"
                                         "!pip install seaborn\ndf?")
    assert "".join(new["cells"][4]["source"]) == ("def show(frame):\n    display(frame)\n"
                                         "    return load(frame)")
    # Outputs, metadata, ids, attachments and nbformat's formatting are byte for byte as
    # they were.
    assert after.replace(b"display(", b"print(") == before
    assert new["cells"][0]["attachments"] == old["cells"][0]["attachments"]
    assert new["cells"][2]["outputs"] == old["cells"][2]["outputs"]
    nbformat.validate(nbformat.reads(after.decode(), as_version=4))


async def test_rewrite_of_a_notebook_changed_since_staging_is_refused(run, root):
    path = root / "analysis.ipynb"
    python_notebook(path)
    staged = await run.call("ast_edit", {"pattern": "print($A)", "rewrite": "display($A)",
                                         "path": "analysis.ipynb"})
    assert staged.ok, staged.text
    # The user runs a cell in JupyterLab and saves: only an output changed.
    saved = nbformat.read(str(path), as_version=4)
    saved.cells[1].execution_count = 7
    nbformat.write(saved, str(path))
    on_disk = path.read_bytes()
    refused = await run.call("resolve", {"edit_id": staged.data["edit_id"],
                                         "action": "accept"})
    assert refused.code == "stale_edit", refused.text
    assert refused.data["stale_files"] == ["analysis.ipynb"]
    assert path.read_bytes() == on_disk


async def test_rewrite_touching_a_magic_is_refused_with_why(run, root):
    path = root / "analysis.ipynb"
    before = python_notebook(path)
    # The function holds a line magic, masked in the code parsed: it is not rewritten there.
    res = await run.call("ast_edit", {"pattern": "def timed(): $$$BODY",
                                      "rewrite": "async def timed(): $$$BODY",
                                      "path": "analysis.ipynb"})
    assert res.code == "invalid_arguments", res.text
    assert "IPython syntax" in res.error["message"] and "cell 6" in res.error["message"]
    assert path.read_bytes() == before


def plotted_notebook(path: Path) -> bytes:
    """A 5 MB notebook: three small code cells, the second with a big plot among its outputs."""
    plot = "iVBORw0KGgo" * 460_000  # ~5 MB of base64 PNG, as a saved matplotlib figure
    return write_notebook(
        path, [new_code_cell("import numpy as np\nxs = np.arange(10)"),
               new_code_cell("plot(xs)\nprint(xs.sum())", execution_count=2,
                             outputs=[new_output("display_data",
                                                 data={"image/png": plot,
                                                       "text/plain": "<Figure>"})]),
               new_code_cell("print(xs.mean())")],
        {"name": "python3", "display_name": "Python 3", "language": "python"},
        {"name": "python", "version": "3.12.0"})


async def test_a_notebook_over_the_read_limit_is_searched_and_rewritten(run, root):
    before = plotted_notebook(root / "plots.ipynb")
    assert len(before) > 5_000_000 > run.runtime.max_read_bytes
    found = await run.call("ast_grep", {"pattern": "print($A)", "path": "plots.ipynb"})
    assert found.ok, found.text
    assert sorted((m["cell"], m["start"]) for m in found.data["matches"]) == [(2, [2, 1]),
                                                                          (3, [1, 1])]
    staged = await run.call("ast_edit", {"pattern": "print($A)", "rewrite": "log($A)",
                                         "path": "plots.ipynb"})
    assert staged.ok, staged.text
    accepted = await run.call("resolve", {"edit_id": staged.data["edit_id"], "action": "accept"})
    assert accepted.ok, accepted.text
    after = nbformat.read(root / "plots.ipynb", as_version=4)
    assert [cell.source for cell in after.cells][1:] == ["plot(xs)\nlog(xs.sum())",
                                                         "log(xs.mean())"]
    assert after.cells[1].outputs[0]["data"]["image/png"].startswith("iVBORw0KGgo")


async def test_a_notebook_over_its_own_limit_is_skipped(parser_runtime, root):
    plotted_notebook(root / "plots.ipynb")
    parser_runtime.max_notebook_bytes = 1_000_000
    run = await parser_runtime.create_run()
    found = await run.call("ast_grep", {"pattern": "print($A)", "language": "python"})
    assert found.ok and found.data["total"] == 0
    assert found.data["skipped"]["oversized"] == 1


async def test_a_rewrite_that_breaks_a_cell_names_the_cell_and_its_line(run, root):
    before = python_notebook(root / "analysis.ipynb")
    res = await run.call("ast_edit", {"pattern": "return load($A)", "rewrite": "return load(($A",
                                      "path": "analysis.ipynb"})
    assert res.code == "invalid_arguments", res.text
    # The function is cell 5's lines 1-3; the virtual document's line would be another.
    # The error starts at the rewritten `return`: line 3, column 5 of the cell.
    assert "breaks the python syntax at analysis.ipynb [cell 5] 3:5;" in res.error["message"]
    (broken,) = res.data["broken_files"]
    assert {key: broken[key] for key in ("file", "cell", "line", "column")} == {
        "file": "analysis.ipynb", "cell": 5, "line": 3, "column": 5}
    assert (root / "analysis.ipynb").read_bytes() == before
