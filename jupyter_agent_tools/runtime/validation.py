"""Turn a pydantic validation error into a message an agent can act on."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError


def _expected(schema: dict[str, Any]) -> str:
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    parts = []
    for key, prop in props.items():
        kind = prop.get("type") or "/".join(
            p.get("type", "?") for p in prop.get("anyOf", []) if p.get("type") != "null"
        )
        if "enum" in prop:
            kind = " | ".join(map(str, prop["enum"]))
        parts.append(f"{key}{'' if key in required else '?'}: {kind or 'any'}")
    return "{" + ", ".join(parts) + "}"


def describe_validation_error(tool: str, error: ValidationError, schema: dict[str, Any]) -> str:
    problems = []
    for item in error.errors(include_url=False):
        field = ".".join(str(part) for part in item["loc"]) or "(arguments)"
        problems.append(f"`{field}`: {item['msg']}")
    return (
        f"Invalid arguments for {tool}: {'; '.join(problems)}. "
        f"Expected {_expected(schema)}. Fix the arguments and call again."
    )
