"""Runs: tiers decide visibility, one dispatch path validates, gates and records every call."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import Field

from jupyter_agent_tools import Tier, Tool, ToolArgs, ToolResult
from jupyter_agent_tools.runtime import Resource


async def test_full_run_sees_every_file_tool(runtime):
    run = await runtime.create_run()
    assert {"read", "write", "edit", "apply_patch", "glob", "grep", "bash"} <= set(run.tool_names())


@pytest.mark.parametrize("surface", ["plan", "readonly"])
async def test_plan_and_readonly_see_read_tools_only(runtime, root, surface):
    run = await runtime.create_run(surface=surface)
    tiers = {schema["name"]: schema["tier"] for schema in run.schemas()}
    assert tiers and set(tiers.values()) == {"read"}
    assert "write" not in run.tool_names() and "bash" not in run.tool_names()
    for name, args in [("write", {"path": "x", "content": "y"}), ("bash", {"command": "true"})]:
        result = await run.call(name, args)
        assert result.code == "unknown_tool"
    assert not (root / "x").exists()


async def test_schemas_in_three_formats(runtime):
    run = await runtime.create_run()
    openai = {s["function"]["name"]: s for s in run.schemas("openai")}
    anthropic = {s["name"]: s for s in run.schemas("anthropic")}
    plain = {s["name"]: s for s in run.schemas("json")}
    assert openai.keys() == anthropic.keys() == plain.keys() == set(run.tool_names())
    read = anthropic["read"]["input_schema"]
    assert read["required"] == ["path"] and read["additionalProperties"] is False
    assert openai["read"]["function"]["parameters"] == read
    with pytest.raises(ValueError):
        run.schemas("xml")


async def test_invalid_arguments_name_the_field_and_what_was_expected(runtime):
    run = await runtime.create_run()
    result = await run.call("read", {"path": 3})
    assert result.code == "invalid_arguments"
    assert "`path`" in result.error["message"] and "path: string" in result.error["message"]
    result = await run.call("read", {"path": "a", "colour": "red"})
    assert result.code == "invalid_arguments" and "colour" in result.error["message"]
    result = await run.call("read", ["not", "an", "object"])
    assert result.code == "invalid_arguments"


async def test_deny_refuses_write_and_exec_but_not_read(runtime, root):
    (root / "a.txt").write_text("a\n")
    run = await runtime.create_run(approvals="deny")
    assert (await run.call("read", {"path": "a.txt"})).ok
    for name, args in [("write", {"path": "a.txt", "content": "b"}), ("bash", {"command": "true"})]:
        result = await run.call(name, args)
        assert result.code == "permission_denied", result.text
    assert (root / "a.txt").read_text() == "a\n"


async def test_ask_without_a_question_port_refuses_clearly(runtime):
    run = await runtime.create_run(approvals="ask")
    result = await run.call("write", {"path": "a.txt", "content": "b"})
    assert result.code == "permission_denied"
    assert "space" in result.error["message"]


async def test_transcript_and_events_record_every_call(runtime, root):
    (root / "a.txt").write_text("a\n")
    run = await runtime.create_run()
    async with run.events.subscribe() as events:
        await run.call("read", {"path": "a.txt"})
        await run.call("read", {"path": "missing.txt"})
        kinds = [(await events.get())["type"] for _ in range(4)]
    assert kinds == ["call_started", "call_finished", "call_started", "call_finished"]
    first, second = run.transcript.to_json()
    assert (first["tool"], first["label"], first["ok"], first["origin"]) == ("read", "read a.txt", True, "api")
    assert second["ok"] is False and second["error_code"] == "not_found"
    assert first["duration_ms"] >= 0


async def test_a_subscriber_of_some_event_types_gets_only_those(runtime, root):
    (root / "a.txt").write_text("a\n")
    run = await runtime.create_run()
    async with run.events.subscribe(only=frozenset({"call_finished"})) as finished, \
            run.events.subscribe() as everything:
        await run.call("read", {"path": "a.txt"})
        run.events.publish("tools_changed")
        assert [(await finished.get())["type"]] == ["call_finished"] and finished.empty()
        assert [everything.get_nowait()["type"] for _ in range(3)] == [
            "call_started", "call_finished", "tools_changed"]


class _SlowArgs(ToolArgs):
    key: str = Field(description="Which interpreter")


class _Stateful(Tool):
    """A tool whose calls must not overlap within one scope (like eval or debug)."""

    name = "stateful"
    tier = Tier.READ
    description = "Records overlapping calls."
    Args = _SlowArgs
    requires = frozenset({Resource.WORKDIR})
    parallel_safe = False

    def __init__(self) -> None:
        self.active = 0
        self.most_active = 0

    def serial_scope(self, ctx, args):
        return (self.name, args.key)

    async def call(self, ctx, args):
        self.active += 1
        self.most_active = max(self.most_active, self.active)
        await asyncio.sleep(0.02)
        self.active -= 1
        return ToolResult.success("done")


async def test_non_parallel_tools_are_serialized_within_their_scope(runtime):
    tool = _Stateful()
    runtime.registry.add(tool)
    run = await runtime.create_run()
    assert "Not safe to run in parallel" in {s["name"]: s for s in run.schemas()}["stateful"]["description"]
    await asyncio.gather(*(run.call("stateful", {"key": "same"}) for _ in range(4)))
    assert tool.most_active == 1
    tool.most_active = 0
    await asyncio.gather(*(run.call("stateful", {"key": str(i)}) for i in range(4)))
    assert tool.most_active > 1


async def test_output_is_bounded_with_a_note(runtime, root):
    runtime.max_output_chars = 500
    runtime._wrappers = None
    (root / "big.txt").write_text("x" * 80 + "\n" * 1 + ("line\n" * 2000))
    run = await runtime.create_run()
    result = await run.call("read", {"path": "big.txt"})
    assert result.ok and len(result.text) < 700 and "characters omitted" in result.text
    assert result.data["truncated"] is True


async def test_runs_are_isolated_and_closing_releases(runtime):
    first = await runtime.create_run()
    second = await runtime.create_run()
    assert first.id != second.id
    await runtime.close_run(first.id)
    assert first.id not in runtime.runs and second.id in runtime.runs
    result = await first.call("read", {"path": "a"})
    assert result.code == "not_found" and "closed" in result.error["message"]


async def test_cwd_must_be_a_directory_inside_the_root(runtime, root):
    from jupyter_agent_tools import ToolError

    (root / "sub").mkdir()
    run = await runtime.create_run(cwd="sub")
    assert run.cwd == (root / "sub").resolve()
    with pytest.raises(ToolError) as outside:
        await runtime.create_run(cwd="..")
    assert outside.value.code.value == "path_outside_root"
    with pytest.raises(ToolError):
        await runtime.create_run(surface="god-mode")
