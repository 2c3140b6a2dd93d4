"""Tool-regression notebooks: a pytest plugin, a server to run them against, and helpers.

Inside such a notebook, one line gives a run on the server the plugin started:

    from jupyter_agent_tools.testing import regression_run
    run = regression_run()                       # a fresh copy of the bundled sample project
    result = run.call("grep", {"pattern": "def "})
    assert result.ok, result.error

Run them with `pytest notebooks/regression` (a folder given on the command line), or mark a
notebook anywhere with the metadata {"agent_tools": {"regression": true}}.
"""

from __future__ import annotations

import importlib
from typing import Any

# Loaded on first use: pytest imports this package (for the plugin) in every run.
_EXPORTS = {
    "RegressionRun": ".runs", "SkipNotebook": ".runs", "regression_run": ".runs",
    "server_client": ".runs", "ScriptedHuman": ".human", "JupyterServerProcess": ".server",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
