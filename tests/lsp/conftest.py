"""Fixtures of the language-server tests: small real projects and runtimes with only `lsp`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from traitlets.config import Config

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
def lsp_runtime(root: Path, jp_asyncio_loop):
    """`lsp_runtime(**supervisor_config)`: a Runtime over root with only the lsp resource."""
    made: list[Runtime] = []

    def make(**supervisor: Any) -> Runtime:
        # Generous bounds: CI machines are slow and shared; the timeout tests set their own.
        supervisor = {"diagnostics_timeout": 60.0, "request_timeout": 60.0, **supervisor}
        config = Config({"LanguageServerSupervisor": supervisor})
        runtime = Runtime(root_dir=str(root), resource_providers=[SUPERVISOR], config=config)
        made.append(runtime)
        return runtime

    yield make
    for runtime in made:
        jp_asyncio_loop.run_until_complete(runtime.shutdown())


@pytest.fixture
def runtime_without_lsp(root: Path, jp_asyncio_loop):
    """A Runtime with the `lsp` resource disabled."""
    runtime = Runtime(root_dir=str(root), resource_providers=[SUPERVISOR],
                      disabled_resources=["lsp"])
    yield runtime
    jp_asyncio_loop.run_until_complete(runtime.shutdown())
