"""validate_action: a tool's flat arguments into the model of the action they name."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field, TypeAdapter

from jupyter_agent_tools.runtime import ToolArgs, ToolError
from jupyter_agent_tools.runtime.validation import validate_action


class FlatArgs(ToolArgs):
    action: Literal["fetch", "drop", "list"]
    url: str | None = None
    retries: int | None = None


class Fetch(BaseModel):
    action: Literal["fetch"]
    url: str = Field(description="the address to fetch.")
    retries: int = Field(2, ge=0, le=5)


class Drop(BaseModel):
    action: Literal["drop", "list"]  # one model may serve several actions
    url: str | None = None


ACTIONS: TypeAdapter[Fetch | Drop] = TypeAdapter(
    Annotated[Fetch | Drop, Field(discriminator="action")])


def test_flat_arguments_become_the_actions_model():
    fetched = validate_action("web", ACTIONS, FlatArgs(action="fetch", url="https://x", retries=1))
    assert fetched == Fetch(action="fetch", url="https://x", retries=1)
    listed = validate_action("web", ACTIONS, FlatArgs(action="list", retries=3))
    assert listed == Drop(action="list")  # a field the action does not take is ignored


def test_a_missing_field_names_the_action_and_gives_its_description_as_hint():
    with pytest.raises(ToolError) as missing:
        validate_action("web", ACTIONS, FlatArgs(action="fetch", url=None))
    assert missing.value.code.value == "invalid_arguments"
    assert missing.value.message == "web fetch needs `url`: the address to fetch."


def test_any_other_problem_names_the_field_and_what_is_wrong():
    with pytest.raises(ToolError) as invalid:
        validate_action("web", ACTIONS, FlatArgs(action="fetch", url="https://x", retries=9))
    assert invalid.value.message.startswith("Invalid arguments for web fetch: `retries`: ")
    assert "less than or equal to 5" in invalid.value.message


def test_a_tools_schema_is_built_once_and_each_caller_gets_its_own_copy(runtime):
    # pydantic builds a schema anew each time: listing every tool cost 15-30 ms of the loop.
    run_tools = {tool.name: tool for tool in runtime.registry}
    grep = run_tools["grep"]
    first = grep.json_schema()
    expected = grep.Args.model_json_schema()
    expected.pop("title")
    assert first == expected
    first["properties"].clear()  # a caller's change reaches nobody else
    assert grep.json_schema() == expected
