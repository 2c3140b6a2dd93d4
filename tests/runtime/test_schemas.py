"""Tool schemas every client takes as they are: OpenAI's strict mode and Gemini's function
declarations convert each input schema (with their own SDKs' converters), rules such as eval's
5 to 10 words are in the schema, and each tool declares the object its results carry."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from agents.strict_schema import ensure_strict_json_schema
from google.genai import types as gemini
from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for
from pydantic import BaseModel, Field, ValidationError

from jupyter_agent_tools.runtime import ErrorCode, ToolError, ToolResult
from jupyter_agent_tools.runtime.schemas import output_schema, parameters, portable, tool_schema
from jupyter_agent_tools.tools.eval import EvalArgs

# Keywords no portable schema has: Gemini's function declarations refuse them, and a `$ref`
# beside other keywords fails OpenAI's strict mode.
REFUSED = {"$ref", "$defs", "const", "exclusiveMinimum", "exclusiveMaximum", "oneOf", "allOf"}
# Gemini's function declarations: its OpenAPI subset (the fields of the SDK's `Schema`).
GEMINI_KEYWORDS = {field.alias or name for name, field in gemini.Schema.model_fields.items()
                   } - {"defs", "ref"}


def keywords(schema: Any) -> list[tuple[str, Any]]:
    """Every (keyword, value) in a schema, property names left out."""
    found: list[tuple[str, Any]] = []
    if isinstance(schema, list):
        for item in schema:
            found += keywords(item)
    elif isinstance(schema, dict):
        for key, value in schema.items():
            if key == "properties":
                for sub in value.values():
                    found += keywords(sub)
            else:
                found.append((key, value))
                if key not in ("enum", "default", "required"):
                    found += keywords(value)
    return found


def objects(schema: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            found.append(schema)
        for value in schema.values():
            found += objects(value)
    elif isinstance(schema, list):
        for item in schema:
            found += objects(item)
    return found


@pytest.fixture
def tools(runtime):
    every = sorted(runtime.registry, key=lambda tool: tool.name)
    assert len(every) >= 22  # every built-in, whatever its resources
    return every


def test_every_input_schema_converts_under_openai_strict_mode(tools):
    for tool in tools:
        schema = parameters(tool)
        assert not REFUSED & {key for key, _ in keywords(schema)}, tool.name
        # The OpenAI Agents SDK's own converter (as it converts an MCP tool's schema); it
        # raises on what strict mode cannot take.
        strict = ensure_strict_json_schema(copy.deepcopy(schema))
        for node in objects(strict):
            assert node["additionalProperties"] is False, tool.name
            assert set(node.get("required", [])) == set(node.get("properties", {})), tool.name
        Draft202012Validator.check_schema(strict)


def test_every_input_schema_converts_to_a_gemini_function_declaration(tools):
    for tool in tools:
        schema = parameters(tool)
        used = {key for key, _ in keywords(schema)}
        assert used <= GEMINI_KEYWORDS, (tool.name, used - GEMINI_KEYWORDS)
        assert all(isinstance(value, str) for key, values in keywords(schema) if key == "enum"
                   for value in values), tool.name  # Gemini's enums are strings
        # The Gemini SDK's converter, refusing any field its Schema lacks.
        converted = gemini.Schema.from_json_schema(
            json_schema=gemini.JSONSchema.model_validate(schema), api_option="GEMINI_API",
            raise_error_on_unsupported_field=True)
        declaration = gemini.FunctionDeclaration(name=tool.name, description=tool.description,
                                                 parameters=converted)
        assert set(declaration.parameters.properties) == set(schema["properties"]), tool.name


def test_the_old_schemas_fail_these_checks():
    """The checks can fail: pydantic's own schemas of `$ref`, `const` and `gt` do."""

    class Option(BaseModel):
        label: str

    class Args(BaseModel):
        options: list[Option]
        outputs: bool | str = Field(json_schema_extra={"const": "images"})
        timeout: float = Field(gt=0)

    raw = Args.model_json_schema()
    with pytest.raises(ValidationError):
        gemini.JSONSchema.model_validate(raw)
    assert {"$ref", "const", "exclusiveMinimum"} <= {key for key, _ in keywords(raw)}
    assert not REFUSED & {key for key, _ in keywords(portable(raw))}


