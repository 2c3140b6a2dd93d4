"""`lsp code_actions` applied through the staged-edit path, with real ruff, basedpyright and
typescript-language-server: listed by number, staged as `ast_edit` stages (diff, edit_id,
the run's edit store), resolved by `resolve`; a TypeScript refactoring whose edits come back
through `workspace/applyEdit`; stale lists and numbers out of range refused."""

from __future__ import annotations

import asyncio

import nbformat
import pytest
from lsp_projects import TS_FILES
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_agent_tools.lsp.specs import find_executable
from jupyter_agent_tools.runtime import Resource

PARSER = "jupyter_agent_tools.structural.provider:ParserProvider"
SUPERVISOR = "jupyter_agent_tools.lsp.supervisor:LanguageServerSupervisor"

MAIN = "import sys\nimport os\n\nprint(sys.argv)\n"


@pytest.fixture
def staged_runtime(runtime_factory):
    """A Runtime with the language servers and the parser, which keeps staged edits."""
    return runtime_factory({"LanguageServerSupervisor": {"diagnostics_timeout_seconds": 60.0,
                                                         "request_timeout_seconds": 60.0}},
                           resource_providers=[SUPERVISOR, PARSER])


def _number(listed, title_part: str, server: str) -> int:
    return next(a["number"] for a in listed.data["actions"]
                if title_part in a["title"] and a["server"] == server)


@pytest.mark.skipif(find_executable(["ruff"]) is None, reason="ruff is not installed")
async def test_python_and_notebook_actions_staged_and_resolved(staged_runtime, root):
    project = root / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\nversion = '0'\n")
    (project / "main.py").write_text(MAIN)
    nbformat.write(new_notebook(cells=[new_code_cell("x = 1"),
                                       new_code_cell("import json\nprint(x)")],
                                metadata={"kernelspec": {"name": "python3", "language": "python",
                                                         "display_name": "Python 3"}}),
                   project / "analysis.ipynb")
    run = await staged_runtime.create_run(cwd="proj")

    listed = await run.call("lsp", {"action": "code_actions", "file": "main.py", "line": 2})
    assert listed.ok, listed.text
    numbers = [a["number"] for a in listed.data["actions"]]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 2
    remove = _number(listed, "Remove unused import", "ruff")
    assert f"{remove}. Ruff (F401): Remove unused import: `os` [quickfix, preferred]" in listed.text

    too_far = await run.call("lsp", {"action": "code_actions", "file": "main.py", "line": 2,
                                     "apply": len(numbers) + 1})
    assert too_far.code == "invalid_arguments"
    assert f"numbered 1 to {len(numbers)}" in too_far.error["message"]
    unknown = await run.call("lsp", {"action": "code_actions", "file": "main.py", "line": 2,
                                     "apply": "Make it faster"})
    assert unknown.code == "invalid_arguments" and "Remove unused import" in unknown.error["message"]

    staged = await run.call("lsp", {"action": "code_actions", "file": "main.py", "line": 2,
                                    "apply": remove})
    assert staged.ok, staged.text
    edit_id = staged.data["edit_id"]
    assert "-import os\n" in staged.data["diff"] and (project / "main.py").read_text() == MAIN
    assert staged.blocks[-1] == {"type": "diff", "edit_id": edit_id, "diff": staged.data["diff"]}
    store = run.resources[Resource.PARSER].edits.get(edit_id)
    assert store.to_json()["origin"] == "lsp" and store.rewrite == staged.data["action"]

    accepted = await run.call("resolve", {"edit_id": edit_id, "action": "accept"})
    assert accepted.ok, accepted.text
    assert (project / "main.py").read_text() == "import sys\n\nprint(sys.argv)\n"
    assert accepted.data["diagnostics"]["files"]["main.py"]["status"] == "ok"

    # Listed, then the file changed: applying from that list writes and stages nothing.
    listed = await run.call("lsp", {"action": "code_actions", "file": "main.py", "line": 1,
                                    "kind": "source.organizeImports"})
    assert [a["kind"] for a in listed.data["actions"]] == ["source.organizeImports.ruff"]
    changed = "import sys\nimport abc\n\nprint(sys.argv, abc)\n"
    (project / "main.py").write_text(changed)
    stale = await run.call("lsp", {"action": "code_actions", "file": "main.py", "line": 1,
                                   "kind": "source.organizeImports", "apply": 1})
    assert stale.code == "stale_edit" and "List them again" in stale.error["message"]
    assert (project / "main.py").read_text() == changed
    # Listed again, ruff's organize imports (resolved with codeAction/resolve) is staged.
    await run.call("lsp", {"action": "code_actions", "file": "main.py", "line": 1,
                           "kind": "source.organizeImports"})
    organized = await run.call("lsp", {"action": "code_actions", "file": "main.py", "line": 1,
                                       "kind": "source.organizeImports",
                                       "apply": "Ruff: Organize imports"})
    assert organized.ok and "+import abc\n" in organized.data["diff"], organized.text
    discarded = await run.call("resolve", {"edit_id": organized.data["edit_id"],
                                           "action": "discard"})
    assert discarded.ok and (project / "main.py").read_text() == changed

    # A notebook: the action is asked in the cell, staged in the cell's source only.
    before = (project / "analysis.ipynb").read_bytes()
    cell = await run.call("lsp", {"action": "code_actions", "file": "analysis.ipynb",
                                  "cell": 2, "line": 1})
    assert cell.ok, cell.text
    fix = _number(cell, "Remove unused import", "ruff")
    in_cell = await run.call("lsp", {"action": "code_actions", "file": "analysis.ipynb",
                                     "cell": 2, "line": 1, "apply": fix})
    assert in_cell.ok, in_cell.text
    assert "a/analysis.ipynb [cell 2]" in in_cell.data["diff"]
    assert (project / "analysis.ipynb").read_bytes() == before
    assert (await run.call("resolve", {"edit_id": in_cell.data["edit_id"],
                                       "action": "accept"})).ok
    cells = nbformat.read(project / "analysis.ipynb", as_version=4).cells
    assert [c.source for c in cells] == ["x = 1", "print(x)"]
    assert sorted(p.name for p in project.iterdir()) == ["analysis.ipynb", "main.py",
                                                         "pyproject.toml"]

    # A read-only run lists actions but cannot stage one: it could never resolve it.
    readonly = await staged_runtime.create_run(cwd="proj", surface="readonly")
    refused = await readonly.call("lsp", {"action": "code_actions", "file": "main.py",
                                          "line": 1, "apply": 1})
    assert refused.code == "permission_denied" and "full run" in refused.error["message"]


