"""Turn a pydantic validation error into a message an agent can act on, and validate a
tool's flat arguments into the model of the action they name."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from .results import ErrorCode, ToolError

ActionT = TypeVar("ActionT")


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


def validate_action(tool: str, actions: TypeAdapter[ActionT], args: BaseModel) -> ActionT:
    """A tool's flat arguments (one object for every action, as agents see it) validated into
    the model of the action they name: a discriminated union on `action` whose members declare
    what each action needs. A field given as null counts as not given; fields other actions
    take are ignored. A missing field is `invalid_arguments` naming the action and the field,
    with the field's description as the hint."""
    given = args.model_dump(exclude_none=True)
    try:
        return actions.validate_python(given)
    except ValidationError as invalid:
        action = given.get("action", "?")
        raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                        _describe_action_error(tool, action, invalid, actions)) from None


def _describe_action_error(tool: str, action: str, error: ValidationError,
                           actions: TypeAdapter[Any]) -> str:
    hints = _field_hints(actions.json_schema(), action)
    missing, problems = [], []
    for item in error.errors(include_url=False):
        # Inside a discriminated union the location starts with the action's tag.
        field = ".".join(str(part) for part in item["loc"][1:]) or "(arguments)"
        if item["type"] == "missing":
            hint = hints.get(field)
            missing.append(f"`{field}`" + (f": {hint.rstrip('.')}" if hint else ""))
        else:
            problems.append(f"`{field}`: {item['msg']}")
    if missing:
        return f"{tool} {action} needs " + "; and ".join(missing) + "."
    return (f"Invalid arguments for {tool} {action}: {'; '.join(problems)}. Fix the arguments "
            "and call again.")


def _field_hints(schema: dict[str, Any], action: str) -> dict[str, str]:
    """Field descriptions of the union member whose `action` accepts `action`."""
    for member in schema.get("$defs", {}).values():
        tag = member.get("properties", {}).get("action", {})
        if action == tag.get("const") or action in tag.get("enum", []):
            return {name: prop.get("description", "")
                    for name, prop in member.get("properties", {}).items()}
    return {}
