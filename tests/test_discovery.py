"""Discovery: root markers, binaries (versioned names, the Python environment's bin), the
version probe, and specs validated as config loads."""

from __future__ import annotations

import logging
import os
import shutil
import sys
from pathlib import Path

from jupyter_agent_tools.dap.adapters import AdapterSpec
from jupyter_agent_tools.discovery import BinaryFinder, find_executable, find_root, load_specs
from jupyter_agent_tools.lsp.specs import BUILTIN_SPECS, ServerSpec

LOG = logging.getLogger("test")


def executable(path: Path, body: str = "exit 0") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def test_versioned_names_on_path_pick_the_highest(tmp_path, monkeypatch):
    for version in ("9", "14", "19"):
        executable(tmp_path / f"clangd-{version}")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_executable(["clangd", "clangd-*"]) == str(tmp_path / "clangd-19")
    assert find_executable(["surely-not-a-binary"]) is None


def test_absolute_globs_pick_the_highest_folder_version(tmp_path):
    for version in ("9", "18", "19"):
        executable(tmp_path / f"llvm-{version}" / "bin" / "lldb-dap")
    pattern = str(tmp_path / "llvm-*" / "bin" / "lldb-dap")
    assert find_executable(["no-lldb-dap-here", pattern], path="") == \
        str(tmp_path / "llvm-19" / "bin" / "lldb-dap")


def test_the_python_environments_bin_comes_after_path(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    found = find_executable([os.path.basename(sys.executable)])
    assert found is not None and Path(found).parent == Path(sys.prefix) / "bin"


def test_root_markers_are_looked_for_up_to_the_stop_folder(tmp_path):
    (tmp_path / "proj" / "src" / "deep").mkdir(parents=True)
    (tmp_path / "Cargo.toml").write_text("")
    (tmp_path / "proj" / "pyproject.toml").write_text("")
    source = tmp_path / "proj" / "src" / "deep" / "main.py"
    assert find_root(["pyproject.toml"], source, tmp_path) == (tmp_path / "proj",
                                                               "pyproject.toml")
    # Above the stop folder does not count.
    assert find_root(["Cargo.toml"], source, tmp_path / "proj") is None
    assert find_root(["Cargo.toml"], source, tmp_path) == (tmp_path, "Cargo.toml")


async def test_the_version_probe_says_why_a_binary_does_not_run(tmp_path, monkeypatch,
                                                                jp_asyncio_loop):
    executable(tmp_path / "good-server", "echo 'good 1.0'")
    executable(tmp_path / "broken-server", "echo 'error: no toolchain' >&2; exit 3")
    executable(tmp_path / "hanging-server", f"exec {shutil.which('sleep')} 300")
    monkeypatch.setenv("PATH", str(tmp_path))
    finder = BinaryFinder(probe_timeout=1)

    good = await finder.check(["good-server"], ["--version"])
    assert good.path == str(tmp_path / "good-server") and good.problem is None

    broken = await finder.check(["broken-server"], ["--version"])
    assert broken.path is None
    assert "`broken-server --version` exited with status 3 (error: no toolchain)" in \
        broken.problem

    hanging = await finder.check(["hanging-server"], ["--version"])
    assert hanging.path is None and "did not finish within 1s" in hanging.problem

    missing = await finder.check(["no-such-server", "no-such-server-*"])
    assert missing.problem == ("no binary (no-such-server, no-such-server-*) found on PATH "
                               "or in the Python environment's bin folder")

    # A repaired binary is probed again (the file changed); an installed one is found.
    executable(tmp_path / "broken-server", "echo fixed 2.0")
    assert (await finder.check(["broken-server"], ["--version"])).problem is None
    executable(tmp_path / "no-such-server")
    assert (await finder.check(["no-such-server", "no-such-server-*"])).path is not None


def test_a_spec_with_a_wrong_type_is_refused_by_name_and_the_rest_load():
    specs, errors = load_specs(ServerSpec, BUILTIN_SPECS, {
        # a string where a list is expected: refused, never split into characters
        "ocaml": {"extensions": {".ml": "ocaml"}, "root_markers": "dune-project",
                  "command": ["ocamllsp"]},
        "zig": {"extensions": {".zig": "zig"}, "root_markers": ["build.zig"],
                "command": ["zls"]},
        "ruff": {"navigation": "sometimes"},
        "nim": ["nimlangserver"],
    }, LOG, "language server")
    assert "ocaml" not in specs
    assert errors["ocaml"].startswith("root_markers: Input should be a valid tuple")
    assert specs["zig"].root_markers == ("build.zig",)
    assert "navigation" in errors["ruff"] and specs["ruff"].navigation is False  # kept
    assert "nim" not in specs and "mapping" in errors["nim"]
    assert "basedpyright" in specs


def test_adapter_specs_load_the_same_way():
    specs, errors = load_specs(AdapterSpec, [], {
        "gdb": {"adapter_id": "gdb", "binaries": ["gdb"], "command": ["{binary}"],
                "markers": "Makefile"},
    }, LOG, "debug adapter")
    assert specs == {} and errors["gdb"].startswith("markers: Input should be a valid list")
