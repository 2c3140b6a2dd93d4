"""What tools and providers see of a run and of the runtime: Protocols the real ones satisfy.

mypy checks `Run` against `RunView` and `Runtime` against `RunHost` where they are built; a
provider's runtime is its traitlets parent, so `ProviderHost` is checked here, on real objects.
"""

from __future__ import annotations

import inspect

import pytest
from typing_extensions import get_protocol_members, override

from jupyter_agent_tools.runtime import (
    CallContext,
    Resource,
    RuntimeView,
    RunView,
    Tier,
    Tool,
    ToolArgs,
    ToolResult,
)
from jupyter_agent_tools.runtime.resources import ProviderHost
from jupyter_agent_tools.runtime.run import RunHost


@pytest.mark.parametrize("protocol", [RuntimeView, RunHost, ProviderHost])
def test_the_runtime_has_every_member_its_protocols_name(runtime, protocol):
    assert {name for name in get_protocol_members(protocol) if not hasattr(runtime, name)} == set()


async def test_a_run_has_every_member_a_tool_may_use(runtime):
    run = await runtime.create_run()
    assert {name for name in get_protocol_members(RunView) if not hasattr(run, name)} == set()


def test_a_provider_can_create_runs_with_the_arguments_its_protocol_names(runtime):
    accepted = inspect.signature(runtime.create_run).parameters
    named = inspect.signature(ProviderHost.create_run).parameters.keys() - {"self"}
    assert named <= accepted.keys()


async def test_a_provider_sees_the_runtime_that_created_it(runtime):
    run = await runtime.create_run()
    questions = runtime.provider(Resource.QUESTIONS)
    assert questions.runtime is runtime
    assert questions.runtime.runs[run.id] is run


class WhereAmIArgs(ToolArgs):
    pass


class WhereAmI(Tool):
    """A plug-in tool reading its run and the runtime through the context."""

    name = "where_am_i"
    tier = Tier.READ
    description = "Say which run this is and where its files are."
    Args = WhereAmIArgs

    @override
    async def call(self, ctx: CallContext, args: WhereAmIArgs) -> ToolResult:
        return ToolResult.success(ctx.run.relpath(ctx.run.resolve("notes.txt")),
                                  {"run": ctx.run.id, "root": str(ctx.runtime.root_path),
                                   "max_read_bytes": ctx.runtime.max_read_bytes})


async def test_a_tool_reads_its_run_and_runtime_through_the_context(runtime, root):
    runtime.registry.add(WhereAmI())
    run = await runtime.create_run()
    result = await run.call("where_am_i")
    assert result.ok, result.text
    assert result.text == "notes.txt"
    assert result.data == {"run": run.id, "root": str(root.resolve()),
                           "max_read_bytes": runtime.max_read_bytes}
