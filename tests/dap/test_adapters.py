"""Adapters as data: the marker-and-binary rule, config overrides, and how the tool reports them."""

from __future__ import annotations

import logging

from debug_helpers import debug, ok
from traitlets.config import Config

from jupyter_agent_tools import Runtime
from jupyter_agent_tools.dap.adapters import BUILTIN_ADAPTERS, merge_specs


def by_name(result) -> dict[str, dict]:
    return {row["name"]: row for row in result.data["adapters"]}


async def test_missing_marker_and_missing_binary_are_reported(root, jp_asyncio_loop):
    (root / "Cargo.toml").write_text("[package]\nname = 'demo'\n")
    config = Config({"DebugSupervisor": {"adapters": {
        "lldb": {"binaries": ["no-such-lldb-dap"]},
        "mine": {"adapter_id": "mine", "binaries": ["sh"], "command": ["{binary}"],
                 "markers": ["mine.toml"]},
    }}})
    runtime = Runtime(root_dir=str(root), config=config)
    try:
        run = await runtime.create_run(conversation_id="adapters")
        result = await ok(run, "adapters")
        rows = by_name(result)
        # a marker is there but not the binary
        assert not rows["lldb"]["usable"]
        assert "no binary (no-such-lldb-dap)" in rows["lldb"]["reason"]
        assert "marker" not in rows["lldb"]["reason"]
        # the binary is there but not the marker
        assert not rows["mine"]["usable"]
        assert "no root marker (mine.toml)" in rows["mine"]["reason"]
        assert "binary" not in rows["mine"]["reason"]
        assert "lldb: unavailable — no binary" in result.text

        # launching where the rule fails says why, before starting anything
        (root / "prog").write_text("")
        refused = await debug(run, "launch", program="prog")
        assert refused.code == "unavailable" and "no-such-lldb-dap" in refused.error["message"]

        (root / "mine.toml").write_text("")
        assert by_name(await ok(run, "adapters"))["mine"]["usable"]

        status = (await runtime.status())["resources"]["debug"]
        assert set(status["adapters"]) >= {"debugpy", "lldb", "delve", "dart", "mine"}
        assert not status["adapters"]["lldb"]["available"]
        assert "argv" not in str(status) and "command" not in str(status)
    finally:
        await runtime.shutdown()


async def test_debugpy_needs_a_python_project_marker(runtime, root):
    (root / "script.py").write_text("print('hi')\n")
    run = await runtime.create_run(conversation_id="no-marker")
    assert not by_name(await ok(run, "adapters"))["debugpy"]["usable"]
    refused = await debug(run, "launch", program="script.py")
    assert refused.code == "unavailable" and "pyproject.toml" in refused.error["message"]
    (root / "requirements.txt").write_text("")
    assert by_name(await ok(run, "adapters"))["debugpy"]["usable"]


async def test_registration_needs_a_conversation_and_an_exec_surface(runtime, root):
    without = await runtime.create_run()
    assert "debug" not in without.tool_names()
    assert (await without.call("debug", {"action": "adapters"})).code == "unknown_tool"
    plan = await runtime.create_run(conversation_id="plan", surface="plan")
    assert "debug" not in plan.tool_names()
    full = await runtime.create_run(conversation_id="full")
    assert "debug" in full.tool_names()


async def test_arguments_are_checked_per_action(runtime, root):
    (root / "pyproject.toml").write_text("")
    run = await runtime.create_run(conversation_id="args")
    assert (await debug(run, "launch")).code == "invalid_arguments"
    assert (await debug(run, "breakpoints", file="missing.py", lines=[1])).code == "not_found"
    assert (await debug(run, "breakpoints", file="../x.py", lines=[1])).code == "path_outside_root"
    assert (await debug(run, "launch", program="data.csv")).code == "not_found"
    (root / "data.csv").write_text("")
    unknown = await debug(run, "launch", program="data.csv")
    assert unknown.code == "invalid_arguments" and "adapter" in unknown.error["message"]
    assert (await debug(run, "launch", program="data.csv", adapter="gdb")).code == \
        "invalid_arguments"
    assert (await debug(run, "nonsense")).code == "invalid_arguments"


def test_config_overrides_fields_and_contains_invalid_ones():
    specs, errors = merge_specs({"debugpy": {"markers": ["setup.cfg"]},
                                 "lldb": {"no_such_field": 1},
                                 "gdb": {"adapter_id": "gdb", "binaries": "gdb",
                                         "command": ["{binary}"], "markers": []}},
                                logging.getLogger("test"))
    assert specs["debugpy"].markers == ["setup.cfg"]
    assert specs["debugpy"].command == BUILTIN_ADAPTERS["debugpy"].command  # kept
    # An invalid override leaves the built-in as it was; an invalid new spec is left out.
    assert "no_such_field" in errors["lldb"] and specs["lldb"].command == ["{binary}"]
    assert "gdb" not in specs and errors["gdb"].startswith("binaries: Input should be a valid list")
