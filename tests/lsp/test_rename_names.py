"""lsp_rename checks the new name against the file's language before any server is asked."""

from __future__ import annotations

import pytest
from lsp_projects import PY_FILES, TS_FILES

from jupyter_agent_tools.lsp.specs import find_executable


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


@pytest.mark.skipif(find_executable(["typescript-language-server"]) is None,
                    reason="typescript-language-server is installed by scripts/setup.sh")
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


@pytest.mark.skipif(find_executable(["typescript-language-server"]) is None,
                    reason="typescript-language-server is installed by scripts/setup.sh")
async def test_a_rename_the_server_refuses_says_why_and_changes_nothing(lsp_runtime, write_files,
                                                                       root):
    write_files(TS_FILES, "web")
    run = await lsp_runtime().create_run(cwd="web")
    refused = await run.call("lsp_rename", {"file": "app.ts", "line": 4, "symbol": "log",
                                            "new_name": "print"})
    assert refused.code == "symbol_not_found", refused.text
    assert "defined in the standard TypeScript library" in refused.text  # tsserver's reason
    assert "No file was changed" in refused.text
    assert (root / "web" / "app.ts").read_text() == TS_FILES["app.ts"]


async def test_a_name_the_project_does_not_own_is_refused_by_prepare_rename(lsp_runtime, write_files,
                                                                           root):
    write_files(PY_FILES, "proj")
    run = await lsp_runtime().create_run(cwd="proj")
    refused = await run.call("lsp_rename", {"file": "main.py", "line": 5, "symbol": "print",
                                            "new_name": "show"})
    assert refused.code == "symbol_not_found", refused.text
    # basedpyright's prepareRename has no range for a builtin: nothing else is asked
    assert "'print' on line 5 cannot be renamed: basedpyright sees no symbol" in refused.text
    assert (root / "proj" / "main.py").read_text() == PY_FILES["main.py"]
