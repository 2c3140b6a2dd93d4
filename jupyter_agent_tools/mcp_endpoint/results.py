"""Our tools and results in MCP's terms: schemas as `Tool`s, a `ToolResult` as a `CallToolResult`."""

from __future__ import annotations

from typing import Any

import mcp_types as types

from ..runtime import ToolResult


def mcp_tools(schemas: list[dict[str, Any]]) -> list[types.Tool]:
    """The run's tools (`run.schemas(format="json")`) for tools/list; read-tier ones say so."""
    return [
        types.Tool(name=schema["name"], description=schema["description"],
                   input_schema=schema["parameters"],
                   annotations=types.ToolAnnotations(read_only_hint=schema["tier"] == "read"))
        for schema in schemas
    ]


def call_tool_result(result: ToolResult) -> types.CallToolResult:
    """Text as text content, images as image content, `data` as structured content.

    An error is `isError: true`, its code and message in the text (what the model reads) and
    in the structured content (what a program reads). HTML and diff blocks travel as the text
    the result already carries, since MCP content has no kind for them.
    """
    content: list[types.TextContent | types.ImageContent] = []
    if result.text:
        content.append(types.TextContent(type="text", text=result.text))
    for block in result.blocks:
        if block.get("type") == "image" and block.get("data"):
            content.append(types.ImageContent(type="image", data=block["data"],
                                              mime_type=block.get("mime_type", "image/png")))
    if not content:
        content.append(types.TextContent(type="text", text="(no output)"))
    structured: dict[str, Any] = dict(result.data)
    if result.error is not None:
        structured = {**structured, "error": result.error}
    return types.CallToolResult(content=content, structured_content=structured or None,
                                is_error=not result.ok)