@pytest.mark.skipif(find_executable(["typescript-language-server"]) is None,
                    reason="typescript-language-server is not installed")
async def test_typescript_refactoring_command_edits_are_staged(staged_runtime, root):
    project = root / "ts"
    project.mkdir()
    for name, text in TS_FILES.items():
        (project / name).write_text(text)
    app = "import { greet } from './lib';\n\nconst message: string = greet('bob');\n" \
          "console.log(message);\n"
    run = await staged_runtime.create_run(cwd="ts")

    listed = await run.call("lsp", {"action": "code_actions", "file": "app.ts", "line": 3,
                                    "kind": "refactor"})
    assert listed.ok, listed.text
    move = next(a for a in listed.data["actions"] if a["title"] == "Move to a new file")
    assert move["kind"] == "refactor.move" and move["command"]

    # An extraction: after its edit the server asks the client to start a rename
    # (`_typescript.rename`), answered with nothing; discarded, nothing changes.
    extracted = await run.call("lsp", {"action": "code_actions", "file": "app.ts", "line": 3,
                                       "kind": "refactor",
                                       "apply": "Extract to function in module scope"})
    assert extracted.ok, extracted.text
    assert "+const message: string = newFunction();\n" in extracted.data["diff"]
    assert (await run.call("resolve", {"edit_id": extracted.data["edit_id"],
                                       "action": "discard"})).ok
    assert (project / "app.ts").read_text() == app

    # Its edits come back through workspace/applyEdit while the command runs: staged; the
    # new file the server made (empty) is gone again until the edit is accepted.
    moved = await run.call("lsp", {"action": "code_actions", "file": "app.ts", "line": 3,
                                   "kind": "refactor", "apply": move["number"]})
    assert moved.ok, moved.text
    assert set(moved.data["files"]) == {"app.ts", "message.ts"}
    assert sorted(p.name for p in project.iterdir()) == ["app.ts", "lib.ts", "tsconfig.json"]
    assert (project / "app.ts").read_text() == app
    accepted = await run.call("resolve", {"edit_id": moved.data["edit_id"], "action": "accept"})
    assert accepted.ok, accepted.text
    assert "export const message: string = greet('bob');" in (project / "message.ts").read_text()
    assert "console.log(message)" in (project / "app.ts").read_text()
    assert "const message" not in (project / "app.ts").read_text()


