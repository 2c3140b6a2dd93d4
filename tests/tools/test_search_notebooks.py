"""grep in notebooks searches the cells' sources and answers by cell and line within it."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output


def _notebook(path: Path, cells) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    notebook = new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.write(notebook, str(path))


def _project(root: Path) -> None:
    _notebook(root / "analysis.ipynb", [
        new_markdown_cell("# Load the data\nWe call `load` once."),
        new_code_cell("import pandas as pd\ndf = load(\"data.csv\")\n\nprint(df)",
                      outputs=[new_output("stream", name="stdout", text="load(\"in output\")\n")]),
        new_code_cell(""),
        new_code_cell("%%time\nload(\"again.csv\")"),
    ])
    (root / "app.py").write_text("data = load(\"data.csv\")\n")
    (root / ".gitignore").write_text("hidden/\n")
    _notebook(root / "hidden" / "ignored.ipynb", [new_code_cell("load(\"x\")")])


async def test_grep_answers_notebook_matches_by_cell(runtime, root):
    _project(root)
    run = await runtime.create_run()
    # Quotes and anchors work on the code as written, not on its escaped JSON string.
    result = await run.call("grep", {"pattern": r'^(df = )?load\("'})
    assert result.ok, result.text
    assert result.data["matches"] == [
        {"file": "analysis.ipynb", "line": 2, "text": 'df = load("data.csv")', "cell": 2},
        {"file": "analysis.ipynb", "line": 2, "text": 'load("again.csv")', "cell": 4},
    ]
    assert result.data["total"] == 2
    assert 'analysis.ipynb [cell 4] 2: load("again.csv")' in result.text
    # Outputs and metadata are not searched; markdown sources are; .gitignore is honoured.
    everywhere = await run.call("grep", {"pattern": "load"})
    assert [(m["file"], m.get("cell"), m["line"]) for m in everywhere.data["matches"]] == [
        ("analysis.ipynb", 1, 2), ("analysis.ipynb", 2, 2), ("analysis.ipynb", 4, 2),
        ("app.py", None, 1)]
    assert not any("in output" in m["text"] for m in everywhere.data["matches"])
    assert (await run.call("grep", {"pattern": "kernelspec|python3"})).data["total"] == 0


async def test_grep_in_one_notebook_and_with_a_glob(runtime, root):
    _project(root)
    run = await runtime.create_run()
    one = await run.call("grep", {"pattern": "pandas", "path": "analysis.ipynb"})
    assert one.ok, one.text
    assert one.data["matches"] == [{"file": "analysis.ipynb", "line": 1,
                                    "text": "import pandas as pd", "cell": 2}]
    only_py = await run.call("grep", {"pattern": "load", "glob": "*.py"})
    assert [m["file"] for m in only_py.data["matches"]] == ["app.py"]
    only_notebooks = await run.call("grep", {"pattern": "print", "glob": "*.ipynb"})
    assert [(m["file"], m["cell"]) for m in only_notebooks.data["matches"]] == [
        ("analysis.ipynb", 2)]
    # Several notebooks: each match goes back to its own notebook and cell.
    _notebook(root / "b.ipynb", [new_code_cell(""), new_markdown_cell("print it"),
                                 new_code_cell("x = 1\nprint(x)")])
    both = await run.call("grep", {"pattern": "print"})
    assert [(m["file"], m.get("cell"), m["line"]) for m in both.data["matches"]] == [
        ("analysis.ipynb", 2, 4), ("b.ipynb", 2, 1), ("b.ipynb", 3, 2)]
    # A file named as a notebook that is not one is counted, not fatal.
    (root / "broken.ipynb").write_text("{not json")
    broken = await run.call("grep", {"pattern": "print"})
    assert broken.ok and broken.data["skipped"]["invalid_notebook"] == 1
