"""The debug tool with debugpy: a launch-to-breakpoint round and per-`continue` latency.

Baselines in the same run: the program with no debugger, the same round scripted through
`python -m pdb`, and `continue` sent straight to the DAP session (no tool layers). Prints
p50 latencies and the ratios. The first launch starts debugpy's adapter; later ones take the
spare adapter started after the previous launch, so rounds are a second apart (an agent's turn
between two calls), outside the timed part.
Run: python -m benchmarks.bench_dap [--rounds N] [--continues N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

from jupyter_agent_tools import Runtime
from jupyter_agent_tools.dap.supervisor import DebugSupervisor

from .stats import line, summarize

PROGRAM = """\
def add(a, b):
    c = a + b
    return c


total = 0
for i in range(100000):
    total = add(total, i)
print("total", total)
"""
LINE_IN_ADD = 2
AGENT_TURN_SECONDS = 1.0


async def _tool_round(runtime: Runtime, n: int) -> float:
    run = await runtime.create_run(conversation_id=f"round-{n}")
    start = time.perf_counter()
    await run.call("debug", {"action": "breakpoints", "file": "app.py", "lines": [LINE_IN_ADD]})
    launched = await run.call("debug", {"action": "launch", "program": "app.py"})
    assert launched.ok and launched.data["state"] == "stopped", launched.text
    value = await run.call("debug", {"action": "evaluate", "expression": "a + b"})
    assert value.ok, value.text
    await run.call("debug", {"action": "terminate"})
    elapsed = time.perf_counter() - start
    await runtime.close_run(run.id)
    return elapsed


def _pdb_round(root: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pdb", "app.py"], cwd=root, text=True,
                          input=f"b app.py:{LINE_IN_ADD}\nc\np a + b\nq\n",
                          capture_output=True, timeout=60)
    assert "Breakpoint 1" in done.stdout
    return time.perf_counter() - start


def _plain_run(root: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "app.py"], cwd=root, check=True, capture_output=True)
    return time.perf_counter() - start


async def _continues(runtime: Runtime, count: int) -> tuple[list[float], list[float]]:
    run = await runtime.create_run(conversation_id="continues")
    await run.call("debug", {"action": "breakpoints", "file": "app.py", "lines": [LINE_IN_ADD]})
    await run.call("debug", {"action": "launch", "program": "app.py"})
    through_tool, direct = [], []
    for _ in range(count):
        start = time.perf_counter()
        result = await run.call("debug", {"action": "continue"})
        through_tool.append(time.perf_counter() - start)
        assert result.ok and result.data["state"] == "stopped", result.text
    supervisor = cast(DebugSupervisor, runtime.provider("debug"))
    session = supervisor.conversations["continues"].session
    assert session is not None, "the debug conversation has no session"
    for _ in range(count):
        start = time.perf_counter()
        await session.resume("continue", None)
        direct.append(time.perf_counter() - start)
    await runtime.close_run(run.id)
    return through_tool, direct


async def _main(rounds: int, continues: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "pyproject.toml").write_text("[project]\nname = 'bench'\n")
        (root / "app.py").write_text(PROGRAM)
        runtime = Runtime(root_dir=str(root))
        try:
            tool = []
            for n in range(rounds):
                tool.append(await _tool_round(runtime, n))
                await asyncio.sleep(AGENT_TURN_SECONDS)
            pdb = [_pdb_round(root) for _ in range(rounds)]
            plain = [_plain_run(root) for _ in range(rounds)]
            through_tool, direct = await _continues(runtime, continues)
        finally:
            await runtime.shutdown()
    tool_s, pdb_s, plain_s = (statistics.median(x) for x in (tool[1:] or tool, pdb, plain))
    print(f"launch → breakpoint → evaluate → terminate, median of {rounds}:")
    rows = [("debug tool (debugpy), first launch", tool[0], ""),
            ("debug tool (debugpy), later (spare adapter)", tool_s, ""),
            ("python -m pdb scripted", pdb_s, f"later/pdb   {tool_s / pdb_s:5.1f}x"),
            ("plain run, no debugger", plain_s, f"later/plain {tool_s / plain_s:5.1f}x")]
    for label, seconds, ratio in rows:
        print(f"  {label:<44} {seconds * 1000:8.0f} ms   {ratio}".rstrip())
    print(f"continue to the next breakpoint hit, {continues} each:")
    tool_summary, direct_summary = summarize(through_tool), summarize(direct)
    print("  " + line("debug tool continue", tool_summary))
    print("  " + line("DAP session continue (no tool)", direct_summary))
    print(f"  tool overhead ratio (p50)  {tool_summary['p50_ms'] / direct_summary['p50_ms']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--continues", type=int, default=30)
    options = parser.parse_args()
    asyncio.run(_main(options.rounds, options.continues))


if __name__ == "__main__":
    main()
