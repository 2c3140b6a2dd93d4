"""Fixtures for the debug tests: small projects to debug."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from debug_helpers import C_PROGRAM, PYTHON_PROGRAM, lldb_dap_binary


@pytest.fixture
def python_project(root: Path) -> Path:
    """A Python project (pyproject.toml marker) with app.py."""
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (root / "app.py").write_text(PYTHON_PROGRAM)
    return root


@pytest.fixture
def c_project(root: Path) -> Path:
    """A C project (CMakeLists.txt marker) with `prog` built by gcc -g."""
    if lldb_dap_binary() is None:
        pytest.skip("lldb-dap is not installed (Debian: apt-get install lldb-19; "
                    "scripts/setup.sh does it)")
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed (scripts/setup.sh installs it)")
    (root / "CMakeLists.txt").write_text("project(demo C)\nadd_executable(prog prog.c)\n")
    (root / "prog.c").write_text(C_PROGRAM)
    subprocess.run(["gcc", "-g", "-O0", "-o", str(root / "prog"), str(root / "prog.c")],
                   check=True)
    return root


@pytest.fixture
def project_venv(python_project: Path) -> Path:
    """A real virtualenv in the project (.venv, no pip): the debuggee must run in it."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip",
                    str(python_project / ".venv")], check=True)
    return python_project / ".venv"
