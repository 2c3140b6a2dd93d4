"""A scripted worker agent for the python worker backend: the tour's and the suites' workers.

Configure it with `c.WorkerPool.backend = "python"` and
`c.PythonBackend.agent = "jupyter_agent_tools.testing.agents:scripted_agent"`.

Its brief is a script, one instruction per line; any other line is prose, and ignored:

    call TOOL {json args}    call a tool of the worker's own run
    say TEXT                 add TEXT to the result
    sleep SECONDS            wait (at most 600 s): a worker that is still running, to stop

With no instruction at all it counts the Python files of its working directory, so a brief in
plain words still gets a real answer. The result lists every call and its outcome.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

MAX_SLEEP_SECONDS = 600.0

#: Server options that make this the agent of python workers.
SERVER_ARGS = ["--WorkerPool.backend=python",
               "--PythonBackend.agent=jupyter_agent_tools.testing.agents:scripted_agent"]


async def scripted_agent(brief: str, run: Any) -> str:
    """Follow `brief` through `run` (a WorkerRun); return what happened, line by line."""
    instructions = [line.strip() for line in brief.splitlines()
                    if line.strip().startswith(("call ", "say ", "sleep "))]
    if not instructions:
        instructions = ['call glob {"pattern": "**/*.py"}']
    report: list[str] = []
    for line in instructions:
        verb, _, rest = line.partition(" ")
        if verb == "say":
            report.append(rest)
            run.report("\n".join(report))
            continue
        if verb == "sleep":
            await asyncio.sleep(min(float(rest or 0), MAX_SLEEP_SECONDS))
            continue
        tool, _, raw_args = rest.strip().partition(" ")
        try:
            args = json.loads(raw_args) if raw_args.strip() else {}
        except ValueError as exc:
            report.append(f"{tool}: could not parse the arguments ({exc})")
            continue
        result = await run.call(tool, args)
        outcome = "ok" if result.ok else f"error {result.code}"
        size = f" ({len(result.text.splitlines())} lines of output)" if result.ok else ""
        report.append(f"{tool}: {outcome}{size}")
        run.report("\n".join(report))
    return "\n".join(report)
