"""Real basedpyright and ruff on a small multi-file project: every action, rename, the journal."""

from __future__ import annotations

import difflib

import pytest
from lsp_projects import PY_FILES, pid_alive

from jupyter_agent_tools.runtime import Resource


@pytest.fixture
def lsp_runtime(lsp_runtime):
    """basedpyright's diagnostics after writes too: by default a write asks the light ty
    (`write_diagnostics`), and these tests are basedpyright's."""

    def make(**supervisor):
        return lsp_runtime(**{"write_diagnostics": "all", **supervisor})

    return make


async def test_navigation_actions(lsp_runtime, write_files):
    write_files(PY_FILES, "proj")
    runtime = lsp_runtime(max_references=2)
    run = await runtime.create_run(cwd="proj")
    assert {"lsp", "lsp_rename"} <= set(run.tool_names())

    hover = await run.call("lsp", {"action": "hover", "file": "main.py", "line": 3,
                                   "symbol": "Square"})
    assert hover.ok and "class Square" in hover.text

    definition = await run.call("lsp", {"action": "definition", "file": "main.py", "line": 4,
                                        "symbol": "area"})
    assert definition.ok, definition.text
    assert definition.data["locations"] == [
        {"path": "shapes.py", "line": 10, "text": "def area(self) -> float:"}]
    assert "occurs 2 times on line 4; used the first" in definition.text

    type_definition = await run.call("lsp", {"action": "type_definition", "file": "main.py",
                                             "line": 3, "symbol": "square"})
    assert type_definition.ok and type_definition.data["locations"][0]["path"] == "shapes.py"
    assert type_definition.data["locations"][0]["line"] == 6

    references = await run.call("lsp", {"action": "references", "file": "shapes.py", "line": 6,
                                        "symbol": "Square"})
    assert references.ok and references.data["total"] == 3
    assert len(references.data["locations"]) == 2 and references.data["truncated"]
    assert "[cut: showing 2 of 3 references]" in references.text

    outline = await run.call("lsp", {"action": "symbols", "file": "shapes.py"})
    names = [(s["name"], s["depth"]) for s in outline.data["symbols"]]
    assert ("Shape", 0) in names and ("Square", 0) in names and ("area", 1) in names

    search = await run.call("lsp", {"action": "symbols", "query": "Squ"})
    assert search.ok and any(s["name"] == "Square" and s["path"] == "shapes.py"
                             for s in search.data["symbols"])

    missing = await run.call("lsp", {"action": "definition", "file": "main.py", "line": 3})
    assert missing.code == "missing_symbol"
    absent = await run.call("lsp", {"action": "hover", "file": "main.py", "line": 3,
                                    "symbol": "Circle"})
    assert absent.code == "symbol_not_found" and "Square, square" in absent.error["message"]


async def test_diagnostics_code_actions_and_journal_on_write(lsp_runtime, write_files):
    write_files(PY_FILES, "proj")
    run = await lsp_runtime().create_run(cwd="proj")

    clean = await run.call("lsp", {"action": "diagnostics", "file": "main.py"})
    assert clean.ok and clean.data["status"] == "clean", clean.text

    broken = "import os\nfrom shapes import Square\n\nsquare = Square('two')\nprint(square)\n"
    written = await run.call("write", {"path": "main.py", "content": broken})
    assert written.ok
    new = {(d["source"], d["code"]) for d in written.data["diagnostics"]["new"]}
    assert ("basedpyright", "reportArgumentType") in new and ("Ruff", "F401") in new
    assert "New diagnostics in main.py" in written.text
    assert written.data["diagnostics"]["files"]["main.py"]["status"] == "ok"

    moved = await run.call("write", {"path": "main.py", "content": "\n\n\n\n" + broken})
    assert moved.ok and moved.data["diagnostics"]["new"] == []
    assert "No new diagnostics in main.py" in moved.text

    edited = await run.call("edit", {"path": "main.py", "old_string": "print(square)",
                                     "new_string": "print(undefined_name)"})
    assert [d["code"] for d in edited.data["diagnostics"]["new"]] in (
        [["reportUndefinedVariable", "F821"]], ["F821", "reportUndefinedVariable"]
    ) or {d["code"] for d in edited.data["diagnostics"]["new"]} == {"reportUndefinedVariable",
                                                                       "F821"}

    listed = await run.call("lsp", {"action": "diagnostics", "file": "main.py"})
    assert listed.data["status"] == "reported" and listed.data["total"] >= 3
    assert all(d["severity"] != "hint" for d in listed.data["diagnostics"])

    actions = await run.call("lsp", {"action": "code_actions", "file": "main.py", "line": 5})
    assert actions.ok and any("os" in a["title"] and a["server"] == "ruff"
                              for a in actions.data["actions"]), actions.text

    # basedpyright asks for its settings (workspace/configuration): `standard`, not the
    # default `recommended` mode, which would flag this `Any` (reportAny).
    quiet = await run.call("write", {"path": "loads.py",
                                     "content": "import json\n\nvalue = json.loads('1')\n"})
    assert quiet.data["diagnostics"]["files"]["loads.py"] == {"status": "ok", "total": 0,
                                                               "new": 0}, quiet.text

    note = await run.call("write", {"path": "NOTES.md", "content": "# notes\n"})
    assert note.ok and "No diagnostics for NOTES.md: no language server handles .md files" in note.text
    assert note.data["diagnostics"]["files"]["NOTES.md"]["status"] == "unavailable"


