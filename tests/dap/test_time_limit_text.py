"""What `debug status` says of the session's time limit."""

from __future__ import annotations

import re

from debug_helpers import LINE_IN_ADD, ok
from traitlets.config import Config

from jupyter_agent_tools import Runtime


async def test_a_limit_under_a_minute_is_told_in_seconds(root, python_project, jp_asyncio_loop):
    config = Config({"DebugSupervisor": {"session_ttl_seconds": 50.0}})
    runtime = Runtime(root_dir=str(root), config=config)
    try:
        run = await runtime.create_run(conversation_id="short")
        await ok(run, "breakpoints", file="app.py", lines=[LINE_IN_ADD])
        await ok(run, "launch", program="app.py")
        status = await ok(run, "status")
        said = re.search(r"The session ends in (\d+) (s|min)\b", status.text)
        assert said is not None and said.group(2) == "s", status.text
        assert 0 < int(said.group(1)) <= 50 and status.data["expires_in_seconds"] <= 50
    finally:
        await runtime.shutdown()
