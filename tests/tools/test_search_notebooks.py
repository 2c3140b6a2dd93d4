"""grep in notebooks searches the cells' sources and answers by cell and line within it."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from jupyter_agent_tools.files import notebook_mirror
from jupyter_agent_tools.files.notebook_mirror import NotebookMirrors


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


async def test_grep_keeps_each_notebooks_cells_while_it_is_unchanged(runtime, root, monkeypatch):
    _project(root)
    parsed: list[str] = []
    real = notebook_mirror.cell_sources

    def counted(root_: Path, notebook: Path, max_bytes: int):
        parsed.append(notebook.name)
        return real(root_, notebook, max_bytes)

    monkeypatch.setattr(notebook_mirror, "cell_sources", counted)
    run = await runtime.create_run()
    first = await run.call("grep", {"pattern": "load"})
    assert parsed == ["analysis.ipynb"]
    again = await run.call("grep", {"pattern": "load"})
    assert (again.data, parsed) == (first.data, ["analysis.ipynb"])  # not parsed again

    # Changed: parsed again and its new cells answer, from the first search on.
    _notebook(root / "analysis.ipynb", [new_code_cell("x = 1\n\nload('moved')")])
    moved = await run.call("grep", {"pattern": "load"})
    assert [(m["file"], m.get("cell"), m["line"]) for m in moved.data["matches"]] == [
        ("analysis.ipynb", 1, 3), ("app.py", None, 1)]
    assert parsed == ["analysis.ipynb", "analysis.ipynb"]
    # Gone: no match from what it held; broken since: counted as invalid, its cells forgotten.
    (root / "analysis.ipynb").unlink()
    assert [m["file"] for m in (await run.call("grep", {"pattern": "load"})).data["matches"]] \
        == ["app.py"]
    _notebook(root / "b.ipynb", [new_code_cell("load(1)")])
    assert (await run.call("grep", {"pattern": "load"})).data["total"] == 2
    (root / "b.ipynb").write_text("{not json")
    broken = await run.call("grep", {"pattern": "load"})
    assert broken.data["total"] == 1 and broken.data["skipped"]["invalid_notebook"] == 1


async def test_a_cell_with_a_lone_surrogate_is_searched(runtime, root):
    # JSON may hold a lone surrogate; it cannot be UTF-8 and is searched as one "?".
    (root / "odd.ipynb").write_text(
        '{"cells": [{"cell_type": "code", "source": "a = \\"\\ud800\\"\\nload(a)", '
        '"metadata": {}, "outputs": [], "execution_count": null}], "metadata": {}, '
        '"nbformat": 4, "nbformat_minor": 5}')
    run = await runtime.create_run()
    found = await run.call("grep", {"pattern": "load"})
    assert found.ok, found.text
    assert found.data["matches"] == [{"file": "odd.ipynb", "line": 2, "text": "load(a)",
                                      "cell": 1}]


def test_a_replaced_mirror_stays_while_a_search_reads_it(root, tmp_path_factory):
    mirrors = NotebookMirrors(tmp_path_factory.mktemp("mirrors"))
    notebook = root / "a.ipynb"
    _notebook(notebook, [new_code_cell("one")])
    with mirrors.reading(root, [str(notebook)], 10_000, 10_000) as (held, invalid):
        assert invalid == 0
        _notebook(notebook, [new_code_cell("two\ntwo")])
        with mirrors.reading(root, [str(notebook)], 10_000, 10_000) as (newer, _):
            assert (mirrors.folder / newer.parts[0].file).read_text() == "two\ntwo\n"
        # The first search still maps its matches with the file it started with.
        assert (mirrors.folder / held.parts[0].file).read_text() == "one\n"
    assert sorted(path.name for path in mirrors.folder.iterdir()) == [newer.parts[0].file]
    # Past the bound, what no search reads is dropped at once.
    with mirrors.reading(root, [str(notebook)], 10_000, 0):
        pass
    assert list(mirrors.folder.iterdir()) == []


async def test_a_notebook_gitignore_names_is_not_searched_and_is_counted(runtime, root):
    # By its own name, not its folder's: listing notebooks with a `*.ipynb` glob whitelisted it.
    _notebook(root / "kept.ipynb", [new_code_cell("load(1)")])
    _notebook(root / "sub" / "scratch.ipynb", [new_code_cell("load(2)")])
    (root / ".gitignore").write_text("scratch.ipynb\n")
    run = await runtime.create_run()
    for path in (".", "sub"):
        found = await run.call("grep", {"pattern": "load", "path": path})
        assert found.ok, found.text
        assert [m["file"] for m in found.data["matches"]] == (
            ["kept.ipynb"] if path == "." else [])
        assert found.data["skipped"]["ignored"] == 1


def test_packs_map_lines_back_to_each_notebook_and_are_kept_while_unchanged(
        root, tmp_path_factory, monkeypatch):
    # Parts of about 20 bytes: the six notebooks take several parts, some of one notebook.
    monkeypatch.setattr(notebook_mirror, "_PACK_PART_BYTES", 20)
    mirrors = NotebookMirrors(tmp_path_factory.mktemp("mirrors"))
    notebooks = []
    for index in range(6):
        notebook = root / f"n{index}.ipynb"
        _notebook(notebook, [new_code_cell(""), new_code_cell(f"a{index}\nb{index}"),
                             new_markdown_cell(f"c{index}" * (index + 1))])
        notebooks.append(str(notebook))
    with mirrors.reading(root, notebooks, 10_000, 10_000) as (pack, invalid):
        assert invalid == 0 and 1 < len(pack.parts) < 6
        assert any(len(part.members) > 1 for part in pack.parts)
        # Every line of every part, back to its notebook, cell and line in the cell.
        seen = []
        for part in pack.parts:
            lines = (mirrors.folder / part.file).read_text().splitlines()
            for number, text in enumerate(lines, start=1):
                mirror, cell, line = part.cell_of(number)
                seen.append((mirror.notebook.name, cell, line, text))
        assert seen == [entry for index in range(6) for entry in (
            (f"n{index}.ipynb", 2, 1, f"a{index}"), (f"n{index}.ipynb", 2, 2, f"b{index}"),
            (f"n{index}.ipynb", 3, 1, f"c{index}" * (index + 1)))]
    with mirrors.reading(root, notebooks, 10_000, 10_000) as (again, _):
        assert again is pack  # the same mirrors: the same files, nothing written
    _notebook(root / "n3.ipynb", [new_code_cell("changed")])
    with mirrors.reading(root, notebooks, 10_000, 10_000) as (changed, _):
        texts = "".join((mirrors.folder / part.file).read_text() for part in changed.parts)
        assert "changed\n" in texts and "a3" not in texts
    # Past the bound, packs and mirrors that no search reads are dropped.
    with mirrors.reading(root, notebooks, 10_000, 1):
        pass
    assert list(mirrors.folder.iterdir()) == []


async def test_a_notebook_over_its_bound_is_counted_as_oversized(runtime_factory, root):
    _notebook(root / "small.ipynb", [new_code_cell("load(1)")])
    _notebook(root / "big.ipynb", [new_code_cell("load(2)\n" + "# padding\n" * 500)])
    run = await runtime_factory(max_notebook_bytes=2_000).create_run()
    found = await run.call("grep", {"pattern": "load"})
    assert found.ok, found.text
    assert [m["file"] for m in found.data["matches"]] == ["small.ipynb"]
    assert found.data["skipped"] == {"ignored": 0, "binary": 0, "oversized": 1}


def test_an_evicted_pack_stays_while_a_search_reads_it(root, tmp_path_factory):
    mirrors = NotebookMirrors(tmp_path_factory.mktemp("mirrors"))
    notebooks = []
    for index in range(notebook_mirror._PACKS_KEPT + 2):
        notebook = root / f"n{index}.ipynb"
        _notebook(notebook, [new_code_cell(f"cell {index}")])
        notebooks.append(str(notebook))
    with mirrors.reading(root, notebooks[:2], 10_000, 10**6) as (held, _):
        [part] = held.parts
        assert len(part.members) == 2  # a pack file of its own
        # Other sets of notebooks searched meanwhile push it out of the packs kept.
        for first in range(1, notebook_mirror._PACKS_KEPT + 1):
            with mirrors.reading(root, notebooks[first:first + 2], 10_000, 10**6):
                pass
        assert (mirrors.folder / part.file).read_text() == "cell 0\ncell 1\n"
    assert not (mirrors.folder / part.file).exists()


async def test_grep_options_in_notebooks_stay_within_a_cell(runtime, root):
    # Context lines, multiline matches and counts are the cell's: a notebook's mirror holds
    # its cells (and other notebooks) one after another, and nothing may leak between them.
    _notebook(root / "a.ipynb", [new_code_cell("x = 1\nneedle = 2\ny = 3"),
                                 new_code_cell("end = 0\nNEEDLE()"), new_code_cell("z\nneedle")])
    _notebook(root / "b.ipynb", [new_code_cell("top\nneedle"), new_code_cell("tail")])
    _notebook(root / ".hidden" / "c.ipynb", [new_code_cell("needle")])
    _notebook(root / ".d.ipynb", [new_code_cell("needle")])
    run = await runtime.create_run()
    context = await run.call("grep", {"pattern": "needle", "before": 1, "after": 1})
    assert [(m["file"], m["cell"], m["line"]) for m in context.data["matches"]] == [
        ("a.ipynb", 1, 2), ("a.ipynb", 3, 2), ("b.ipynb", 1, 2)]
    assert [(c["file"], c["cell"], c["line"], c["text"]) for c in context.data["context"]] == [
        ("a.ipynb", 1, 1, "x = 1"), ("a.ipynb", 1, 3, "y = 3"), ("a.ipynb", 3, 1, "z"),
        ("b.ipynb", 1, 1, "top")]
    assert "a.ipynb [cell 1] 1- x = 1\na.ipynb [cell 1] 2: needle = 2\n" in context.text
    assert context.data["skipped"]["hidden"] == 2 and "hidden: true" in context.text
    across = await run.call("grep", {"pattern": "3\nend", "multiline": True})
    assert across.ok and across.data["total"] == 0  # no cell's source has it
    within = await run.call("grep", {"pattern": "2\ny", "multiline": True})
    assert [(m["cell"], m["line"], m["lines"]) for m in within.data["matches"]] == [(1, 2, 2)]
    count = await run.call("grep", {"pattern": "needle", "output_mode": "count",
                                    "case_insensitive": True})
    assert count.data["counts"] == [{"file": "a.ipynb", "count": 3},
                                    {"file": "b.ipynb", "count": 1}]
    assert count.data["total"] == 2 and count.data["total_matches"] == 4
    files = await run.call("grep", {"pattern": "needle", "output_mode": "files",
                                    "hidden": True})
    assert files.data["files"] == [".d.ipynb", ".hidden/c.ipynb", "a.ipynb", "b.ipynb"]
    named = await run.call("grep", {"pattern": "needle", "path": ".hidden"})
    assert [m["file"] for m in named.data["matches"]] == [".hidden/c.ipynb"]
