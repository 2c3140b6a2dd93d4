"""Background workers, against the real alternatives.

1. A worker's tool call over HTTP with its run token vs the same call with the server's
   token, on one server (the run-token authentication path vs jupyter_server's own).
2. vibe_spawn + vibe_wait of a command worker vs starting the same program directly.
3. vibe_spawn + vibe_wait of an embedded python worker vs awaiting the same agent directly.

Run: python -m benchmarks.bench_workers [--calls N] [--trials N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from traitlets.config import Config

from jupyter_agent_tools import Runtime

from .server import jupyter_server
from .stats import line, summarize

# The worker program: its brief is the number of `read` calls to time; it prints the samples.
WORKER_PROGRAM = """
import json, os, sys, time, httpx
calls = int(sys.stdin.read() or 0)
url = os.environ["JUPYTER_SERVER_URL"] + "agent-tools/api/"
run_id = os.environ["JUPYTER_AGENT_TOOLS_RUN_ID"]
samples = []
with httpx.Client(base_url=url, headers={"Authorization": "token " + os.environ["JUPYTER_TOKEN"]}) as client:
    for i in range(calls + min(calls, 50)):
        start = time.perf_counter()
        result = client.post(f"runs/{run_id}/calls", json={"tool": "read", "args": {"path": "small.py"}})
        assert result.json()["ok"], result.text
        if i >= min(calls, 50):
            samples.append(time.perf_counter() - start)
print(json.dumps(samples))
"""


def _server_benchmarks(root: Path, calls: int, trials: int) -> dict[str, dict[str, float]]:
    program = root / "worker_program.py"
    program.write_text(WORKER_PROGRAM)
    config = root / "bench_config.json"
    argv = [sys.executable, str(program)]
    config.write_text(json.dumps({
        "WorkerPool": {"backend": "command", "max_wait_seconds": 600,
                       "max_result_chars": 1_000_000},  # the samples come back whole
        "CommandBackend": {"argv": {"fast": argv, "good": argv}},
    }))
    with jupyter_server(root, f"--config={config}") as (url, token), httpx.Client(
        base_url=url + "agent-tools/api/", headers={"Authorization": f"token {token}"}, timeout=600,
    ) as client:
        parent = client.post("runs", json={"vibe": True}).json()["id"]
        run_id = client.post("runs", json={}).json()["id"]

        def tool(name: str, args: dict, run: str = parent) -> dict:
            result = client.post(f"runs/{run}/calls", json={"tool": name, "args": args}).json()
            assert result["ok"], result["text"]
            return result

        def worker(brief: str) -> str:
            worker_id = tool("vibe_spawn", {"brief": brief, "label": "bench"})["data"]["worker_id"]
            waited = tool("vibe_wait", {"worker_id": worker_id, "timeout_seconds": 600})
            assert waited["data"]["status"] == "done", waited["text"]
            return waited["data"]["result"]

        with_run_token = json.loads(worker(str(calls)))
        for _ in range(50):
            tool("read", {"path": "small.py"}, run_id)
        with_server_token = []
        for _ in range(calls):
            start = time.perf_counter()
            tool("read", {"path": "small.py"}, run_id)
            with_server_token.append(time.perf_counter() - start)

        spawned, direct = [], []
        for _ in range(trials):
            start = time.perf_counter()
            worker("0")
            spawned.append(time.perf_counter() - start)
            start = time.perf_counter()
            subprocess.run(argv, input=b"0", capture_output=True, check=True, cwd=root,
                           env={"JUPYTER_SERVER_URL": url, "JUPYTER_TOKEN": "",
                                "JUPYTER_AGENT_TOOLS_RUN_ID": run_id})
            direct.append(time.perf_counter() - start)
    return {
        "worker call (run token)": summarize(with_run_token),
        "same call (server token)": summarize(with_server_token),
        "program started directly": summarize(direct),
        "vibe_spawn + vibe_wait (command)": summarize(spawned),
    }


async def _embedded(root: Path, trials: int) -> dict[str, dict[str, float]]:
    async def agent(_brief: str, run) -> str:
        return (await run.call("read", {"path": "small.py"})).text[:20]

    runtime = Runtime(root_dir=str(root), config=Config(
        {"WorkerPool": {"backend": "python", "max_workers_per_run": 5},
         "PythonBackend": {"agent": agent}}))
    parent = await runtime.create_run(vibe=True)
    plain = await runtime.create_run()
    pooled, direct = [], []
    for _ in range(trials):
        start = time.perf_counter()
        spawned = await parent.call("vibe_spawn", {"brief": "x", "label": "bench"})
        waited = await parent.call("vibe_wait", {"worker_id": spawned.data["worker_id"]})
        assert waited.data["status"] == "done", waited.text
        pooled.append(time.perf_counter() - start)
        start = time.perf_counter()
        await asyncio.ensure_future(agent("x", plain))
        direct.append(time.perf_counter() - start)
    await runtime.shutdown()
    return {"agent awaited directly": summarize(direct),
            "vibe_spawn + vibe_wait (python)": summarize(pooled)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--trials", type=int, default=20)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "small.py").write_text("".join(f"value_{i} = {i}\n" for i in range(40)))
        served = _server_benchmarks(root, options.calls, options.trials)
        embedded = asyncio.run(_embedded(root, options.trials * 10))
    names = list(served)
    print(f"1. a worker's `read` over HTTP, {options.calls} calls each")
    for name in names[:2]:
        print(line(name, served[name]))
    worker, server = served[names[0]], served[names[1]]
    print(f"   run token p50 / server token p50: {worker['p50_ms'] / server['p50_ms']:.2f}x")
    print(f"2. a command worker that exits at once, {options.trials} runs each")
    for name in names[2:]:
        print(line(name, served[name]))
    direct, spawned = served[names[2]], served[names[3]]
    print(f"   spawn+wait p50 - direct p50: {spawned['p50_ms'] - direct['p50_ms']:.1f} ms "
          f"({spawned['p50_ms'] / direct['p50_ms']:.2f}x)")
    print(f"3. an embedded python worker doing one `read`, {options.trials * 10} runs each")
    for name, summary in embedded.items():
        print(line(name, summary))
    direct, pooled = embedded.values()
    print(f"   spawn+wait p50 - direct p50: {pooled['p50_ms'] - direct['p50_ms']:.2f} ms "
          f"({pooled['p50_ms'] / direct['p50_ms']:.1f}x)")


if __name__ == "__main__":
    main()