async def test_a_patch_deleting_a_module_reports_its_importer_broken(lsp_runtime, write_files):
    write_files(PY_FILES, "proj")
    run = await lsp_runtime().create_run(cwd="proj")
    for name in ("main.py", "shapes.py"):  # both open in the server, as after any navigation
        assert (await run.call("lsp", {"action": "diagnostics", "file": name})).data["status"] == "clean"
    patch = "".join(difflib.unified_diff(PY_FILES["shapes.py"].splitlines(True), [],
                                         "a/shapes.py", "/dev/null"))
    patch += "--- a/main.py\n+++ b/main.py\n@@ -1,1 +1,2 @@\n+# shapes went away\n from shapes import Square\n"
    patched = await run.call("apply_patch", {"patch": patch})
    assert patched.ok, patched.text
    new = [(d["path"], d["code"]) for d in patched.data["diagnostics"]["new"]]
    assert new == [("main.py", "reportMissingImports")], patched.text
    assert "shapes.py" not in patched.data["diagnostics"]["files"]


async def run_importing_a_missing_module(lsp_runtime, write_files):
    """A run whose freshly written main.py imports `helpers`, which does not exist yet."""
    write_files({"pyproject.toml": PY_FILES["pyproject.toml"]}, "proj")
    run = await lsp_runtime().create_run(cwd="proj")
    importer = await run.call("write", {"path": "main.py",
                                        "content": "from helpers import twice\n\nprint(twice(2))\n"})
    assert [d["code"] for d in importer.data["diagnostics"]["new"]] == ["reportMissingImports"]
    return run


async def test_writing_a_missing_module_clears_its_importers_error(lsp_runtime, write_files):
    run = await run_importing_a_missing_module(lsp_runtime, write_files)
    created = await run.call("write", {"path": "helpers.py",
                                       "content": "def twice(x: int) -> int:\n    return 2 * x\n"})
    assert created.ok and created.data["created"]
    after = await run.call("lsp", {"action": "diagnostics", "file": "main.py"})
    assert after.data["status"] == "clean", after.text


async def test_modules_a_command_creates_or_deletes_reach_the_servers(lsp_runtime, write_files):
    run = await run_importing_a_missing_module(lsp_runtime, write_files)
    made = await run.call("bash", {"command": "printf 'def twice(x):\\n    return 2 * x\\n' > helpers.py"})
    assert made.ok, made.text
    after = await run.call("lsp", {"action": "diagnostics", "file": "main.py"})
    assert after.data["status"] == "clean", after.text

    assert (await run.call("bash", {"command": "rm helpers.py"})).ok
    after = await run.call("lsp", {"action": "diagnostics", "file": "main.py"})
    assert [d["code"] for d in after.data["diagnostics"]] == ["reportMissingImports"], after.text


async def test_the_listing_around_commands_skips_tool_folders_and_is_bounded(lsp_runtime,
                                                                           write_files):
    base = write_files({**PY_FILES, "pkg/deep.py": "", ".venv/lib/site.py": "",
                        "node_modules/x/y.py": "", "notes.md": ""}, "proj")
    runtime = lsp_runtime(max_command_scan_files=5)  # the five files outside tool folders
    run = await runtime.create_run(cwd="proj")
    await run.call("lsp", {"action": "diagnostics", "file": "main.py"})  # servers running
    session = run.resources[Resource.LSP]
    assert await session.source_files() == {base / "main.py", base / "shapes.py", base / "pkg/deep.py"}
    (base / "pkg" / "more.py").write_text("")  # one past the bound: not listed at all
    assert await session.source_files() is None


