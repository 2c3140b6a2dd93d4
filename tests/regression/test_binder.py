"""binder/ (repo2docker): checked statically, since Binder itself cannot be reached from CI.

Running postBuild in a clean environment would take minutes (a full install); instead postBuild
is the README's own set-up (scripts/setup.sh, which `make test` runs on every CI machine)
pointed at Binder's environment, and these tests check that it stays that: executable, valid
bash, calling only scripts that exist, and configuring only settings that exist. The tour it
opens runs in tests/test_tour.py with the same worker settings.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pathspec
from traitlets.config import Configurable

from jupyter_agent_tools.testing.agents import SERVER_ARGS

REPO = Path(__file__).resolve().parents[2]
BINDER = REPO / "binder"


def test_scripts_are_executable_bash_that_parses():
    for name in ("postBuild", "start"):
        script = BINDER / name
        assert os.access(script, os.X_OK), f"binder/{name} must be executable (chmod +x)"
        assert script.read_text().startswith("#!/usr/bin/env bash\n")
        parsed = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert parsed.returncode == 0, parsed.stderr


def test_post_build_is_the_readme_set_up_pointed_at_binders_environment():
    text = (BINDER / "postBuild").read_text()
    assert re.search(r'^VENV="\$PREFIX" PYTHON="\$PREFIX/bin/python" bash scripts/setup\.sh$',
                     text, re.MULTILINE)
    referenced = set(re.findall(r"\b((?:scripts|binder)/[\w./-]+)", text))
    assert referenced == {"scripts/setup.sh", "binder/jupyter_server_config.json"}
    assert all((REPO / path).is_file() for path in referenced)
    setup = (REPO / "scripts/setup.sh").read_text()
    assert 'VENV="${VENV:-.venv}"' in setup and 'PYTHON="${PYTHON:-python3}"' in setup


def test_binder_settings_exist_and_match_the_tested_tour():
    config = json.loads((BINDER / "jupyter_server_config.json").read_text())
    assert config["ServerApp"]["default_url"] == "/lab/tree/notebooks/tour.ipynb"
    assert (REPO / "notebooks/tour.ipynb").is_file()
    tested = {}
    for option in SERVER_ARGS:
        name, value = option.removeprefix("--").split("=", 1)
        section, trait = name.split(".")
        tested.setdefault(section, {})[trait] = value
    assert {k: v for k, v in config.items() if k != "ServerApp"} == tested
    for section, traits in config.items():
        configurable = _configurable(section)
        assert set(traits) <= set(configurable.class_traits(config=True)), section


def test_start_puts_the_npm_servers_on_path():
    assert ".tools/node/node_modules/.bin" in (BINDER / "start").read_text()
    assert ".tools/node" in (REPO / "scripts/setup.sh").read_text()
    assert (BINDER / "runtime.txt").read_text().strip().startswith("python-3.")


def test_the_tours_scratch_copies_are_not_gitignored():
    """The tools honour .gitignore: a rule over the tour's copies (beside the notebook) would
    hide the whole sample project from them. `git status` is kept clean otherwise (see
    tests/test_tour.py)."""
    rules = pathspec.GitIgnoreSpec.from_lines((REPO / ".gitignore").read_text().splitlines())
    assert not rules.match_file("notebooks/agent-tools-runs/run-x/inventory/stock.py")


def _configurable(name: str) -> type[Configurable]:
    from jupyter_server.serverapp import ServerApp

    from jupyter_agent_tools.workers.pool import WorkerPool
    from jupyter_agent_tools.workers.python_backend import PythonBackend

    return {"ServerApp": ServerApp, "WorkerPool": WorkerPool, "PythonBackend": PythonBackend}[name]
