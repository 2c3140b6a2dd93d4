"""Tool schemas in the formats agents consume: JSON Schema, OpenAI and Anthropic."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from .tool import Tool

SchemaFormat = Literal["json", "openai", "anthropic"]
FORMATS: tuple[str, ...] = ("json", "openai", "anthropic")

_SERIAL_NOTE = " Not safe to run in parallel: calls to this tool are serialized."


def describe(tool: Tool) -> str:
    return tool.description + ("" if tool.parallel_safe else _SERIAL_NOTE)


def tool_schema(tool: Tool, format: str = "json") -> dict[str, Any]:
    parameters = tool.json_schema()
    if format == "openai":
        return {
            "type": "function",
            "function": {"name": tool.name, "description": describe(tool), "parameters": parameters},
        }
    if format == "anthropic":
        return {"name": tool.name, "description": describe(tool), "input_schema": parameters}
    if format == "json":
        return {
            "name": tool.name,
            "tier": tool.tier.value,
            "description": describe(tool),
            "parallel_safe": tool.parallel_safe,
            "parameters": parameters,
        }
    raise ValueError(f"unknown schema format {format!r}; use one of {', '.join(FORMATS)}")


def tool_schemas(tools: Iterable[Tool], format: str = "json") -> list[dict[str, Any]]:
    if format not in FORMATS:
        raise ValueError(f"unknown schema format {format!r}; use one of {', '.join(FORMATS)}")
    return [tool_schema(tool, format) for tool in sorted(tools, key=lambda t: t.name)]
