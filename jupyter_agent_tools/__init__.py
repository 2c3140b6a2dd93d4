"""jupyter-agent-tools: the built-in tool runtime of an AI agent working inside JupyterLab.

The public names load on first use: pytest imports this package (for the regression-notebook
plugin, testing/plugin.py) in every run, and a plain run must not pay for the runtime.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .app import AgentToolsApp
    from .runtime import (
        ErrorCode,
        Origin,
        Resource,
        Run,
        Runtime,
        Surface,
        Tier,
        Tool,
        ToolArgs,
        ToolError,
        ToolResult,
    )

__all__ = [
    "ErrorCode", "Origin", "Resource", "Run", "Runtime", "Surface", "Tier", "Tool", "ToolArgs",
    "ToolError", "ToolResult", "__version__",
]
_RUNTIME_EXPORTS = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> Any:
    if name not in _RUNTIME_EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(".runtime", __name__), name)


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    return [{"module": "jupyter_agent_tools.app", "app": _app_class()}]


def _app_class() -> type[AgentToolsApp]:
    from .app import AgentToolsApp

    return AgentToolsApp
