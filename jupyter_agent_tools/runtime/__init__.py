"""The core: Runtime, Run, tools, tiers, results."""

from .approvals import Permission
from .protocols import RuntimeView, RunView
from .results import ErrorCode, ToolError, ToolResult
from .run import Run, RunOptions
from .runtime import Runtime
from .tiers import Approvals, Surface, Tier
from .tool import CallContext, Origin, Resource, Tool, ToolArgs

__all__ = [
    "Approvals", "CallContext", "ErrorCode", "Origin", "Permission", "Resource", "Run",
    "RunOptions", "RunView", "Runtime", "RuntimeView", "Surface", "Tier", "Tool", "ToolArgs",
    "ToolError", "ToolResult",
]
