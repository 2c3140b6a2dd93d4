"""jupyter-agent-tools: the built-in tool runtime of an AI agent working inside JupyterLab."""

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

__version__ = "0.1.0"

__all__ = [
    "ErrorCode", "Origin", "Resource", "Run", "Runtime", "Surface", "Tier", "Tool", "ToolArgs",
    "ToolError", "ToolResult", "__version__",
]


def _jupyter_server_extension_points():
    return [{"module": "jupyter_agent_tools.app", "app": _app_class()}]


def _app_class():
    from .app import AgentToolsApp

    return AgentToolsApp
