"""eval and its in-cell tool() bridge, against the real alternatives.

1. Bridge round trip: `tool('read', ...)` from a Python cell (and a JavaScript cell) vs a
   loopback HTTP POST of the same call to the server's calls route, on one server and run;
   and the throughput of the same calls from eight threads of one cell. A Python cell calls
   over the server's Unix socket for its kernel (kernels/bridge_socket.py), Deno over stdin;
   a call of an unknown tool splits the Python figure into lane + call layer and tool work.
2. eval `1+1` vs a bare jupyter_client execute on a kernel of our own.
3. The first eval of a new run when the warm pool has a kernel ready.

Run: python -m benchmarks.bench_eval [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import cast

import httpx
from jupyter_client.manager import AsyncKernelManager
from traitlets.config import Config

from jupyter_agent_tools import Runtime
from jupyter_agent_tools.kernels.factory import KernelFactory

from .server import jupyter_server
from .stats import line, summarize

DESCRIPTION = "measure the cost of one call"
PY_LOOP = """
import json, time
samples = []
for _ in range({calls}):
    start = time.perf_counter()
    tool('read', {{'path': 'small.py'}})
    samples.append(time.perf_counter() - start)
print(json.dumps(samples))
"""
# Where a bridge call's time goes: a call of a tool the run does not have crosses the same
# lane and the call layer, and does no tool work (no thread hop, no disk).
PY_LOOP_NO_WORK = """
import json, time
samples = []
for _ in range({calls}):
    start = time.perf_counter()
    try:
        tool('no_such_tool', {{}})
    except ToolError:
        pass
    samples.append(time.perf_counter() - start)
print(json.dumps(samples))
"""
PY_THREADS = """
import time
from concurrent.futures import ThreadPoolExecutor
start = time.perf_counter()
with ThreadPoolExecutor(8) as pool:
    list(pool.map(lambda _: tool('read', {{'path': 'small.py'}}), range({calls})))
