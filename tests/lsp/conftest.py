"""Fixtures of the language-server tests: small real projects and runtimes with only `lsp`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jupyter_agent_tools import Runtime

SUPERVISOR = "jupyter_agent_tools.lsp.supervisor:LanguageServerSupervisor"

@pytest.fixture
def write_files(root: Path) -> Callable[[dict[str, str], str], Path]:
    """`write_files({"a.py": "..."}, "proj")` creates files under root/proj; returns the folder."""

    def write(files: dict[str, str], folder: str = ".") -> Path:
        base = root / folder
        for name, text in files.items():
            path = base / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return base

    return write


@pytest.fixture
def lsp_runtime(runtime_factory):
    """`lsp_runtime(**supervisor_config)`: a Runtime over root with only the lsp resource."""

    def make(**supervisor: Any) -> Runtime:
        # Generous bounds: CI machines are slow and shared; the timeout tests set their own.
        supervisor = {"diagnostics_timeout_seconds": 60.0, "request_timeout_seconds": 60.0, **supervisor}
        return runtime_factory({"LanguageServerSupervisor": supervisor},
                               resource_providers=[SUPERVISOR])

    return make


@pytest.fixture
def runtime_without_lsp(runtime_factory):
    """A Runtime with the `lsp` resource disabled."""
    return runtime_factory(resource_providers=[SUPERVISOR], disabled_resources=["lsp"])
