"""Availability is the intersection of a root marker and a binary, decided at call time."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from lsp_projects import PY_FILES


async def test_binary_without_marker_and_marker_without_binary(lsp_runtime, write_files):
    write_files({"loose.py": "x: int = 'a'\n"}, "scratch")
    write_files({"go.mod": "module demo\n", "main.go": "package main\n"}, "scratch")
    runtime = lsp_runtime(language_servers={"gopls": {"command": ["no-such-gopls-binary"]}})
    run = await runtime.create_run(cwd="scratch")

    hover = await run.call("lsp", {"action": "hover", "file": "loose.py", "line": 1,
                                   "symbol": "x"})
    assert hover.code == "unavailable"
    assert "no root marker (pyproject.toml" in hover.error["message"]
    assert "action=status" in hover.error["message"]

    go = await run.call("lsp", {"action": "definition", "file": "main.go", "line": 1,
                                "symbol": "main"})
    assert go.code == "unavailable"
    assert "no binary (no-such-gopls-binary) found on PATH" in go.error["message"]
    assert "no root marker" not in go.error["message"]

    status = await run.call("lsp", {"action": "status", "file": "main.go"})
    (gopls,) = status.data["servers"]
    assert gopls["root_marker"] == "go.mod" and gopls["binary"] is None and not gopls["running"]

    written = await run.call("write", {"path": "loose.py", "content": "y: int = 'b'\n"})
    assert written.ok
    assert "No diagnostics for loose.py: basedpyright: no root marker" in written.text
    assert written.data["diagnostics"]["files"]["loose.py"]["status"] == "unavailable"
    assert (await runtime.status())["resources"]["lsp"]["running"] == []  # nothing started


async def test_marker_added_later_is_picked_up(lsp_runtime, write_files, root):
    write_files({"main.py": PY_FILES["main.py"], "shapes.py": PY_FILES["shapes.py"]}, "proj")
    run = await lsp_runtime().create_run(cwd="proj")
    args = {"action": "hover", "file": "main.py", "line": 3, "symbol": "Square"}
    assert (await run.call("lsp", args)).code == "unavailable"
    (root / "proj" / "pyproject.toml").write_text(PY_FILES["pyproject.toml"])
    assert (await run.call("lsp", args)).ok


async def test_lsp_tools_need_the_resource(runtime_without_lsp):
    run = await runtime_without_lsp.create_run()
    assert "lsp" not in run.tool_names() and "write" in run.tool_names()


RUSTUP_SHIM = """#!/bin/sh
# What rustup's proxy does for a component the toolchain lacks.
echo "error: Unknown binary '$(basename "$0")' in official toolchain 'stable-x86_64-unknown-linux-gnu'." >&2
exit 1
"""


async def test_a_binary_that_does_not_run_is_not_available(lsp_runtime, write_files, tmp_path,
                                                           monkeypatch):
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "rust-analyzer").write_text(RUSTUP_SHIM)
    (shims / "rust-analyzer").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}:{os.environ['PATH']}")
    write_files({"Cargo.toml": "[package]\nname = 'demo'\n", "src/main.rs": "fn main() {}\n"},
                "crate")
    runtime = lsp_runtime()
    run = await runtime.create_run(cwd="crate")
    status = await run.call("lsp", {"action": "status", "file": "src/main.rs"})
    (entry,) = status.data["servers"]
    assert not entry["available"] and entry["binary"] is None
    assert "exited with status 1 (error: Unknown binary 'rust-analyzer'" in entry["why_not"]
    asked = await run.call("lsp", {"action": "definition", "file": "src/main.rs", "line": 1,
                                   "symbol": "main"})
    assert asked.code == "unavailable" and "rustup component add" in asked.error["message"]
    servers = (await runtime.status())["resources"]["lsp"]["servers"]
    assert not servers["rust-analyzer"]["available"]


@pytest.mark.skipif(shutil.which("rustup") is None, reason="no rustup on this machine")
async def test_the_real_rustup_shim_without_the_component(lsp_runtime, write_files):
    shim = shutil.which("rust-analyzer")
    if shim is None or os.path.basename(os.path.realpath(shim)) != "rustup":
        pytest.skip("rust-analyzer here is not a rustup shim")
    if subprocess.run([shim, "--version"], capture_output=True, timeout=60).returncode == 0:
        pytest.skip("rustup has the rust-analyzer component here")
    write_files({"Cargo.toml": "[package]\nname = 'demo'\n", "src/main.rs": "fn main() {}\n"},
                "crate")
    run = await lsp_runtime().create_run(cwd="crate")
    asked = await run.call("lsp", {"action": "hover", "file": "src/main.rs", "line": 1,
                                   "symbol": "main"})
    assert asked.code == "unavailable" and "does not run" in asked.error["message"]
