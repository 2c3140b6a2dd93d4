"""notebooks/regression passes through the plugin, and covers every tool of this install."""

from __future__ import annotations

import re

import nbformat
import pytest
from regression_helpers import SUITE

pytestmark = pytest.mark.timeout(900)  # the shared plugin run executes the whole suite


def test_every_tool_is_called_by_a_regression_notebook(runtime):
    sources = "\n".join(cell.source for path in SUITE.glob("*.ipynb")
                        for cell in nbformat.read(str(path), as_version=4).cells)
    called = set(re.findall(r'\.call\(\s*"(\w+)"', sources))
    missing = sorted(tool.name for tool in runtime.registry if tool.name not in called)
    assert not missing, f"no notebook in {SUITE} calls {missing}: add one for their family"


def test_the_regression_suite_passes_through_the_plugin(plugin_run):
    notebooks = sorted(path.name for path in SUITE.glob("*.ipynb"))
    ran = {notebook: plugin_run.of(notebook) for notebook in notebooks}
    assert all(ran.values()), f"not collected: {[n for n, items in ran.items() if not items]}"
    failed = {f"{notebook}::{item}": message
              for notebook, items in ran.items() for item, (status, message) in items.items()
              if status == "failed"}
    assert not failed, "\n\n".join(f"{name}\n{message}" for name, message in failed.items())
    skipped = {f"{notebook}::{item}": message
               for notebook, items in ran.items() for item, (status, message) in items.items()
               if status == "skipped"}
    assert not skipped, f"every tool family of this install must run, not skip: {skipped}"
