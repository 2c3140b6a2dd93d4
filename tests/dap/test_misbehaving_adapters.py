"""Adapters that misbehave, as real processes: clear errors, nothing left running."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path

import psutil
import pytest
from debug_helpers import debug, ok, wait_ended
from traitlets.config import Config

from jupyter_agent_tools import Runtime

FAKE = str(Path(__file__).with_name("fake_adapter.py"))


def fake_spec(mode: str, transport: str = "stdio") -> dict:
    command = ["{binary}", FAKE, mode]
    if transport == "unix":
        command.append("--listen=unix:{socket}")
    return {"adapter_id": "fake", "binaries": [sys.executable], "command": command,
            "markers": ["fake.toml"], "program_suffixes": [".fake"], "transport": transport}


@pytest.fixture
def fake_runtime(root, jp_asyncio_loop):
    (root / "fake.toml").write_text("")
    (root / "prog.fake").write_text("")
    config = Config({"DebugSupervisor": {
        "start_timeout_seconds": 3.0,
        "adapters": {"fake": fake_spec("ok"), "fake-unix": fake_spec("ok", "unix"),
                     "silent": fake_spec("silent"), "garbage": fake_spec("garbage"),
                     "trailing": fake_spec("trailing")},
    }})
    runtime = Runtime(root_dir=str(root), config=config)
    yield runtime
    jp_asyncio_loop.run_until_complete(runtime.shutdown())


@pytest.mark.parametrize("adapter", ["fake", "fake-unix"])
async def test_a_program_that_just_runs(fake_runtime, adapter):
    run = await fake_runtime.create_run(conversation_id=adapter)
    launched = await ok(run, "launch", program="prog.fake", adapter=adapter)
    assert launched.data["state"] == "exited" and launched.data["exit_code"] == 0
    output = (await ok(run, "output")).text
    assert output == "hello\n"  # CRLF normalized, telemetry dropped
    session = fake_runtime.provider("debug").conversations[adapter].session
    await ok(run, "terminate")
    assert await wait_ended(session.processes.pid) == []


async def test_output_that_trails_a_stop_is_in_the_stop_report(fake_runtime):
    fake_runtime.provider("debug").output_quiet_seconds = 1.0  # the adapter trails by 0.3 s
    run = await fake_runtime.create_run(conversation_id="trailing")
    launched = await ok(run, "launch", program="prog.fake", adapter="trailing")
    assert launched.data["state"] == "stopped"
    assert launched.data["new_output"] == "printed before the stop\n"
    await ok(run, "terminate")


async def test_without_waiting_for_quiet_trailing_output_shows_only_later(fake_runtime):
    fake_runtime.provider("debug").output_quiet_seconds = 0
    run = await fake_runtime.create_run(conversation_id="trailing")
    launched = await ok(run, "launch", program="prog.fake", adapter="trailing")
    assert launched.data["state"] == "stopped" and "new_output" not in launched.data
    await asyncio.sleep(0.5)
    assert (await ok(run, "output")).text == "printed before the stop\n"
    await ok(run, "terminate")


@pytest.mark.parametrize(("adapter", "says"), [
    ("silent", "no `initialized` event"),
    ("garbage", "stopped answering"),
])
async def test_a_broken_adapter_fails_the_launch_clearly(fake_runtime, adapter, says):
    run = await fake_runtime.create_run(conversation_id=adapter)
    failed = await debug(run, "launch", program="prog.fake", adapter=adapter)
    assert failed.code == "failed" and says in failed.error["message"]
    assert "launch again" in failed.error["message"]
    assert (await debug(run, "status")).code == "no_session"
    assert await wait_ended(*fake_adapters()) == []


def fake_adapters() -> list[int]:
    """Our children that run fake_adapter.py."""
    found = []
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if FAKE in child.cmdline():
                found.append(child.pid)
    return found
