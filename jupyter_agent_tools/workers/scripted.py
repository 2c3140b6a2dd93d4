"""A scripted agent for the python backend: no model, no API key (demos, regression suites).

Its brief is prose with tool calls in it: every line that is a JSON object
`{"tool": NAME, "args": {...}}` is called, in order, through the worker's child run; other
lines are read as instructions for a human and skipped. The result lists each call and the
first line of what it answered. Configure it with

    c.WorkerPool.backend = "python"
    c.PythonBackend.agent = "jupyter_agent_tools.workers.scripted:scripted_agent"
"""

from __future__ import annotations

import json

from .python_backend import WorkerRun


async def scripted_agent(brief: str, run: WorkerRun) -> str:
    """Run the tool calls written in `brief`; a short report of what each answered."""
    report = []
    for line in brief.splitlines():
        try:
            step = json.loads(line)
        except ValueError:
            continue
        if not isinstance(step, dict) or not isinstance(step.get("tool"), str):
            continue
        result = await run.call(step["tool"], step.get("args") or {})
        first_line = (result.text.strip().splitlines() or [""])[0]
        report.append(f"{step['tool']}: {'ok' if result.ok else result.code} — {first_line}")
    if not report:
        return ('No tool calls in the brief: put one per line as {"tool": ..., "args": {...}}.')
    return "\n".join(report)
