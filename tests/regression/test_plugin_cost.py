"""The pytest plugin costs a plain `pytest` run nothing: loading it pulls in no heavy module.

pytest loads the plugin (entry point `pytest11`) in every run of every project where the
package is installed. Timing is too noisy to assert on, so these tests assert what loading it
imports; `python -X importtime -c "import jupyter_agent_tools.testing.plugin"` gives the time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

# What the runtime, the server or a kernel would drag in; none may load with the plugin.
HEAVY = ["jupyter_server", "jupyter_client", "tornado", "zmq", "pydantic", "traitlets",
         "nbclient", "nbformat", "psutil", "httpx", "jupyter_agent_tools.runtime"]


def test_importing_the_plugin_adds_only_its_own_small_modules():
    probe = (
        "import json, sys\n"
        "import pytest\n"
        "before = set(sys.modules)\n"
        "import jupyter_agent_tools.testing.plugin\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    added = json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True,
                                      text=True, check=True).stdout)
    ours = {"jupyter_agent_tools", "jupyter_agent_tools._version", "jupyter_agent_tools.testing",
            "jupyter_agent_tools.testing.plugin"}
    assert set(added) == ours


def test_a_plain_pytest_run_of_another_project_loads_nothing_heavy(tmp_path):
    """A real run with only this plugin loaded: the project's own test checks sys.modules."""
    (tmp_path / "test_other_project.py").write_text(
        "import sys\n"
        f"HEAVY = {HEAVY!r}\n"
        "def test_nothing_heavy_was_loaded(pytestconfig):\n"
        "    assert pytestconfig.pluginmanager.has_plugin('jupyter_agent_tools.testing.plugin')\n"
        "    assert [name for name in HEAVY if name in sys.modules] == []\n"
    )
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # other plugins load their own
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "jupyter_agent_tools.testing.plugin",
         "-p", "no:cacheprovider", "-q", str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
