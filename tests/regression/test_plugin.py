"""The pytest plugin: how a failing cell is reported, skips, and which notebooks it collects."""

from __future__ import annotations

import subprocess
import sys

import pytest
from regression_helpers import MARKED, write_notebook

pytestmark = pytest.mark.timeout(900)  # the shared plugin run executes the whole suite


def test_a_broken_notebook_is_a_failure_naming_its_cell(plugin_run):
    broken = plugin_run.of("broken.ipynb")
    assert {item: status for item, (status, _) in broken.items()} == {
        "cell[2]": "passed", "cell[3]": "passed", "cell[4]": "failed", "cell[5]": "passed"}
    assert plugin_run.returncode == 1
    message = broken["cell[4]"][1]
    assert "cell 4: result = run.call('read', {'path': 'no/such/file.py'})" in message  # its source
    assert "AssertionError: not_found" in message  # its output


def test_skips_and_the_folder_rule(plugin_run):
    skips = plugin_run.of("skips.ipynb")
    assert [skips[f"cell[{n}]"][0] for n in (2, 3, 4)] == ["passed", "skipped", "skipped"]
    assert "this install has no frobnicator" in skips["cell[4]"][1]
    # Named on the command line (its folder): collected without a marker. Opted out: never.
    assert plugin_run.of("unmarked.ipynb") == {"cell[2]": ("passed", "")}
    assert plugin_run.of("opted_out.ipynb") == {}


def test_a_plain_run_collects_only_marked_notebooks(tmp_path):
    """With paths from `testpaths` (a plain `pytest`), unmarked notebooks are left alone."""
    tests = tmp_path / "tests"
    tests.mkdir()
    write_notebook(tests / "unmarked.ipynb", ["x = 1"])
    write_notebook(tests / "marked.ipynb", ["x = 1"], MARKED)
    (tests / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    collected = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                                "--collect-only", "-q"], cwd=tmp_path, capture_output=True,
                               text=True, timeout=120)
    assert "tests/test_nothing.py::test_nothing" in collected.stdout
    assert "tests/marked.ipynb::cell[2]" in collected.stdout
    assert "unmarked" not in collected.stdout
