"""Our tools and results in MCP's terms: schemas as `Tool`s, a `ToolResult` as a `CallToolResult`."""

from __future__ import annotations

from typing import Any

from ..runtime import ToolResult
from . import sdk
from .sdk import types


def mcp_tools(schemas: list[dict[str, Any]]) -> list[types.Tool]:
    """The run's tools (`run.schemas(format="json")`) for tools/list, each with the schema of
    its structured content; read-tier ones say so."""
    return [
        sdk.tool(schema["name"], schema["description"], schema["parameters"],
                 schema["output_schema"], read_only=schema["tier"] == "read")
        for schema in schemas
    ]


def call_tool_result(result: ToolResult) -> types.CallToolResult:
    """Text as text content, images as image content, `data` as structured content.

    An error is `isError: true`, its code and message in the text (what the model reads) and
    in the structured content (what a program reads). HTML and diff blocks travel as the text
    the result already carries, since MCP content has no kind for them.
    """
    content: list[dict[str, Any]] = []
    if result.text:
        content.append({"type": "text", "text": result.text})
    for block in result.blocks:
        if block.get("type") == "image" and block.get("data"):
            content.append({"type": "image", "data": block["data"],
                            "mimeType": block.get("mime_type", "image/png")})
    if not content:
        content.append({"type": "text", "text": "(no output)"})
    # Always an object, if an empty one: a tool that declares an outputSchema must answer
    # structured content (clients refuse a result without it).
    structured: dict[str, Any] = dict(result.data)
    if result.error is not None:
        structured = {**structured, "error": result.error}
    return sdk.call_tool_result(content, structured, is_error=not result.ok)
