"""The panel's TypeScript: its state logic's unit tests (vitest), the panel and those tests
type-checked against the API types, and the API types in step with the OpenAPI document the
server serves. All run here so `make test` is the one command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

LABEXTENSION = Path(__file__).resolve().parents[2] / "labextension"
NODE_MODULES = LABEXTENSION / "node_modules"

pytestmark = [
    pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed"),
    pytest.mark.skipif(not NODE_MODULES.is_dir(),
                       reason="labextension/node_modules is absent: run scripts/setup.sh "
                              "(pip install -e . builds the extension and installs it)"),
]


def _node(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHON": sys.executable, "CI": "1", "NO_COLOR": "1"}
    return subprocess.run(["node", *args], cwd=LABEXTENSION, env=env, capture_output=True,
                          text=True, timeout=240)


def test_the_panel_state_logic_passes_its_unit_tests() -> None:
    result = _node(str(NODE_MODULES / "vitest" / "vitest.mjs"), "run")
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout and "failed" not in result.stdout, result.stdout


def test_the_panel_and_its_unit_tests_type_check_against_the_generated_api_types() -> None:
    """The unit tests build cards, events and workers as the server sends them: a field the
    server adds or renames shows here, not only in the browser."""
    result = _node(str(NODE_MODULES / "typescript" / "bin" / "tsc"), "-p", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_api_types_are_generated_from_the_served_openapi_document() -> None:
    result = _node("scripts/generate-api.mjs", "--check")
    assert result.returncode == 0, (
        result.stdout + result.stderr
        + "\nRegenerate: cd labextension && PYTHON=../.venv/bin/python npm run api"
    )