@pytest.mark.skipif(find_executable(["ruff"]) is None, reason="ruff is not installed")
async def test_code_action_over_http_is_a_staged_edit(api, jp_root_dir):
    (jp_root_dir / "pyproject.toml").write_text("[project]\nname = 'demo'\nversion = '0'\n")
    (jp_root_dir / "main.py").write_text(MAIN)
    code, run = await api("POST", "runs", {"resources": ["parser", "lsp"]})
    assert code == 201, run
    calls = f"runs/{run['id']}/calls"
    listing = {"action": "code_actions", "file": "main.py", "line": 2,
               "kind": "quickfix"}
    code, listed = await api("POST", calls, {"tool": "lsp", "args": listing})
    assert code == 200 and listed["ok"], listed
    title = "Ruff (F401): Remove unused import: `os`"
    code, staged = await api("POST", calls, {"tool": "lsp", "args": {**listing, "apply": title}})
    assert staged["ok"], staged
    code, edits = await api("GET", f"runs/{run['id']}/edits")
    assert [(e["edit_id"], e["origin"], e["rewrite"], e["files"]) for e in edits] == [
        (staged["data"]["edit_id"], "lsp", title, {"main.py": 1})]
    code, resolved = await api("POST", calls, {"tool": "resolve", "args": {
        "edit_id": staged["data"]["edit_id"], "action": "accept"}})
    assert resolved["ok"] and (jp_root_dir / "main.py").read_text() == \
        "import sys\n\nprint(sys.argv)\n"


@pytest.mark.skipif(find_executable(["basedpyright-langserver"]) is None,
                    reason="basedpyright is not installed")
async def test_rename_is_staged_when_the_run_asks_for_review(runtime_factory, root):
    project = root / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\nversion = '0'\n")
    (project / "shapes.py").write_text("def area(side: float) -> float:\n    return side * side\n")
    (project / "main.py").write_text("from shapes import area\n\nprint(area(2.0))\n")
    runtime = runtime_factory({"LanguageServerSupervisor": {"request_timeout_seconds": 60.0}},
                              resource_providers=[SUPERVISOR, PARSER,
                                                  "jupyter_agent_tools.questions.port:QuestionPort"])
    run = await runtime.create_run(cwd="proj", approvals="ask", space="review")
    async with await runtime.connect_human("review") as human:
        renaming = asyncio.ensure_future(run.call("lsp_rename", {
            "file": "shapes.py", "line": 1, "symbol": "area", "new_name": "square_area"}))
        await human.answer((await human.next_card(timeout=60))["id"], answer="Allow once")
        staged = await renaming
        assert staged.ok, staged.text
        assert set(staged.data["files"]) == {"shapes.py", "main.py"}
        assert "area" in (project / "main.py").read_text().replace("square_area", "")
        assert "square_area" not in (project / "shapes.py").read_text()
        accepting = asyncio.ensure_future(run.call("resolve", {
            "edit_id": staged.data["edit_id"], "action": "accept"}))
        await human.answer((await human.next_card(timeout=60))["id"], answer="Allow once")
        assert (await accepting).ok
    assert (project / "main.py").read_text() == \
        "from shapes import square_area\n\nprint(square_area(2.0))\n"
