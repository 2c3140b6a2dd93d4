"""lsp_rename checks the new name against the file's language before any server is asked."""

from __future__ import annotations

import pytest
from lsp_projects import PY_FILES, TS_FILES

from jupyter_agent_tools.lsp.specs import find_executable

NO_TSSERVER = pytest.mark.skipif(find_executable(["typescript-language-server"]) is None,
                                 reason="typescript-language-server is installed by scripts/setup.sh")



@pytest.mark.parametrize("new_name, why", [
    ("1bad", "not a valid Python identifier"), ("a-b", "not a valid Python identifier"),
    ("bad name!", "not a valid Python identifier"), ("class", "reserved word in Python"),
    ("None", "reserved word in Python"), ("Square", "current name"),
])
async def test_python_names_that_are_refused(lsp_runtime, write_files, root, new_name, why):
    write_files(PY_FILES, "proj")
    run = await lsp_runtime().create_run(cwd="proj")
    refused = await run.call("lsp_rename", {"file": "shapes.py", "line": 6, "symbol": "Square",
                                            "new_name": new_name})
    assert refused.code == "invalid_arguments" and why in refused.text, refused.text
    assert (root / "proj" / "main.py").read_text() == PY_FILES["main.py"]


async def test_python_soft_keywords_and_unicode_are_names(lsp_runtime, write_files, root):
    write_files(PY_FILES, "proj")
    run = await lsp_runtime().create_run(cwd="proj")
    renamed = await run.call("lsp_rename", {"file": "shapes.py", "line": 6, "symbol": "Square",
                                            "new_name": "match"})
    assert renamed.ok, renamed.text
    assert "from shapes import match" in (root / "proj" / "main.py").read_text()


@NO_TSSERVER
@pytest.mark.parametrize("new_name, why", [
    ("bad name!", "not a valid TypeScript identifier"), ("class", "reserved word in TypeScript"),
    ("1x", "not a valid TypeScript identifier"),
])
async def test_typescript_names(lsp_runtime, write_files, root, new_name, why):
    write_files(TS_FILES, "web")
    run = await lsp_runtime().create_run(cwd="web")
    refused = await run.call("lsp_rename", {"file": "lib.ts", "line": 1, "symbol": "greet",
                                            "new_name": new_name})
    assert refused.code == "invalid_arguments" and why in refused.text, refused.text
    assert (root / "web" / "app.ts").read_text() == TS_FILES["app.ts"]


@pytest.mark.parametrize("files, folder, file, line, symbol, reason", [
    # tsserver answers the rename itself with its reason
    pytest.param(TS_FILES, "web", "app.ts", 4, "log",
                 "defined in the standard TypeScript library", marks=NO_TSSERVER, id="tsserver"),
    # basedpyright's prepareRename has no range for a builtin: nothing else is asked
    pytest.param(PY_FILES, "proj", "main.py", 5, "print",
                 "'print' on line 5 cannot be renamed: basedpyright sees no symbol",
                 id="basedpyright-prepare-rename"),
])
async def test_a_name_the_project_does_not_own_is_refused_and_nothing_changes(
        lsp_runtime, write_files, root, files, folder, file, line, symbol, reason):
    write_files(files, folder)
    run = await lsp_runtime().create_run(cwd=folder)
    refused = await run.call("lsp_rename", {"file": file, "line": line, "symbol": symbol,
                                            "new_name": "renamed"})
    assert refused.code == "symbol_not_found", refused.text
    assert reason in refused.text and "No file was changed" in refused.text, refused.text
    assert all((root / folder / name).read_text() == text for name, text in files.items())
