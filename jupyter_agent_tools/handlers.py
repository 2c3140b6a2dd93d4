"""Moved to `jupyter_agent_tools.http`: the names handler modules of plug-ins import from here."""

from .http.base import RUNS_RESOURCE, STATUS_RESOURCE, AgentToolsHandler, ApiError, Operation
from .http.handlers import RUN_ID, EventStreamHandler

__all__ = ["RUNS_RESOURCE", "RUN_ID", "STATUS_RESOURCE", "AgentToolsHandler", "ApiError",
           "EventStreamHandler", "Operation"]
