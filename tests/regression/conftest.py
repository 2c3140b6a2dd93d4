"""One run of the pytest plugin, in a subprocess, shared by the tests of this folder.

It runs the repository's regression suite (notebooks/regression) together with a few
notebooks written here (a broken one, one that skips, an unmarked one in a folder given on the
command line, an opted-out one): one Jupyter server for all, which keeps CI fast.
"""

from __future__ import annotations

import pytest
from regression_helpers import MARKED, OPTED_OUT, SUITE, PluginRun, run_plugin, write_notebook


@pytest.fixture(scope="session")
def plugin_run(tmp_path_factory) -> PluginRun:
    workdir = tmp_path_factory.mktemp("plugin")
    extra = workdir / "extra"
    extra.mkdir()
    write_notebook(extra / "broken.ipynb", [
        "from jupyter_agent_tools.testing import regression_run\n"
        "run = regression_run()",
        "result = run.call('read', {'path': 'inventory/stock.py', 'limit': 3})\n"
        "assert result.ok, result.error",
        "result = run.call('read', {'path': 'no/such/file.py'})\n"
        "assert result.ok, result.error['code']",
        "print('later cells still run')",
    ], MARKED)
    write_notebook(extra / "skips.ipynb", [
        "from jupyter_agent_tools.testing import SkipNotebook",
        "raise SkipNotebook('this install has no frobnicator')",
        "raise AssertionError('skipped cells do not run')",
    ], MARKED)
    write_notebook(extra / "unmarked.ipynb", ["x = 1"])
    write_notebook(extra / "opted_out.ipynb", ["raise SystemExit('never collected')"], OPTED_OUT)
    return run_plugin(workdir, SUITE, extra)
