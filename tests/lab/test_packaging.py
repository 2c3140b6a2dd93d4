"""The JupyterLab extension is built by `pip install` and JupyterLab finds it, enabled and OK."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

LABEXTENSION = Path(__file__).resolve().parents[2] / "labextension"


def test_jupyter_labextension_list_shows_it_enabled_and_ok() -> None:
    listing = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"],
        capture_output=True, text=True, timeout=120, check=True,
    )
    output = re.sub(r"\x1b\[[0-9;]*m", "", listing.stdout + listing.stderr)  # no colours
    line = next((ln for ln in output.splitlines() if "jupyter-agent-tools" in ln), None)
    assert line is not None, output
    assert "enabled" in line and "OK" in line, line


def test_the_installed_extension_is_the_built_one() -> None:
    built = json.loads((LABEXTENSION / "build" / "package.json").read_text())
    assert built["name"] == "jupyter-agent-tools"
    remote_entry = built["jupyterlab"]["_build"]["load"]
    assert (LABEXTENSION / "build" / remote_entry).is_file()