def test_portable_inlines_refs_and_keeps_what_an_integer_bound_means():
    class Option(BaseModel):
        label: str = Field(min_length=1)

    class Args(BaseModel):
        first: Option = Field(description="the first")
        rest: list[Option] = []
        mode: str = Field("images", json_schema_extra={"const": "images"})
        count: int = Field(gt=0, lt=10)

    schema = portable(Args.model_json_schema())
    assert "$defs" not in schema and "$ref" not in json.dumps(schema)
    first = schema["properties"]["first"]
    assert first["description"] == "the first" and first["properties"]["label"]["minLength"] == 1
    assert schema["properties"]["rest"]["items"]["required"] == ["label"]
    assert schema["properties"]["mode"]["enum"] == ["images"]
    count = schema["properties"]["count"]
    assert (count["minimum"], count["maximum"]) == (1, 9)
    validator = Draft202012Validator(schema)
    for value in (0, 1, 9, 10):  # the schema and the model agree on every edge
        arguments = {"first": {"label": "a"}, "count": value}
        model_accepts = True
        try:
            Args.model_validate(arguments)
        except ValidationError:
            model_accepts = False
        assert validator.is_valid(arguments) is model_accepts, value


def test_a_recursive_model_keeps_its_reference():
    class Node(BaseModel):
        name: str
        children: list[Node] = []

    schema = portable(Node.model_json_schema())
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    validator = Draft202012Validator(schema)
    assert validator.is_valid({"name": "a", "children": [{"name": "b", "children": []}]})
    assert not validator.is_valid({"name": "a", "children": [{"children": []}]})


def test_built_in_models_bound_numbers_inclusively(tools):
    """So the portable schema says exactly what the model checks (no bound was loosened)."""
    for tool in tools:
        raw = json.dumps(tool.json_schema())
        assert "exclusiveMinimum" not in raw and "exclusiveMaximum" not in raw, tool.name


@pytest.mark.parametrize("description, words", [
    ("print the answer", 3), ("one two three four", 4),
    ("one two three four five", 5), ("  load\tthe data\nand plot  it ", 6),
    ("a b c d e f g h i j", 10), ("a b c d e f g h i j k", 11),
    ("load\u00a0the\u2003data and plot", 5), ("", 0), ("      ", 0),
])
def test_evals_description_rule_is_in_its_schema_and_the_same_on_the_server(
        runtime, description, words):
    [tool] = [tool for tool in runtime.registry if tool.name == "eval"]
    schema = tool_schema(tool, "anthropic")["input_schema"]
    prop = schema["properties"]["description"]
    assert "5 to 10 words" in prop["description"] and prop["pattern"]
    client_accepts = Draft202012Validator(schema).is_valid(
        {"code": "1", "description": description})
    server_accepts = True
    try:
        EvalArgs.model_validate({"code": "1", "description": description})
    except ValidationError as invalid:
        server_accepts = False
        assert f"must be 5 to 10 words, got {words}" in str(invalid)
    assert client_accepts is server_accepts is (5 <= words <= 10)


def test_every_tool_declares_an_object_its_results_validate_against(tools):
    for tool in tools:
        schema = output_schema(tool)
        assert schema["type"] == "object", tool.name  # MCP's rule for an outputSchema
        validator_for(schema).check_schema(schema)
        assert not REFUSED & {key for key, _ in keywords(schema)}, tool.name
        validator = validator_for(schema)(schema)
        for code in ErrorCode:
            failed = ToolError(code, "what to do next").to_result()
            assert validator.is_valid({**failed.data, "error": failed.error}), (tool.name, code)
        assert validator.is_valid(ToolResult.success("ok").data)
        assert not validator.is_valid({"error": {"code": "no_such_code", "message": "x"}})
        assert not validator.is_valid({"truncated": "yes"})


def test_a_declared_key_has_its_type(tools):
    by_name = {tool.name: tool for tool in tools}
    read = validator_for(schema := output_schema(by_name["read"]))(schema)
    assert read.is_valid({"path": "a.py", "start_line": 1, "total_lines": 3})
    assert not read.is_valid({"path": "a.py", "start_line": "1"})
    assert tool_schema(by_name["read"])["output_schema"] == schema  # the json format has it


def test_schemas_are_built_once_and_each_caller_gets_its_own_copy(tools):
    read = next(tool for tool in tools if tool.name == "read")
    first, output = parameters(read), output_schema(read)
    first["properties"].clear()
    output["properties"].clear()  # a caller's change reaches nobody else
    assert "path" in parameters(read)["properties"] and "path" in output_schema(read)["properties"]
