"""Tool schemas in the formats agents consume: JSON Schema, OpenAI and Anthropic.

Every client must take them as they are, so both schemas of a tool (its arguments and its
structured result) are made portable once per model: `$ref`s inlined, `const` as a one-value
`enum`, an integer's exclusive bound as the inclusive one. What is left converts under OpenAI's
strict mode and Gemini's function declarations (an OpenAPI subset without `$ref`, `const` or
exclusive bounds).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal

from .outputs import ToolOutput
from .tool import Tool, ToolArgs

SchemaFormat = Literal["json", "openai", "anthropic"]
FORMATS: tuple[str, ...] = ("json", "openai", "anthropic")

_SERIAL_NOTE = " Not safe to run in parallel: calls to this tool are serialized."

# Built once per model (pydantic's schema and the walk below take about a millisecond for a
# tool with actions; a listing of every tool must not hold the event loop for that), kept as
# JSON text: each caller gets its own copy, parsed (a few times faster than a deep copy).
_PARAMETERS: dict[type[ToolArgs], str] = {}
_OUTPUTS: dict[type[ToolOutput], str] = {}
# An exclusive bound as the inclusive one: the keyword it becomes, the step past it for an
# integer, and which of two bounds is the tighter.
_EXCLUSIVE = {"exclusiveMinimum": ("minimum", 1, max), "exclusiveMaximum": ("maximum", -1, min)}


def describe(tool: Tool) -> str:
    return tool.description + ("" if tool.parallel_safe else _SERIAL_NOTE)


def parameters(tool: Tool) -> dict[str, Any]:
    """The tool's arguments as agents see them, portable (a copy: the caller may change it)."""
    schema = _PARAMETERS.get(tool.Args)
    if schema is None:
        schema = _PARAMETERS[tool.Args] = json.dumps(portable(tool.json_schema()))
    return json.loads(schema)


def output_schema(tool: Tool) -> dict[str, Any]:
    """What the tool's result `data` (with `error` when it failed) looks like: an object."""
    schema = _OUTPUTS.get(tool.Output)
    if schema is None:
        built = portable(tool.Output.model_json_schema(mode="serialization"))
        schema = _OUTPUTS[tool.Output] = json.dumps(_terse(built))
    return json.loads(schema)


def _terse(node: Any) -> Any:
    """An output schema without what only repeats it: titles, and `default: null` of a key
    that is either there or not (a fifth of its size)."""
    if isinstance(node, list):
        return [_terse(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {key: ({name: _terse(sub) for name, sub in value.items()} if key == "properties"
                  else _terse(value))
            for key, value in node.items()
            if key != "title" and not (key == "default" and value is None)}


def portable(schema: dict[str, Any]) -> dict[str, Any]:
    """The same schema in the subset every client converts: `$ref`s to `$defs` inlined,
    `const: x` as `enum: [x]`, an integer's `exclusiveMinimum: n` as `minimum: n + 1` (and
    the maximum alike). A number's exclusive bound becomes the inclusive one, looser than the
    model (which still refuses the bound itself): built-in tools use `ge`/`le` instead. A
    recursive model keeps its `$ref` (it cannot be inlined)."""
    definitions = schema.get("$defs", {})
    kept: set[str] = set()

    def walk(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name in seen:
                kept.add(name)
            elif name in definitions:
                siblings = {key: value for key, value in node.items() if key != "$ref"}
                return {**walk(definitions[name], (*seen, name)), **walk(siblings, seen)}
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$defs":
                continue
            if key == "const":
                out["enum"] = [value]
            elif key in ("properties", "patternProperties") and isinstance(value, dict):
                # Names of properties, not keywords: only their schemas are walked.
                out[key] = {name: walk(sub, seen) for name, sub in value.items()}
            elif key not in _EXCLUSIVE:
                out[key] = walk(value, seen)
        integer = node.get("type") == "integer"
        for key, (bound, step, tighter) in _EXCLUSIVE.items():
            if key in node:
                value = node[key] + step if integer else node[key]
                out[bound] = tighter(value, node[bound]) if bound in node else value
        return out

    result = walk(schema, ())
    if kept:  # a recursive model: what refers to itself stays referable
        result["$defs"] = {name: walk(definitions[name], (name,)) for name in sorted(kept)}
    return result


def tool_schema(tool: Tool, format: str = "json") -> dict[str, Any]:
    arguments = parameters(tool)
    if format == "openai":
        return {
            "type": "function",
            "function": {"name": tool.name, "description": describe(tool), "parameters": arguments},
        }
    if format == "anthropic":
        return {"name": tool.name, "description": describe(tool), "input_schema": arguments}
    if format == "json":
        return {
            "name": tool.name,
            "tier": tool.tier.value,
            "description": describe(tool),
            "parallel_safe": tool.parallel_safe,
            "parameters": arguments,
            "output_schema": output_schema(tool),
        }
    raise ValueError(f"unknown schema format {format!r}; use one of {', '.join(FORMATS)}")


def tool_schemas(tools: Iterable[Tool], format: str = "json") -> list[dict[str, Any]]:
    if format not in FORMATS:
        raise ValueError(f"unknown schema format {format!r}; use one of {', '.join(FORMATS)}")
    return [tool_schema(tool, format) for tool in sorted(tools, key=lambda t: t.name)]