print({calls} / (time.perf_counter() - start))
"""
JS_LOOP = """
const samples = [];
for (let i = 0; i < {calls}; i++) {{
  const start = performance.now();
  tool('read', {{path: 'small.py'}});
  samples.push((performance.now() - start) / 1000);
}}
console.log(JSON.stringify(samples));
"""


def _bridge_vs_http(root: Path, calls: int) -> tuple[dict[str, dict[str, float]], float]:
    with jupyter_server(root) as (url, token), httpx.Client(
        base_url=url + "agent-tools/api/", headers={"Authorization": f"token {token}"},
        timeout=300,
    ) as client:
        run_id = client.post("runs", json={}).json()["id"]

        def call(tool: str, args: dict) -> dict:
            return client.post(f"runs/{run_id}/calls", json={"tool": tool, "args": args}).json()

        def in_cell(code: str, language: str):
            call("eval", {"code": code.format(calls=20), "description": DESCRIPTION,
                          "language": language})  # warm up
            result = call("eval", {"code": code.format(calls=calls), "description": DESCRIPTION,
                                   "language": language})
            assert result["ok"], result["text"]
            return json.loads(result["text"].splitlines()[-1])

        python = in_cell(PY_LOOP, "python")
        no_work = in_cell(PY_LOOP_NO_WORK, "python")
        threaded = in_cell(PY_THREADS, "python")
        javascript = in_cell(JS_LOOP, "javascript")
        for _ in range(50):
            call("read", {"path": "small.py"})
        http = []
        for _ in range(calls):
            start = time.perf_counter()
            assert call("read", {"path": "small.py"})["ok"]
            http.append(time.perf_counter() - start)
    return {"tool('read') from a Python cell": summarize(python),
            "tool('read') from a Deno cell": summarize(javascript),
            "POST runs/{id}/calls (loopback HTTP)": summarize(http),
            "Python: an unknown tool (no work)": summarize(no_work)}, threaded


async def _eval_vs_bare(root: Path, calls: int) -> dict[str, dict[str, float]]:
    """Both kernels up first, then one call of each in turn: what else the machine is doing
    (a kernel still shutting down from the part before) weighs on both alike."""
    runtime = Runtime(root_dir=str(root), config=Config({"KernelFactory": {"warm_pool": {}}}))
    run = await runtime.create_run()
    manager = AsyncKernelManager(kernel_name="python3")
    await manager.start_kernel(cwd=str(root))
    client = manager.client()
    client.start_channels()
    await client.wait_for_ready(timeout=60)

    async def ours() -> None:
        result = await run.call("eval", {"code": "1+1", "description": DESCRIPTION})
        assert result.text == "2"

    async def bare() -> None:
        msg_id = client.execute("1+1")
        while True:  # outputs until idle, as any client must
            msg = await client.get_iopub_msg(timeout=30)
            if (msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status"
                    and msg["content"]["execution_state"] == "idle"):
                break
        while (await client.get_shell_msg(timeout=30))["parent_header"].get("msg_id") != msg_id:
            pass

    samples: dict[str, list[float]] = {"bare": [], "ours": []}
    for i in range(calls + 10):
        for name, once in (("bare", bare), ("ours", ours)):
            start = time.perf_counter()
            await once()
            if i >= 10:
                samples[name].append(time.perf_counter() - start)
    client.stop_channels()
    await manager.shutdown_kernel(now=True)
    await runtime.shutdown()
    return {"bare jupyter_client execute 1+1": summarize(samples["bare"]),
            "Run.call('eval', 1+1)": summarize(samples["ours"])}


async def _first_eval_warm(root: Path, trials: int) -> dict[str, dict[str, float]]:
    runtime = Runtime(root_dir=str(root),
                      config=Config({"KernelFactory": {"warm_pool": {"python": 1}}}))
    factory = cast(KernelFactory, runtime.provider("kernels"))
    cold = []
    warm = []
    for _ in range(trials):
        await factory.prewarm()
        run = await runtime.create_run()
        start = time.perf_counter()
        assert (await run.call("eval", {"code": "1+1", "description": DESCRIPTION})).ok
        warm.append(time.perf_counter() - start)
        await runtime.close_run(run.id)
    await runtime.shutdown()
    for _ in range(max(2, trials // 3)):
        runtime = Runtime(root_dir=str(root), config=Config({"KernelFactory": {"warm_pool": {}}}))
        run = await runtime.create_run()
        start = time.perf_counter()
        assert (await run.call("eval", {"code": "1+1", "description": DESCRIPTION})).ok
        cold.append(time.perf_counter() - start)
        await runtime.shutdown()
    return {"first eval, no pool (kernel start)": summarize(cold),
            "first eval, warm pool": summarize(warm)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=10)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "small.py").write_text("".join(f"value_{i} = {i}\n" for i in range(40)))
        bridge, threaded = _bridge_vs_http(root, options.calls)
        execute = asyncio.run(_eval_vs_bare(root, min(options.calls, 300)))
        first = asyncio.run(_first_eval_warm(root, options.trials))
    print(f"1. the tool() bridge vs HTTP: `read` of a 40-line file, {options.calls} calls each")
    for name, summary in bridge.items():
        print(line(name, summary))
    py, js, http, no_work = bridge.values()
    print(f"   bridge p50 / HTTP p50: Python {py['p50_ms'] / http['p50_ms']:.2f}x (target <= 0.3), "
          f"Deno {js['p50_ms'] / http['p50_ms']:.2f}x (target <= 1)")
    print(f"   Python: p50 {py['p50_ms']:.3f} ms (target <= 0.5), {py['calls_per_s']:.0f} calls/s "
          f"(target >= 2000); of its p50, the lane and the call layer (an unknown tool) "
          f"{no_work['p50_ms']:.3f} ms, the read (its thread hop, disk, result) "
          f"{py['p50_ms'] - no_work['p50_ms']:.3f} ms")
    print(f"   the same calls from 8 threads of one Python cell: {threaded:.0f} calls/s")
    print("2. eval 1+1 vs a bare jupyter_client execute")
    for name, summary in execute.items():
        print(line(name, summary))
    bare, ours = execute.values()
    print(f"   eval p50 / bare p50: {ours['p50_ms'] / bare['p50_ms']:.2f}x (target <= 1.2)")
    print(f"3. the first eval of a new run, {options.trials} runs")
    for name, summary in first.items():
        print(line(name, summary))
    cold, warm = first.values()
    print(f"   warm p50 {warm['p50_ms'] / 1000:.3f} s (target <= 0.2 s), "
          f"{cold['p50_ms'] / warm['p50_ms']:.0f}x faster than a kernel start")


if __name__ == "__main__":
    main()
