"""Files a language server names outside the server root — here through a symlinked folder
inside it — are listed by path and marked, never read or quoted, and never edited."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_agent_tools.lsp.specs import find_executable

# preserveSymlinks: tsserver and tsc name files by the path through the link
TS_CONFIG = '{"compilerOptions": {"strict": true, "noEmit": true, "preserveSymlinks": true}}\n'
SECRET_LINE = "def leak(token: str) -> str:  # the secret line"
SECRET_CLASS = "the secret class"


@pytest.fixture
def linked_project(root: Path, tmp_path: Path, write_files) -> Path:
    """proj/ with main.py importing from proj/linked/, a symlink to a folder outside root."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "__init__.py").write_text("")
    (elsewhere / "secret_lib.py").write_text(f"{SECRET_LINE}\n    return token\n\n\n"
                                             f"class Vault:  # {SECRET_CLASS}\n    pass\n")
    project = write_files({
        "pyproject.toml": "[project]\nname = 'demo'\nversion = '0'\n",
        "main.py": "from linked.secret_lib import Vault, leak\n\nprint(leak('x'))\n"
                   "vault = Vault()\n",
    }, "proj")
    (project / "linked").symlink_to(elsewhere)
    return elsewhere


async def test_navigation_into_a_symlinked_outside_folder_names_it_without_content(
        lsp_runtime, linked_project):
    run = await lsp_runtime().create_run(cwd="proj", surface="readonly")

    read = await run.call("read", {"path": "linked/secret_lib.py"})
    assert read.code == "path_outside_root"

    definition = await run.call("lsp", {"action": "definition", "file": "main.py", "line": 3,
                                        "symbol": "leak"})
    assert definition.ok, definition.text
    [place] = definition.data["locations"]
    assert place == {"path": "linked/secret_lib.py", "line": 1, "outside_root": True}
    assert "linked/secret_lib.py:1 (outside the server's root)" in definition.text
    assert "secret line" not in definition.text

    references = await run.call("lsp", {"action": "references", "file": "main.py", "line": 3,
                                        "symbol": "leak"})
    assert references.ok, references.text
    outside = [p for p in references.data["locations"] if p.get("outside_root")]
    inside = [p for p in references.data["locations"] if not p.get("outside_root")]
    assert [p["path"] for p in outside] == ["linked/secret_lib.py"]
    assert {p["text"] for p in inside} == {"from linked.secret_lib import Vault, leak",
                                           "print(leak('x'))"}
    assert "secret line" not in references.text and "text" not in outside[0]

    of_type = await run.call("lsp", {"action": "type_definition", "file": "main.py", "line": 4,
                                     "symbol": "vault"})
    assert of_type.ok, of_type.text
    assert of_type.data["locations"] == [{"path": "linked/secret_lib.py", "line": 5,
                                          "outside_root": True}]
    assert SECRET_CLASS not in of_type.text and "(outside the server's root)" in of_type.text

    search = await run.call("lsp", {"action": "symbols", "query": "leak"})
    assert search.ok, search.text
    assert "secret line" not in search.text
    for entry in search.data["symbols"]:
        if entry["path"] == "linked/secret_lib.py":
            assert entry == {"path": "linked/secret_lib.py", "line": 1, "outside_root": True}

    for action in ("symbols", "hover", "definition"):
        asked = await run.call("lsp", {"action": action, "file": "linked/secret_lib.py",
                                       "line": 1, "symbol": "leak"})
        assert asked.code == "path_outside_root", (action, asked.text)


@pytest.mark.skipif(find_executable(["typescript-language-server"]) is None,
                    reason="typescript-language-server is installed by scripts/setup.sh")
async def test_a_rename_reaching_outside_the_root_changes_no_file(lsp_runtime, write_files,
                                                                  root, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "lib.ts").write_text("export function greet(name: string): string {\n"
                                      "  return 'hi ' + name;\n}\n")
    project = write_files({
        "tsconfig.json": TS_CONFIG,
        "app.ts": "import { greet } from './linked/lib';\n\nconsole.log(greet('bob'));\n",
    }, "web")
    (project / "linked").symlink_to(elsewhere)
    run = await lsp_runtime().create_run(cwd="web")
    renamed = await run.call("lsp_rename", {"file": "app.ts", "line": 3, "symbol": "greet",
                                            "new_name": "welcome"})
    assert renamed.code == "path_outside_root", renamed.text
    # tsserver would alias the import (`greet as welcome`) and leave the definition alone
    assert "defined in linked/lib.ts, outside the server's root" in renamed.error["message"]
    assert "greet('bob')" in (project / "app.ts").read_text()
    assert "function greet" in (elsewhere / "lib.ts").read_text()


@pytest.mark.skipif(find_executable(["tsc"]) is None,
                    reason="tsc (typescript) is installed by scripts/setup.sh")
async def test_a_project_check_through_the_link_lists_outside_files_without_messages(
        lsp_runtime, write_files, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "lib.ts").write_text("export const hidden: number = secretTokenName;\n")
    project = write_files({
        "tsconfig.json": TS_CONFIG,
        "app.ts": "import { hidden } from './linked/lib';\n\nconsole.log(hidden);\n",
    }, "web")
    (project / "linked").symlink_to(elsewhere)
    run = await lsp_runtime().create_run(cwd="web", surface="plan")
    check = await run.call("lsp", {"action": "diagnostics", "file": "*"})
    assert check.ok, check.text
    assert "secretTokenName" not in check.text and "secretTokenName" not in str(check.data)
    # tsc follows the link: the file is listed, its message (which quotes code) is not
    assert [(d["path"], d["message"]) for d in check.data["diagnostics"]] == [
        ("linked/lib.ts", "(outside the server's root: not shown)")], check.text


@pytest.mark.skipif(find_executable(["typescript-language-server"]) is None,
                    reason="typescript-language-server is installed by scripts/setup.sh")
async def test_an_implementation_in_a_symlinked_outside_folder_is_named_not_quoted(
        lsp_runtime, write_files, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "vault.ts").write_text(
        "import type { Greeter } from '../app';\n\n"
        "export class Vault implements Greeter {  // secretImplementation\n"
        "  greet(): string { return 'the secret'; }\n}\n")
    project = write_files({
        "tsconfig.json": TS_CONFIG,
        "app.ts": "export interface Greeter {\n  greet(): string;\n}\n\n"
                  "import { Vault } from './linked/vault';\n\nconsole.log(new Vault().greet());\n",
    }, "web")
    (project / "linked").symlink_to(elsewhere)
    run = await lsp_runtime().create_run(cwd="web", surface="readonly")
    found = await run.call("lsp", {"action": "implementation", "file": "app.ts", "line": 1,
                                   "symbol": "Greeter"})
    assert found.ok, found.text
    assert found.data["locations"] == [{"path": "linked/vault.ts", "line": 3,
                                        "outside_root": True}], found.text
    assert "secret" not in found.text and "(outside the server's root)" in found.text
