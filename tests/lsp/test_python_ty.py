"""ty, the Python language server of a default install, and its standing aside for basedpyright."""

from __future__ import annotations

from lsp_projects import PY_FILES

# A default install: no basedpyright, no ruff (the [basedpyright] and [lsp] extras).
DEFAULT_INSTALL = {"language_servers": {"basedpyright": {"enabled": False},
                                        "ruff": {"enabled": False}}}


async def test_ty_navigates_checks_and_renames(lsp_runtime, write_files, root):
    write_files(PY_FILES, "proj")
    run = await lsp_runtime(**DEFAULT_INSTALL).create_run(cwd="proj")

    hover = await run.call("lsp", {"action": "hover", "file": "main.py", "line": 3,
                                   "symbol": "Square"})
    assert hover.ok and "Square" in hover.text, hover.text
    definition = await run.call("lsp", {"action": "definition", "file": "main.py", "line": 4,
                                        "symbol": "area"})
    assert definition.data["locations"] == [
        {"path": "shapes.py", "line": 10, "text": "def area(self) -> float:"}], definition.text
    references = await run.call("lsp", {"action": "references", "file": "shapes.py", "line": 6,
                                        "symbol": "Square"})
    assert references.data["total"] == 3, references.text

    written = await run.call("write", {"path": "main.py", "content":
                                       "from shapes import Square\n\nsquare = Square('two')\n"})
    assert [(d["source"], d["code"]) for d in written.data["diagnostics"]["new"]] == [
        ("ty", "invalid-argument-type")], written.text

    check = await run.call("lsp", {"action": "diagnostics", "file": "*"})
    assert check.data["checks"]["ty"]["errors"] == 1, check.text
    assert [(d["path"], d["line"], d["code"]) for d in check.data["diagnostics"]] == [
        ("main.py", 3, "invalid-argument-type")], check.text

    renamed = await run.call("lsp_rename", {"file": "shapes.py", "line": 6, "symbol": "Square",
                                            "new_name": "Quad"})
    assert {f["path"]: f["edits"] for f in renamed.data["files"]} == {"shapes.py": 1,
                                                                     "main.py": 2}
    assert "from shapes import Quad" in (root / "proj" / "main.py").read_text()


async def test_ty_stands_aside_when_basedpyright_is_installed(lsp_runtime, write_files):
    write_files(PY_FILES, "proj")
    run = await lsp_runtime().create_run(cwd="proj")
    await run.call("lsp", {"action": "hover", "file": "main.py", "line": 3, "symbol": "Square"})
    status = await run.call("lsp", {"action": "status", "file": "main.py"})
    servers = {e["server"]: e for e in status.data["servers"]}
    assert servers["basedpyright"]["running"] and not servers["ty"]["running"]
    assert servers["ty"]["why_not"] == "ty: basedpyright serves these files in its place"


async def test_a_missing_optional_server_names_the_extra_that_adds_it(lsp_runtime, write_files):
    write_files(PY_FILES, "proj")
    run = await lsp_runtime(language_servers={"ruff": {"executables": ["no-such-ruff"]}}
                            ).create_run(cwd="proj")
    status = await run.call("lsp", {"action": "status", "file": "main.py"})
    ruff = {e["server"]: e for e in status.data["servers"]}["ruff"]
    assert "to add it: pip install 'jupyter-agent-tools[lsp]'" in ruff["why_not"], ruff


async def test_ty_resolves_a_notebooks_imports_in_the_servers_environment(
        lsp_runtime, root, monkeypatch):
    """A server started as `.venv/bin/jupyter lab`, not activated: pandas (installed beside the
    server's Python, where its kernel runs) still resolves, in a folder of data."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    (root / "data").mkdir()
    nbformat.write(new_notebook(cells=[
        new_code_cell("import pandas as pd\nsales = pd.read_csv('sales.csv')"),
        new_code_cell("sales.describe()")],
        metadata={"kernelspec": {"name": "python3", "language": "python",
                                 "display_name": "Python 3"}}), root / "data" / "explore.ipynb")
    run = await lsp_runtime(**DEFAULT_INSTALL).create_run()
    hover = await run.call("lsp", {"action": "hover", "file": "data/explore.ipynb", "cell": 2,
                                   "line": 1, "symbol": "sales"})
    assert hover.ok and "DataFrame" in hover.text, hover.text