async def test_rename_across_files_is_atomic_and_reports_diff(lsp_runtime, write_files, root):
    write_files(PY_FILES, "proj")
    run = await lsp_runtime().create_run(cwd="proj")
    renamed = await run.call("lsp_rename", {"file": "shapes.py", "line": 6, "symbol": "Square",
                                            "new_name": "Quad"})
    assert renamed.ok, renamed.text
    files = {f["path"]: f["edits"] for f in renamed.data["files"]}
    assert files == {"shapes.py": 1, "main.py": 2}
    assert "+class Quad(Shape):" in renamed.data["diff"]
    assert any(b["type"] == "diff" for b in renamed.blocks)
    assert "from shapes import Quad" in (root / "proj" / "main.py").read_text()
    assert "No new diagnostics in main.py" in renamed.text  # synced: the server sees the rename

    after = await run.call("lsp", {"action": "references", "file": "shapes.py", "line": 6,
                                   "symbol": "Quad"})
    assert after.data["total"] == 3

    not_renameable = await run.call("lsp_rename", {"file": "main.py", "line": 5, "symbol": "print",
                                                   "new_name": "show"})
    assert not not_renameable.ok


async def test_status_reload_and_project_check(lsp_runtime, write_files):
    write_files(PY_FILES, "proj")
    runtime = lsp_runtime()
    run = await runtime.create_run(cwd="proj")
    before = await run.call("lsp", {"action": "status"})
    entries = {e["server"]: e for e in before.data["servers"]}
    assert entries["basedpyright"]["root_marker"] == "pyproject.toml"
    assert entries["basedpyright"]["binary"].endswith("basedpyright-langserver")
    assert entries["basedpyright"]["available"] and not entries["basedpyright"]["running"]
    assert not entries["rust-analyzer"]["available"]
    assert "no root marker (Cargo.toml)" in entries["rust-analyzer"]["why_not"]

    await run.call("lsp", {"action": "hover", "file": "main.py", "line": 3, "symbol": "Square"})
    running = await run.call("lsp", {"action": "status", "file": "main.py"})
    pid = {e["server"]: e for e in running.data["servers"]}["basedpyright"]["pid"]
    assert pid and pid_alive(pid)
    assert "running (pid" in running.text

    reloaded = await run.call("lsp", {"action": "reload", "file": "main.py"})
    assert reloaded.ok and "basedpyright: restarted" in reloaded.text
    new_pid = {e["server"]: e for e in reloaded.data["servers"]}["basedpyright"]["pid"]
    assert new_pid != pid and not pid_alive(pid)

    async with run.events.subscribe() as events:
        check = await run.call("lsp", {"action": "diagnostics", "file": "*"})
        progress = [events.get_nowait() for _ in range(events.qsize())]
    assert check.ok and set(check.data["checks"]) == {"basedpyright", "ruff"}
    steps = [(e["check"], e["state"]) for e in progress if e["type"] == "lsp_progress"]
    assert steps == [("basedpyright", "started"), ("basedpyright", "done"),
                     ("ruff", "started"), ("ruff", "done")]
    assert check.data["checks"]["basedpyright"]["errors"] == 0

    await runtime.close_run(run.id)
    assert not pid_alive(new_pid)  # the last run out stops the server


async def test_runs_over_one_root_share_a_server(lsp_runtime, write_files):
    write_files(PY_FILES, "proj")
    runtime = lsp_runtime()
    first = await runtime.create_run(cwd="proj")
    second = await runtime.create_run(cwd="proj")
    plan = await runtime.create_run(cwd="proj", surface="plan")
    assert "lsp" in plan.tool_names() and "lsp_rename" not in plan.tool_names()

    args = {"action": "hover", "file": "main.py", "line": 3, "symbol": "Square"}
    await first.call("lsp", args)
    await second.call("lsp", args)
    pids = set()
    for run in (first, second):
        status = await run.call("lsp", {"action": "status", "file": "main.py"})
        pids.add({e["server"]: e for e in status.data["servers"]}["basedpyright"]["pid"])
    assert len(pids) == 1
    pid = pids.pop()
    basedpyright = [s for s in (await runtime.status())["resources"]["lsp"]["running"]
                    if s["server"] == "basedpyright"]
    assert len(basedpyright) == 1 and basedpyright[0]["starts"] == 1
    await runtime.close_run(first.id)
    assert pid_alive(pid)
    await runtime.close_run(second.id)
    assert not pid_alive(pid)
