"""The pieces without a server: specs, binary lookup, positions, the journal, workspace edits."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from lsprotocol import types

from jupyter_agent_tools.files import FilesError, resolve_inside
from jupyter_agent_tools.lsp.journal import DiagnosticsJournal, FileDiagnostic
from jupyter_agent_tools.lsp.languages import LANGUAGES
from jupyter_agent_tools.lsp.positions import locate_symbol, utf16_column
from jupyter_agent_tools.lsp.specs import ENTRY_POINT_GROUP, find_executable, load_specs
from jupyter_agent_tools.lsp.workspace_edit import plan_workspace_edit
from jupyter_agent_tools.runtime import ToolError

LOG = logging.getLogger("test")


def test_config_overrides_adds_and_disables_specs():
    specs, errors = load_specs({
        "clangd": {"enabled": False},
        "basedpyright": {"settings": {"basedpyright.analysis": {"typeCheckingMode": "strict"}}},
        "ocaml": {"extensions": {".ml": "ocaml"}, "root_markers": ["dune-project"],
                  "command": ["ocamllsp"]},
        "bad": {"colour": "red"},
    }, LOG)
    assert not specs["clangd"].serves(Path("a.c"))
    assert specs["basedpyright"].settings["basedpyright.analysis"]["typeCheckingMode"] == "strict"
    assert specs["basedpyright"].command[0] == "basedpyright-langserver"  # the rest kept
    assert specs["ocaml"].serves(Path("x.ml")) and specs["ocaml"].root_markers == ("dune-project",)
    assert "bad" not in specs and "colour" in errors["bad"]


def test_entry_point_specs_load_and_a_broken_one_is_contained(tmp_path, monkeypatch):
    # A real installed distribution declaring two specs in the group, one of them broken.
    dist = tmp_path / "site" / "zig_specs-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: zig-specs\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nzig = lsp_projects:PLUGIN_SPECS\n"
        "broken = lsp_projects:NO_SUCH_NAME\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    specs, errors = load_specs({"zig": {"command": ["zls", "--stdio"]}}, LOG)
    assert specs["zig"].serves(Path("main.zig")) and specs["zig"].command == ("zls", "--stdio")
    assert "broken" in errors and "basedpyright" in specs


def test_versioned_binaries_pick_the_highest(tmp_path, monkeypatch):
    for name in ("clangd-14", "clangd-19", "clangd-9"):
        binary = tmp_path / name
        binary.write_text("#!/bin/sh\n")
        binary.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_executable(["clangd", "clangd-*"]) == str(tmp_path / "clangd-19")
    assert find_executable(["surely-not-a-binary"]) is None


def test_basedpyright_resolves_from_the_venv_without_path(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    assert find_executable(["basedpyright-langserver"]).endswith("/bin/basedpyright-langserver")


def test_symbol_positions_whole_words_first_and_utf16():
    text = "total = subtotal + total_tax + total\n"
    found = locate_symbol(text, 1, "total", None, "hover")
    assert found.position == types.Position(0, 0)
    assert "occurs 2 times" in found.note and "occurrence" in found.note
    assert locate_symbol(text, 1, "total", 2, "hover").position.character == 31
    assert locate_symbol(text, 1, "sub", None, "hover").position.character == 8  # substring
    emoji = "s = '😀😀'; name = 1\n"
    position = locate_symbol(emoji, 1, "name", None, "hover").position
    assert position.character == utf16_column(emoji, emoji.index("name")) == 12


def test_symbol_errors_say_what_is_there():
    with pytest.raises(ToolError) as missing:
        locate_symbol("x = 1\n", 1, None, None, "definition")
    assert missing.value.code.value == "missing_symbol"
    with pytest.raises(ToolError) as absent:
        locate_symbol("alpha = beta(gamma)\n", 1, "delta", None, "definition")
    assert absent.value.code.value == "symbol_not_found"
    assert absent.value.data["identifiers"] == ["alpha", "beta", "gamma"]


def _diag(line: int, message: str, code: str = "E1") -> FileDiagnostic:
    return FileDiagnostic("a.py", line, 1, "error", code, message, "test")


def test_diagnostic_columns_count_characters_not_utf16_units():
    line = "s = '😀'; bad"
    diagnostic = types.Diagnostic(
        range=types.Range(types.Position(0, 10), types.Position(0, 13)), message="m", code=1)
    assert FileDiagnostic.from_lsp("a.py", diagnostic, "x", [line]).column == line.index("bad") + 1
    assert FileDiagnostic.from_lsp("a.py", diagnostic, "x").code == "1"


def test_journal_ignores_moves_and_reports_new_repeats_and_returns():
    journal = DiagnosticsJournal()
    assert journal.observe("a.py", [_diag(3, "bad")]) == [_diag(3, "bad")]
    assert journal.observe("a.py", [_diag(7, "bad")]) == []  # moved four lines: not new
    new = journal.observe("a.py", [_diag(7, "bad"), _diag(9, "worse", "E2")])
    assert [d.message for d in new] == ["worse"]
    assert [d.line for d in journal.observe("a.py", [_diag(7, "bad"), _diag(9, "worse", "E2"),
                                                      _diag(12, "bad")])] == [12]  # a second one
    assert journal.observe("b.py", [_diag(7, "bad")]) != []  # per file
    journal.observe("a.py", [])
    assert journal.observe("a.py", [_diag(1, "bad")]) != []  # gone, then back: new again


def test_workspace_edit_changes_and_document_changes(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\nprint(x)\n")
    b.write_text("from a import x\n")

    def resolve(path: Path) -> Path | None:
        try:
            return resolve_inside(tmp_path, tmp_path, path)
        except FilesError:
            return None

    def edit(line: int, start: int, end: int) -> types.TextEdit:
        return types.TextEdit(types.Range(types.Position(line, start), types.Position(line, end)), "y")

    plan = plan_workspace_edit(types.WorkspaceEdit(changes={
        a.as_uri(): [edit(0, 0, 1), edit(1, 6, 7)], b.as_uri(): [edit(0, 14, 15)],
    }), resolve, str, Path.read_text)
    assert plan.changes == {a: "y = 1\nprint(y)\n", b: "from a import y\n"}
    assert plan.edit_counts == {a: 2, b: 1}
    assert "-x = 1" in plan.diff(lambda p: p.name) and "+from a import y" in plan.diff(str)
    documents = types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
        types.OptionalVersionedTextDocumentIdentifier(uri=a.as_uri(), version=None),
        [edit(0, 0, 1)])])
    assert plan_workspace_edit(documents, resolve, str, Path.read_text).changes == {a: "y = 1\nprint(x)\n"}
    outside = types.WorkspaceEdit(changes={Path("/etc/hosts").as_uri(): [edit(0, 0, 1)]})
    with pytest.raises(ToolError) as refused:
        plan_workspace_edit(outside, resolve, str, Path.read_text)
    assert refused.value.code.value == "path_outside_root"


def test_a_workspace_edit_through_a_symlinked_folder_is_refused_whole(tmp_path):
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir(), elsewhere.mkdir()
    (root / "a.py").write_text("x = 1\n")
    (elsewhere / "b.py").write_text("x = 2\n")
    (root / "linked").symlink_to(elsewhere)

    def contained(path: Path) -> Path | None:
        try:
            return resolve_inside(root, root, path)
        except FilesError:
            return None

    rename = types.TextEdit(types.Range(types.Position(0, 0), types.Position(0, 1)), "y")
    edit = types.WorkspaceEdit(changes={(root / "a.py").as_uri(): [rename],
                                        (root / "linked" / "b.py").as_uri(): [rename]})
    with pytest.raises(ToolError) as refused:
        plan_workspace_edit(edit, contained, lambda p: p.relative_to(root).as_posix(),
                            Path.read_text)
    assert refused.value.code.value == "path_outside_root"
    assert "linked/b.py, outside the server's root" in refused.value.message


@pytest.mark.parametrize("language, old, new, problem", [
    ("python", "x", "1bad", "not a valid Python identifier"),
    ("python", "x", "class", "reserved word in Python"),
    ("python", "x", "match", None),  # a soft keyword is a name
    ("python", "x", "größe", None),
    ("typescript", "x", "bad name!", "not a valid TypeScript identifier"),
    ("typescript", "x", "enum", "reserved word in TypeScript"),
    ("typescript", "x", "$élan", None),
    ("typescript", "#count", "#total", None),
    ("typescript", "#count", "total", "private member"),
    ("c", "add", "a-b", "not a valid C identifier"),
    ("cpp", "add", "template", "reserved word in C++"),
    ("c", "add", "template", None),
])
def test_new_names_per_language(language, old, new, problem):
    found = LANGUAGES[language].name_problem(new, old)
    assert (found is None) if problem is None else (problem in (found or "")), found
