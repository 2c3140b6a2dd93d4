"""Arguments are taken at their JSON type, on every tool: no coercion of `"yes"`, `1` or `1.0`."""

from __future__ import annotations

from typing import Any

import pytest

# A value of the wrong JSON type for each scalar type a schema declares.
WRONG: dict[str, list[Any]] = {
    "boolean": ["yes", "true", 1, 0],
    "integer": ["1", 1.0, True],
    "string": [1, True],
}


def _scalar_fields(schema: dict[str, Any]) -> list[tuple[str, str]]:
    """Fields of exactly one scalar type (a field that also takes null counts as that type)."""
    fields = []
    for name, prop in schema["properties"].items():
        kinds = {p.get("type") for p in prop.get("anyOf", [prop])} - {"null"}
        if len(kinds) == 1 and (kind := kinds.pop()) in WRONG:
            fields.append((name, kind))
    return fields


async def test_no_tool_coerces_a_scalar_of_the_wrong_json_type(runtime, root):
    (root / "a.txt").write_text("a\n")
    run = await runtime.create_run(vibe=True)
    checked = 0
    for schema in run.schemas("anthropic"):
        for field, kind in _scalar_fields(schema["input_schema"]):
            for value in WRONG[kind]:
                result = await run.call(schema["name"], {field: value})
                assert result.code == "invalid_arguments", (schema["name"], field, value)
                assert f"`{field}`" in result.error["message"], (schema["name"], field, value)
                checked += 1
    assert checked > 100  # every tool has scalars: the loop really ran over them


@pytest.mark.parametrize("run_value", ["yes", 1, "true"])
async def test_a_string_or_number_never_runs_a_cell(runtime, root, run_value):
    run = await runtime.create_run()
    created = await run.call("write", {"path": "n.ipynb", "content": (
        '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')})
    assert created.ok, created.text
    result = await run.call("notebook", {"action": "insert", "path": "n.ipynb",
                                         "source": "print(1)", "run": run_value})
    assert result.code == "invalid_arguments" and "`run`" in result.error["message"]
    assert '"print(1)"' not in (root / "n.ipynb").read_text()
