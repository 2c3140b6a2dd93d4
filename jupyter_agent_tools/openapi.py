"""Moved to `jupyter_agent_tools.http.openapi`; `openapi_document()` stays importable here."""

from .http.openapi import openapi_document, route_template

__all__ = ["openapi_document", "route_template"]
