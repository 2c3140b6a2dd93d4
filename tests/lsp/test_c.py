"""Real clangd on a small C project that has only compile_flags.txt (no compile database)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_agent_tools.lsp.specs import find_executable

pytestmark = pytest.mark.skipif(find_executable(["clangd", "clangd-*"]) is None,
                                reason="clangd is installed by scripts/setup.sh (Debian)")

C_FILES = {
    "compile_flags.txt": "-std=c11\n",
    "util.h": "int add(int a, int b);\n",
    "util.c": '#include "util.h"\n\nint add(int a, int b) {\n  return a + b;\n}\n',
    "main.c": '#include <stdio.h>\n#include "util.h"\n\nint main(void) {\n'
              '  printf("%d\\n", add(1, 2));\n  return 0;\n}\n',
}


async def test_a_rename_reaches_every_translation_unit(lsp_runtime, write_files):
    project = write_files(C_FILES, "c")
    run = await lsp_runtime().create_run(cwd="c")
    keyword = await run.call("lsp_rename", {"file": "main.c", "line": 5, "symbol": "add",
                                            "new_name": "int"})
    assert keyword.code == "invalid_arguments" and "reserved word in C" in keyword.text

    renamed = await run.call("lsp_rename", {"file": "main.c", "line": 5, "symbol": "add",
                                            "new_name": "plus"})
    assert renamed.ok, renamed.text
    # util.c was never opened by the agent: clangd alone would leave its definition behind
    assert {f["path"] for f in renamed.data["files"]} == {"main.c", "util.c", "util.h"}
    assert "int plus(int a, int b) {" in (project / "util.c").read_text()


async def test_navigation_sees_files_the_agent_never_opened(lsp_runtime, write_files):
    write_files(C_FILES, "c")
    run = await lsp_runtime().create_run(cwd="c")
    references = await run.call("lsp", {"action": "references", "file": "main.c", "line": 5,
                                        "symbol": "add"})
    assert references.ok, references.text
    assert {(p["path"], p["line"]) for p in references.data["locations"]} >= {
        ("main.c", 5), ("util.h", 1), ("util.c", 3)}
    definition = await run.call("lsp", {"action": "definition", "file": "main.c", "line": 5,
                                        "symbol": "add"})
    assert definition.data["locations"] == [
        {"path": "util.c", "line": 3, "text": "int add(int a, int b) {"}], definition.text


async def test_too_many_sources_refuse_the_rename_with_what_to_add(lsp_runtime, write_files):
    project = write_files(C_FILES, "c")
    run = await lsp_runtime(max_project_sources=2).create_run(cwd="c")
    refused = await run.call("lsp_rename", {"file": "main.c", "line": 5, "symbol": "add",
                                            "new_name": "plus"})
    assert refused.code == "unavailable" and "compile_commands.json" in refused.text
    assert "add(1, 2)" in (project / "main.c").read_text()


async def test_project_check_implementation_and_missing_files(lsp_runtime, write_files):
    write_files({**C_FILES, "bad.c": "int broken(void) { return undefined_thing; }\n"}, "c")
    run = await lsp_runtime().create_run(cwd="c")

    check = await run.call("lsp", {"action": "diagnostics", "file": "*"})
    assert check.ok, check.text
    assert check.data["checks"]["clangd"]["errors"] == 1
    assert [(d["path"], d["line"]) for d in check.data["diagnostics"]] == [("bad.c", 1)]

    implementation = await run.call("lsp", {"action": "implementation", "file": "main.c",
                                            "line": 5, "symbol": "add"})
    assert implementation.ok and implementation.data["locations"], implementation.text
    assert implementation.data["locations"][0]["path"] == "util.c"
    assert "C has no implementations apart from definitions" in implementation.text
    assert implementation.data["answered_with"] == "definition"

    missing = await run.call("lsp", {"action": "diagnostics", "file": "nope.c"})
    assert missing.code == "not_found" and ".." not in missing.error["message"]
    navigation = await run.call("lsp", {"action": "definition", "file": "nope.c", "line": 1,
                                        "symbol": "add"})
    assert navigation.code == "not_found", navigation.text  # the same answer for the same file


async def test_a_symbol_declared_outside_the_root_is_not_renamed(lsp_runtime, write_files,
                                                                 tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "util.h").write_text("int add(int a, int b);\n")
    project = write_files({"compile_flags.txt": "-std=c11\n",
                           "main.c": '#include "linked/util.h"\n\nint twice(int a) {\n'
                                     "  return add(a, a);\n}\n"}, "c")
    (project / "linked").symlink_to(elsewhere)
    run = await lsp_runtime().create_run(cwd="c")
    # clangd alone renames the call only, and main.c no longer compiles
    refused = await run.call("lsp_rename", {"file": "main.c", "line": 4, "symbol": "add",
                                            "new_name": "plus"})
    assert refused.code == "path_outside_root", refused.text
    assert "outside the server's root" in refused.text
    assert refused.text.count("util.h") == 1, refused.text  # each place named once
    assert "add(a, a)" in (project / "main.c").read_text()


async def test_without_a_compile_database_every_answer_says_what_to_add(lsp_runtime,
                                                                       write_files):
    project = write_files({
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.16)\nproject(calc C)\n"
                          "add_executable(calc src/main.c src/util.c)\n"
                          "target_include_directories(calc PRIVATE include)\n",
        "include/util.h": "int add(int a, int b);\n",
        "src/util.c": '#include "util.h"\n\nint add(int a, int b) {\n  return a + b;\n}\n',
        "src/main.c": '#include "util.h"\n\nint main(void) {\n  return add(1, 2);\n}\n',
    }, "calc")
    run = await lsp_runtime().create_run(cwd="calc")
    status = await run.call("lsp", {"action": "status", "file": "src/main.c"})
    assert "no compile_commands.json or compile_flags.txt" in status.text, status.text
    assert "CMAKE_EXPORT_COMPILE_COMMANDS=ON" in status.text
    diagnostics = await run.call("lsp", {"action": "diagnostics", "file": "src/main.c"})
    assert diagnostics.ok, diagnostics.text
    # One fact said once, not a list of errors: the header is not found because clangd
    # does not know the include path.
    assert [d for d in diagnostics.data["diagnostics"] if "file not found" in d["message"]] == []
    assert diagnostics.data["files_not_found"], diagnostics.text
    assert "'util.h'" in diagnostics.text and "bear -- make" in diagnostics.text
    # A failing answer in such a project carries the note: the guess may be why it failed.
    lost = await run.call("lsp", {"action": "definition", "file": "src/main.c", "line": 4,
                                  "symbol": "subtract"})
    assert not lost.ok and "compile_flags.txt" in lost.error["message"], lost.text
    # The project check names the missing compile database as the cause, and how to make one.
    project_check = await run.call("lsp", {"action": "diagnostics", "file": "*"})
    assert project_check.ok, project_check.text
    assert "'file not found' errors ('util.h') not listed: the cause is the missing compile " \
        "database. clangd has no compile_commands.json or compile_flags.txt" \
        in project_check.text, project_check.text
    assert "CMAKE_EXPORT_COMPILE_COMMANDS=ON" in project_check.text
    assert "bear -- make" in project_check.text
    assert len(project_check.data["files_not_found"]) == 2
    assert not [d for d in project_check.data["diagnostics"] if "file not found" in d["message"]]

    # With the include path in compile_flags.txt, the header is found and the note is gone.
    (project / "compile_flags.txt").write_text("-Iinclude\n-std=c11\n")
    await run.call("lsp", {"action": "reload", "file": "src/main.c"})
    fixed = await run.call("lsp", {"action": "diagnostics", "file": "src/main.c"})
    assert fixed.ok and fixed.data["files_not_found"] == [] and fixed.data["build_config"] == []
    assert fixed.data["status"] == "clean", fixed.text
    checked = await run.call("lsp", {"action": "diagnostics", "file": "*"})
    assert checked.ok and checked.data["build_config"] == [], checked.text
    assert checked.data["files_not_found"] == [] and checked.data["total"] == 0, checked.text
    definition = await run.call("lsp", {"action": "definition", "file": "src/main.c",
                                        "line": 4, "symbol": "add"})
    assert definition.ok and definition.data["locations"][0]["path"] in (
        "include/util.h", "src/util.c"), definition.text
