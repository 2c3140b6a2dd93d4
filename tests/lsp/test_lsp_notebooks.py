"""`lsp` on notebooks with a real basedpyright and ruff: places addressed by cell.

The servers see a notebook as its virtual document (the code cells joined, IPython syntax
masked) under a hidden `.py` name that never reaches the disk; answers come back by cell.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from jupyter_agent_tools.lsp.specs import find_executable

HELPERS = "def scale(values: list[float], factor: float) -> list[float]:\n" \
          "    return [v * factor for v in values]\n"

CELLS = [
    new_markdown_cell("# Analysis\nScaled totals."),
    new_code_cell("%matplotlib inline\n!pip install --quiet nothing\nfrom helpers import scale"),
    new_code_cell("def total(values: list[float]) -> float:\n    return sum(values)"),
    # An import below the first cell is how notebooks are written: not flagged (E402).
    new_code_cell("import json\n\ndata = [1.0, 2.0]\nscaled = scale(data, 2.0)\n"
                  "print(json.dumps(total(scaled)))"),
    new_code_cell("files = !ls\nprint(undefined_name, files)"),
    # The last expression is what the cell displays: not an unused value. The first one is.
    new_code_cell("class Box:\n    pass\n\n\nbox = Box()\nbox\nbox\n"),
]


def write_project(root: Path) -> Path:
    """A folder with a pyproject, a helper module and a Python notebook written by nbformat."""
    project = root / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'nb'\nversion = '0'\n")
    (project / "helpers.py").write_text(HELPERS)
    notebook = new_notebook(cells=CELLS, metadata={
        "kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}})
    nbformat.write(notebook, project / "analysis.ipynb")
    return project


async def test_hover_and_definition_by_cell(lsp_runtime, root):
    project = write_project(root)
    run = await lsp_runtime().create_run(cwd="proj")

    hover = await run.call("lsp", {"action": "hover", "file": "analysis.ipynb", "cell": 4,
                                   "line": 5, "symbol": "total"})
    assert hover.ok, hover.text
    assert "def total(values: list[float]) -> float" in hover.text

    in_other_cell = await run.call("lsp", {"action": "definition", "file": "analysis.ipynb",
                                           "cell": 4, "line": 5, "symbol": "total"})
    assert in_other_cell.ok, in_other_cell.text
    assert in_other_cell.data["locations"] == [{
        "path": "analysis.ipynb", "cell": 3, "line": 1, "column": 5,
        "text": "def total(values: list[float]) -> float:"}]
    assert "analysis.ipynb [cell 3] 1:5: def total" in in_other_cell.text

    in_module = await run.call("lsp", {"action": "definition", "file": "analysis.ipynb",
                                       "cell": 4, "line": 4, "symbol": "scale"})
    assert in_module.ok, in_module.text
    assert [(loc["path"], loc["line"]) for loc in in_module.data["locations"]] == [
        ("helpers.py", 1)]
    assert "cell" not in in_module.data["locations"][0]

    references = await run.call("lsp", {"action": "references", "file": "analysis.ipynb",
                                        "cell": 3, "line": 1, "symbol": "total"})
    assert references.ok, references.text
    assert {(loc.get("cell"), loc["line"]) for loc in references.data["locations"]} == {
        (3, 1), (4, 5)}

    outline = await run.call("lsp", {"action": "symbols", "file": "analysis.ipynb"})
    assert outline.ok, outline.text
    assert {(s["name"], s["cell"], s["line"]) for s in outline.data["symbols"]} >= {
        ("total", 3, 1), ("scaled", 4, 4), ("files", 5, 1)}

    type_definition = await run.call("lsp", {"action": "type_definition",
                                             "file": "analysis.ipynb", "cell": 6, "line": 5,
                                             "symbol": "box"})
    assert type_definition.ok, type_definition.text
    assert [(loc["cell"], loc["line"], loc["column"])
            for loc in type_definition.data["locations"]] == [(6, 1, 7)]

    fixes = await run.call("lsp", {"action": "code_actions", "file": "analysis.ipynb",
                                   "cell": 5, "line": 2, "symbol": "undefined_name"})
    assert fixes.ok and fixes.data["actions"], fixes.text
    assert "Code actions at analysis.ipynb [cell 5] line 2" in fixes.text
    assert all(name == "analysis.ipynb" for action in fixes.data["actions"]
               for name in action.get("files", []))

    # The servers' copy of the notebook is never written next to it.
    assert sorted(p.name for p in project.iterdir()) == [
        "analysis.ipynb", "helpers.py", "pyproject.toml"]


async def test_diagnostics_per_cell_leave_magics_alone(lsp_runtime, root):
    write_project(root)
    run = await lsp_runtime().create_run(cwd="proj")

    report = await run.call("lsp", {"action": "diagnostics", "file": "analysis.ipynb"})
    assert report.ok, report.text
    found = {(d["cell"], d["line"], d["column"], d["code"]) for d in report.data["diagnostics"]}
    assert found == {(5, 2, 7, "reportUndefinedVariable"), (5, 2, 7, "F821"),
                     (6, 6, 1, "reportUnusedExpression"), (6, 6, 1, "B018")}, report.text
    assert "analysis.ipynb [cell 5] 2:7 error [reportUndefinedVariable]" in report.text

    one_cell = await run.call("lsp", {"action": "diagnostics", "file": "analysis.ipynb",
                                      "cell": 2})
    assert one_cell.ok and one_cell.data["status"] == "clean", one_cell.text
    assert one_cell.data["cell"] == 2 and "analysis.ipynb [cell 2]" in one_cell.text


async def test_a_notebook_written_gets_its_new_diagnostics_by_cell(lsp_runtime, root):
    project = write_project(root)
    # basedpyright's after the write too (by default a write asks the light ty).
    run = await lsp_runtime(write_diagnostics="all").create_run(cwd="proj")
    await run.call("lsp", {"action": "diagnostics", "file": "analysis.ipynb"})

    notebook = nbformat.read(project / "analysis.ipynb", as_version=4)
    notebook.cells[2].source = "def total(values: list[float]) -> float:\n    return sum(valuez)"
    written = await run.call("write", {"path": "analysis.ipynb",
                                       "content": nbformat.writes(notebook) + "\n"})
    assert written.ok, written.text
    new = {(d["cell"], d["line"], d["code"]) for d in written.data["diagnostics"]["new"]}
    assert new == {(3, 2, "reportUndefinedVariable"), (3, 2, "F821")}, written.text
    assert "analysis.ipynb [cell 3] 2:16" in written.text


async def test_cell_arguments_are_checked(lsp_runtime, root):
    write_project(root)
    run = await lsp_runtime().create_run(cwd="proj")

    async def error(**args: object) -> tuple[str | None, str]:
        result = await run.call("lsp", args)
        assert not result.ok, result.text
        return result.code, result.error["message"]

    code, message = await error(action="hover", file="helpers.py", cell=1, line=1,
                                symbol="scale")
    assert code == "invalid_arguments" and "helpers.py is not a notebook" in message
    code, message = await error(action="definition", file="analysis.ipynb", line=3,
                                symbol="total")
    assert code == "invalid_arguments" and "needs `cell`" in message
    code, message = await error(action="hover", file="analysis.ipynb", cell=9, line=1,
                                symbol="total")
    assert code == "invalid_arguments" and "there is no cell 9" in message
    assert "has 6 cells" in message
    code, message = await error(action="hover", file="analysis.ipynb", cell=1, line=1,
                                symbol="Analysis")
    assert code == "invalid_arguments" and "cell 1 of analysis.ipynb is not python" in message
    code, message = await error(action="hover", file="analysis.ipynb", cell=3, line=7,
                                symbol="total")
    assert code == "invalid_arguments" and "outside cell 3 (it has 2 lines)" in message
    code, message = await error(action="diagnostics", file="helpers.py", cell=1)
    assert code == "invalid_arguments"
    renamed = await run.call("lsp_rename", {"file": "analysis.ipynb", "line": 1,
                                            "symbol": "total", "new_name": "grand_total"})
    assert renamed.code == "invalid_arguments" and "needs `cell`" in renamed.error["message"]


async def test_rename_across_cells_and_modules_keeps_the_rest_of_the_file(lsp_runtime, root):
    project = write_project(root)
    path = project / "analysis.ipynb"
    notebook = nbformat.read(path, as_version=4)
    notebook.cells[3].outputs = [new_output("stream", name="stdout", text="6.0\n")]
    notebook.cells[3].execution_count = 3
    nbformat.write(notebook, path)
    before = path.read_bytes()
    (project / "broken.ipynb").write_text("{not json")
    run = await lsp_runtime().create_run(cwd="proj")

    across_cells = await run.call("lsp_rename", {"file": "analysis.ipynb", "cell": 3, "line": 1,
                                                 "symbol": "total", "new_name": "grand_total"})
    assert across_cells.ok, across_cells.text
    assert across_cells.data["files"] == [{"path": "analysis.ipynb", "edits": 2,
                                           "deleted": False}]
    assert "--- a/analysis.ipynb [cell 4]" in across_cells.data["diff"]
    assert "not valid notebooks, left unchanged: broken.ipynb" in across_cells.text
    after = path.read_bytes()
    # Only the two names changed: outputs, metadata, ids and formatting are byte-for-byte.
    assert after.replace(b"grand_total", b"total") == before and after != before

    into_notebook = await run.call("lsp_rename", {"file": "helpers.py", "line": 1,
                                                  "symbol": "scale", "new_name": "rescale"})
    assert into_notebook.ok, into_notebook.text
    assert {f["path"]: f["edits"] for f in into_notebook.data["files"]} == {
        "helpers.py": 1, "analysis.ipynb": 2}
    renamed = nbformat.read(path, as_version=4)
    assert renamed.cells[1].source.endswith("from helpers import rescale")
    assert "scaled = rescale(data, 2.0)" in renamed.cells[3].source
    assert renamed.cells[3].outputs == notebook.cells[3].outputs
    assert (project / "helpers.py").read_text().startswith("def rescale(")
    assert not (project / ".analysis.ipynb.py").exists()


SHAPES = [
    new_code_cell("class Shape:\n    def area(self) -> float:\n        raise NotImplementedError"),
    new_code_cell("class Square(Shape):\n    def area(self) -> float:\n        return 1.0"),
    new_code_cell("def measure(shape: Shape) -> float:\n    return shape.area()"),
]


async def test_the_other_actions_answer_by_cell_too(lsp_runtime, root):
    project = write_project(root)
    nbformat.write(new_notebook(cells=SHAPES, metadata={
        "kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}}),
        project / "shapes.ipynb")
    run = await lsp_runtime().create_run(cwd="proj")

    # basedpyright also reads the notebooks of its workspace itself, naming places in them
    # as `analysis.ipynb#2`: shown by cell, never as the file's JSON.
    from_module = await run.call("lsp", {"action": "references", "file": "helpers.py",
                                         "line": 1, "symbol": "scale"})
    assert from_module.ok, from_module.text
    assert {(loc["path"], loc.get("cell"), loc["line"]) for loc in
            from_module.data["locations"]} <= {("helpers.py", None, 1),
                                               ("analysis.ipynb", 2, 3),
                                               ("analysis.ipynb", 4, 4)}, from_module.text
    # Once the notebook's virtual document is open too, each place is still named once.
    hover = await run.call("lsp", {"action": "hover", "file": "analysis.ipynb", "cell": 4,
                                   "line": 4, "symbol": "scale"})
    assert hover.ok, hover.text
    again = await run.call("lsp", {"action": "references", "file": "helpers.py", "line": 1,
                                   "symbol": "scale"})
    assert sorted((loc["path"], loc.get("cell", 0), loc["line"], loc.get("column", 0))
                  for loc in again.data["locations"]) == [
        ("analysis.ipynb", 2, 3, 21), ("analysis.ipynb", 4, 4, 10),
        ("helpers.py", 0, 1, 0)], again.text
    assert again.data["total"] == 3 and "analysis.ipynb [cell 4] 4:10: scaled" in again.text

    implementation = await run.call("lsp", {"action": "implementation", "file": "shapes.ipynb",
                                            "cell": 3, "line": 2, "symbol": "area"})
    assert implementation.ok, implementation.text
    assert [(loc["cell"], loc["line"], loc["column"])
            for loc in implementation.data["locations"]] == [(1, 2, 9), (2, 2, 9)]
    assert "shapes.ipynb [cell 2] 2:9: def area" in implementation.text

    search = await run.call("lsp", {"action": "symbols", "query": "measure"})
    assert search.ok, search.text
    assert [(s["path"], s["cell"], s["line"], s["name"]) for s in search.data["symbols"]] == [
        ("shapes.ipynb", 3, 1, "measure")], search.text
    assert "function measure shapes.ipynb [cell 3] 1:5" in search.text

    status = await run.call("lsp", {"action": "status", "file": "analysis.ipynb"})
    assert status.ok and "Language servers for analysis.ipynb" in status.text
    # ty stands aside: basedpyright serves Python here.
    assert {s["server"]: s["available"] for s in status.data["servers"]} == {
        "basedpyright": True, "ty": False, "ruff": True}
    reloaded = await run.call("lsp", {"action": "reload", "file": "analysis.ipynb"})
    assert reloaded.ok and "basedpyright: restarted" in reloaded.text, reloaded.text
    after = await run.call("lsp", {"action": "definition", "file": "analysis.ipynb", "cell": 4,
                                   "line": 5, "symbol": "total"})
    assert [(loc["cell"], loc["line"]) for loc in after.data["locations"]] == [(3, 1)]


async def test_the_project_check_reads_notebooks_by_cell(lsp_runtime, root):
    project = write_project(root)
    (project / "broken.ipynb").write_text("{not json")
    run = await lsp_runtime().create_run(cwd="proj")
    checked = await run.call("lsp", {"action": "diagnostics", "file": "*"})
    assert checked.ok, checked.text
    # As `lsp diagnostics` on the notebook: by cell, and the `!ls` magic not flagged.
    found = {(d["path"], d.get("cell"), d["line"], d["column"], d["code"])
             for d in checked.data["diagnostics"]}
    assert found == {("analysis.ipynb", 5, 2, 7, "reportUndefinedVariable"),
                     ("analysis.ipynb", 5, 2, 7, "F821"),
                     ("analysis.ipynb", 6, 6, 1, "reportUnusedExpression"),
                     ("analysis.ipynb", 6, 6, 1, "B018")}, checked.text
    assert checked.data["checks"]["notebooks"]["errors"] == 2
    # A file named as a notebook that is not one is named, not fatal.
    assert checked.data["checks"]["notebooks"]["unchecked"] == ["broken.ipynb"]
    assert "notebooks not checked: broken.ipynb" in checked.text
    assert "analysis.ipynb [cell 5] 2:7 error [reportUndefinedVariable]" in checked.text


@pytest.mark.skipif(find_executable(["typescript-language-server"]) is None,
                    reason="typescript-language-server is installed by scripts/setup.sh")
async def test_a_deno_notebook_is_served_in_typescript_by_cell(lsp_runtime, root):
    project = root / "web"
    project.mkdir()
    (project / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}\n')
    nbformat.write(new_notebook(cells=[
        new_markdown_cell("Prices"),
        new_code_cell("const prices: number[] = [3, 5, 8];\n"
                      "function odd(xs: number[]): number[] {\n"
                      "  return xs.filter((p) => p % 2 === 1);\n}"),
        new_code_cell("const result = odd(prices);\nconsole.log(result, missing);"),
    ], metadata={"kernelspec": {"name": "deno", "language": "typescript",
                                "display_name": "Deno"}}), project / "prices.ipynb")
    run = await lsp_runtime().create_run(cwd="web")

    hover = await run.call("lsp", {"action": "hover", "file": "prices.ipynb", "cell": 3,
                                   "line": 1, "symbol": "odd"})
    assert hover.ok and "function odd(xs: number[]): number[]" in hover.text, hover.text
    definition = await run.call("lsp", {"action": "definition", "file": "prices.ipynb",
                                        "cell": 3, "line": 1, "symbol": "prices"})
    assert [(loc["cell"], loc["line"], loc["column"])
            for loc in definition.data["locations"]] == [(2, 1, 7)], definition.text
    report = await run.call("lsp", {"action": "diagnostics", "file": "prices.ipynb"})
    assert [(d["cell"], d["line"], d["column"], d["code"])
            for d in report.data["diagnostics"]] == [(3, 2, 21, "2304")], report.text
    renamed = await run.call("lsp_rename", {"file": "prices.ipynb", "cell": 2, "line": 2,
                                            "symbol": "odd", "new_name": "odds"})
    assert renamed.ok, renamed.text
    cells = nbformat.read(project / "prices.ipynb", as_version=4).cells
    assert "function odds(xs" in cells[1].source
    assert cells[2].source.startswith("const result = odds(prices);")
    assert sorted(p.name for p in project.iterdir()) == ["prices.ipynb", "tsconfig.json"]


async def test_a_notebook_in_a_folder_of_data_is_served_from_its_folder(lsp_runtime, root):
    """No pyproject anywhere: the notebook's folder is the project, and what pandas is comes
    from the environment the kernel runs in (the server's)."""
    folder = root / "data"
    folder.mkdir()
    (folder / "sales.csv").write_text("month,total\n1,3\n")
    nbformat.write(new_notebook(cells=[
        new_code_cell("import pandas as pd\nsales = pd.read_csv('sales.csv')"),
        new_code_cell("sales.describe()")],
        metadata={"kernelspec": {"name": "python3", "language": "python",
                                 "display_name": "Python 3"}}), folder / "explore.ipynb")
    run = await lsp_runtime().create_run()
    hover = await run.call("lsp", {"action": "hover", "file": "data/explore.ipynb", "cell": 2,
                                   "line": 1, "symbol": "sales"})
    assert hover.ok, hover.text
    assert "DataFrame" in hover.text
    # The same cell by its id; an unknown id names the cells there are.
    cell_id = (await run.call("read", {"path": "data/explore.ipynb"})).data["cells"][1]["id"]
    by_id = await run.call("lsp", {"action": "hover", "file": "data/explore.ipynb",
                                   "cell": cell_id, "line": 1, "symbol": "sales"})
    assert by_id.ok and by_id.text == hover.text, by_id.text
    unknown = await run.call("lsp", {"action": "hover", "file": "data/explore.ipynb",
                                     "cell": "nope", "line": 1, "symbol": "sales"})
    assert unknown.code == "invalid_arguments" and "has 2 cells" in unknown.error["message"]
    status = await run.call("lsp", {"action": "status", "file": "data/explore.ipynb"})
    assert "no root marker" not in status.text and "notebook's folder" in status.text, status.text
    edited = await run.call("edit", {"path": "data/explore.ipynb", "cell": 2,
                                     "old_string": "describe", "new_string": "head"})
    assert edited.ok and "no root marker" not in edited.text, edited.text

async def test_rename_keeps_a_latin1_module_and_saves_an_old_notebook_as_nbformat_4(
        lsp_runtime, root):
    project = write_project(root)
    helpers = project / "helpers.py"
    latin1 = (HELPERS + "# d\xe9j\xe0 vu: the caf\xe9's scale\n").encode("latin-1")
    helpers.write_bytes(latin1)
    old = Path(__file__).parents[1] / "notebooks" / "data" / "old_rates_nbformat3.json"
    data = json.loads(old.read_text())
    data["worksheets"][0]["cells"][1]["input"] = ["from helpers import scale\n",
                                                  "print(scale([1.0], 2.0))"]
    (project / "old.ipynb").write_text(json.dumps(data, indent=1))
    run = await lsp_runtime().create_run(cwd="proj")
    renamed = await run.call("lsp_rename", {"file": "helpers.py", "line": 1,
                                            "symbol": "scale", "new_name": "rescale"})
    assert renamed.ok, renamed.text
    assert {f["path"] for f in renamed.data["files"]} >= {"helpers.py", "old.ipynb"}
    assert "old notebooks (nbformat 3) saved as nbformat 4.5" in renamed.text
    assert helpers.read_bytes() == latin1.replace(b"def scale(", b"def rescale(")
    saved = nbformat.read(project / "old.ipynb", as_version=nbformat.NO_CONVERT)
    assert (saved.nbformat, saved.nbformat_minor) == (4, 5)
    assert saved.cells[1].source == "from helpers import rescale\nprint(rescale([1.0], 2.0))"
