"""Helpers of the regression tests: notebooks written on the fly, and one plugin run."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "notebooks" / "regression"
MARKED = {"agent_tools": {"regression": True}}
OPTED_OUT = {"agent_tools": {"regression": False}}


def write_notebook(path: Path, cells: list[str], metadata: dict | None = None) -> Path:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata.update(metadata or {})
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    notebook.cells = [nbformat.v4.new_markdown_cell("# a regression notebook")]
    notebook.cells += [nbformat.v4.new_code_cell(source) for source in cells]
    nbformat.write(notebook, str(path))
    return path


@dataclass
class PluginRun:
    """What the subprocess printed, and each item's outcome by (notebook file name, item name)."""

    returncode: int
    output: str
    outcomes: dict[tuple[str, str], tuple[str, str]]  # → (passed|failed|skipped, message)

    def of(self, notebook: str) -> dict[str, tuple[str, str]]:
        return {item: outcome for (name, item), outcome in self.outcomes.items() if name == notebook}


def run_plugin(workdir: Path, *paths: Path) -> PluginRun:
    report = workdir / "report.xml"
    ini = workdir / "pytest.ini"  # empty: the repository's ini (its testpaths, warnings) stays out
    ini.touch()
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-c", str(ini),
         "--rootdir", str(REPO), "--timeout", "600", "-q", "-rs", f"--junitxml={report}",
         *map(str, paths)],
        cwd=REPO, capture_output=True, text=True, timeout=1200,
    )
    outcomes = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        notebook = case.get("classname", "").rsplit(".ipynb", 1)[0].rsplit(".", 1)[-1] + ".ipynb"
        status, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                status = "skipped" if child.tag == "skipped" else "failed"
                message = f"{child.get('message', '')}\n{child.text or ''}"
        outcomes[(notebook, case.get("name", ""))] = (status, message)
    return PluginRun(completed.returncode, completed.stdout + completed.stderr, outcomes)
