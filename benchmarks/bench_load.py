"""Load: concurrent runs of mixed calls over HTTP against one real server, with a loop probe.

    python -m benchmarks.bench_load [--runs 20] [--calls 50] [--rate CALLS_PER_S] [--asyncio-debug]

Each run issues its calls one after another (as an agent does), all runs at once: read,
grep, ast_grep, edit and eval `1+1` in a fixed shuffled mix (30/20/20/20/10 %). Before the
timed phase each run makes one call of every tool, untimed (kernel start-up and the
parser's first use are not what this measures). With --rate the runs are paced to offer that
many calls/s in all (open loop while the server keeps up); latencies then count from when each
call was due, so a run that fell behind counts its wait. A server extension started only here
(benchmarks/loop_probe.py) measures the event loop's lag with a 10 ms timer.

Prints calls/s (all, and the non-eval calls), p50/p99 per tool, the longest event-loop
stall, whether every call appears exactly once in its run's transcript, the RSS each idle
run adds (server and its child processes), and `read` over the calls route against
jupyter_server's own `GET api/contents/<file>` of the same file, as a p50 ratio, and the rate
of that contents route under the same clients (the ceiling any route has on these cores).
With --asyncio-debug the server runs in asyncio debug mode and every callback that held
its loop over 50 ms is listed (debug mode slows everything: its figures are not the
benchmark's); with --stall-stacks a watchdog thread in the server samples the loop thread's
stack while it is stalled, naming the code that held it.

The project has no root marker unless --diagnostics: edits are then measured without
diagnostics-on-write (which waits for basedpyright and ruff to analyse each written file).

Targets (issue 14): p99 <= 100 ms for read/grep/edit, >= 500 calls/s for the non-eval
calls, longest stall <= 50 ms, the calls route <= 1.2x the contents API.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import aiohttp

from jupyter_agent_tools.testing.server import JupyterServerProcess

REPO = Path(__file__).resolve().parent.parent
MIX = {"read": 3, "grep": 2, "ast_grep": 2, "edit": 2, "eval": 1}
SOURCE_FILES = 20


def _project(root: Path, runs: int, *, diagnostics: bool) -> None:
    if diagnostics:  # a root marker: basedpyright and ruff serve the files, edits wait for them
        (root / "pyproject.toml").write_text('[project]\nname = "bench"\nversion = "0"\n')
    (root / "src").mkdir()
    for index in range(SOURCE_FILES):
        body = "".join(f"def handler_{index}_{n}(value):\n    print(value, {n})\n    return value\n\n"
                       for n in range(40))
        (root / "src" / f"module_{index}.py").write_text(body)
    (root / "edits").mkdir()
    for index in range(runs):
        (root / "edits" / f"run_{index}.py").write_text("counter = 0\n")


class RunPlan:
    """One run's calls; edits count up so each is valid and its args unique."""

    def __init__(self, index: int, calls: int, rng: random.Random) -> None:
        self.index = index
        tools = [tool for tool, weight in MIX.items() for _ in range(weight)]
        self.tools = [tools[n % len(tools)] for n in range(calls)]
        rng.shuffle(self.tools)
        self.edits = 0
        self.made: list[tuple[str, dict[str, Any]]] = []

    def args(self, tool: str, n: int) -> dict[str, Any]:
        if tool == "read":
            return {"path": f"src/module_{n % SOURCE_FILES}.py"}
        if tool == "grep":
            return {"pattern": rf"def handler_\d+_{n % 40}\b", "path": "src"}
        if tool == "ast_grep":
            return {"pattern": f"print($A, {n % 40})", "path": "src", "language": "python"}
        if tool == "edit":
            self.edits += 1
            return {"path": f"edits/run_{self.index}.py", "old_string": f"counter = {self.edits - 1}",
                    "new_string": f"counter = {self.edits}"}
        return {"code": "1+1", "description": "add one and one under load"}


async def _call(client: aiohttp.ClientSession, run_id: str, tool: str,
                args: dict[str, Any]) -> tuple[float, bool]:
    started = time.perf_counter()
    async with client.post(f"agent-tools/api/runs/{run_id}/calls",
                           json={"tool": tool, "args": args}) as response:
        ok = response.status == 200 and (await response.json()).get("ok", False)
    return time.perf_counter() - started, ok


async def _get(client: aiohttp.ClientSession, path: str) -> Any:
    async with client.get(path) as response:
        return await response.json()


async def _warm(client: aiohttp.ClientSession, run_id: str, plan: RunPlan) -> None:
    for n, tool in enumerate(MIX):
        args = plan.args(tool, n)
        plan.made.append((tool, args))
        _, ok = await _call(client, run_id, tool, args)
        if not ok:
            raise RuntimeError(f"warm-up {tool} failed")


async def _drive(client: aiohttp.ClientSession, run_id: str, plan: RunPlan,
                 pace: float | None, phase: float) -> list[tuple[str, float, bool]]:
    """The run's calls one after another; paced, call n is due `phase + n * pace` seconds in,
    and its latency counts from then: a run that fell behind counts the wait."""
    samples = []
    start = time.perf_counter() + phase
    for n, tool in enumerate(plan.tools):
        args = plan.args(tool, n)
        plan.made.append((tool, args))
        due = None
        if pace is not None:
            due = start + n * pace
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
        elapsed, ok = await _call(client, run_id, tool, args)
        if due is not None:
            elapsed = time.perf_counter() - due
        samples.append((tool, elapsed, ok))
    return samples


async def _exactly_once(client: aiohttp.ClientSession, run_id: str, plan: RunPlan) -> bool:
    transcript = await _get(client, f"agent-tools/api/runs/{run_id}/transcript")
    seen = Counter((e["tool"], json.dumps(e["args"], sort_keys=True)) for e in transcript)
    made = Counter((tool, json.dumps(args, sort_keys=True)) for tool, args in plan.made)
    return seen == made and all(e["ok"] is not None for e in transcript)


async def _read_against_contents(client: aiohttp.ClientSession, run_id: str,
                                 rounds: int) -> tuple[float, float]:
    path = "src/module_0.py"
    calls, contents = [], []
    for _ in range(rounds):
        elapsed, ok = await _call(client, run_id, "read", {"path": path})
        assert ok
        calls.append(elapsed)
        started = time.perf_counter()
        async with client.get(f"api/contents/{path}",
                              params={"type": "file", "content": 1}) as response:
            await response.json()
        contents.append(time.perf_counter() - started)
        assert response.status == 200
    return statistics.median(calls), statistics.median(contents)


async def _contents_throughput(client: aiohttp.ClientSession, clients: int, calls: int) -> float:
    """jupyter_server's own `GET api/contents/<file>` by as many clients as runs, as many
    calls each: the rate of the simplest authenticated request on the same cores."""
    async def one_client(index: int) -> None:
        for n in range(calls):
            async with client.get(f"api/contents/src/module_{(index + n) % SOURCE_FILES}.py",
                                  params={"type": "file", "content": 1}) as response:
                await response.read()
                assert response.status == 200

    started = time.perf_counter()
    await asyncio.gather(*[one_client(index) for index in range(clients)])
    return clients * calls / (time.perf_counter() - started)


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000


async def _bench(url: str, token: str, runs: int, calls: int,
                 rate: float | None) -> dict[str, Any]:
    # The load generator must cost little beside the server on the same cores: aiohttp's
    # client takes about 0.4 ms of CPU per call here, httpx's about 2 ms.
    connector = aiohttp.TCPConnector(limit=runs + 4)
    async with aiohttp.ClientSession(base_url=url, headers={"Authorization": f"token {token}"},
                                     timeout=aiohttp.ClientTimeout(total=300),
                                     connector=connector) as client:
        before = (await _get(client, "bench-loop-probe"))["rss_bytes"]
        run_ids = []
        for _ in range(runs):
            async with client.post("agent-tools/api/runs", json={}) as response:
                run_ids.append((await response.json())["id"])
        await asyncio.sleep(1.0)
        idle = (await _get(client, "bench-loop-probe"))["rss_bytes"]
        rng = random.Random(14)
        plans = [RunPlan(index, calls, rng) for index in range(runs)]
        warm_started = time.perf_counter()
        await asyncio.gather(*[_warm(client, r, p) for r, p in zip(run_ids, plans, strict=True)])
        warm_s = time.perf_counter() - warm_started
        cpu_before = await _get(client, "bench-loop-probe")
        async with client.post("bench-loop-probe"):  # resets the lag samples (starts the profile)
            pass
        started = time.perf_counter()
        client_cpu_before = time.process_time()
        pace = runs / rate if rate else None  # each run's interval; the runs are staggered
        per_run = await asyncio.gather(*[
            _drive(client, r, p, pace, index * pace / runs if pace else 0.0)
            for index, (r, p) in enumerate(zip(run_ids, plans, strict=True))])
        wall = time.perf_counter() - started
        client_cpu = time.process_time() - client_cpu_before
        probe = await _get(client, "bench-loop-probe")
        exact = [await _exactly_once(client, r, p) for r, p in zip(run_ids, plans, strict=True)]
        read_p50, contents_p50 = await _read_against_contents(client, run_ids[0], 200)
        contents_rate = await _contents_throughput(client, runs, calls)
        for run_id in run_ids:
            async with client.delete(f"agent-tools/api/runs/{run_id}"):
                pass
    samples = [sample for run in per_run for sample in run]
    cpu = {key: probe[key] - cpu_before[key] for key in ("cpu_server_s", "cpu_children_s")}
    cpu["cpu_client_s"] = client_cpu
    return {"samples": samples, "wall": wall, "warm_s": warm_s, "probe": probe, "exact": exact,
            "cpu": cpu,
            "rss_per_idle_run": (idle - before) / runs, "read_p50": read_p50,
            "contents_p50": contents_p50, "contents_rate": contents_rate}


def _slow_callbacks(log: str) -> list[str]:
    """asyncio's 'Executing <...> took N seconds' lines, longest first."""
    found = re.findall(r"Executing (.+?) took (\d+\.\d+) seconds", log)
    ordered = sorted(found, key=lambda item: -float(item[1]))
    return [f"{float(seconds) * 1000:7.0f} ms  {what[:220]}" for what, seconds in ordered]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--rate", type=float, metavar="CALLS_PER_S",
                        help="offer this many calls/s in all (each run paced, the runs "
                             "staggered) instead of each run calling as soon as its last call "
                             "answered; latencies count from when each call was due")
    parser.add_argument("--only", choices=list(MIX), action="append",
                        help="time only this tool (repeatable): its CPU per call, alone")
    parser.add_argument("--diagnostics", action="store_true",
                        help="give the project a root marker (pyproject.toml): every edit then "
                             "waits for the language servers' new diagnostics")
    parser.add_argument("--asyncio-debug", action="store_true",
                        help="asyncio debug mode: list callbacks holding the loop > 50 ms")
    parser.add_argument("--stall-stacks", action="store_true",
                        help="sample the loop thread's stack during stalls > 50 ms")
    parser.add_argument("--profile", metavar="FILE",
                        help="cProfile the server's loop thread during the timed phase into FILE")
    options = parser.parse_args()
    if options.only:
        for tool in list(MIX):
            if tool not in options.only:
                MIX[tool] = 0
    env = {"PYTHONPATH": str(REPO),
           "BENCH_ASYNCIO_DEBUG": "1" if options.asyncio_debug else "0",
           "BENCH_STALL_STACKS": "1" if options.stall_stacks else "0",
           "BENCH_PROFILE": str(Path(options.profile).resolve()) if options.profile else ""}
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        _project(root, options.runs, diagnostics=options.diagnostics)
        server = JupyterServerProcess(
            root, env=env, extra_args=["--ServerApp.jpserver_extensions=benchmarks.loop_probe=True"],
        ).start()
        try:
            figures = asyncio.run(_bench(server.url.rstrip("/") + "/", server.token,
                                         options.runs, options.calls, options.rate))
            log = server.log_tail(max_chars=50_000_000)
        finally:
            server.stop()
    samples = figures["samples"]
    by_tool: dict[str, list[float]] = defaultdict(list)
    failed = Counter()
    for tool, elapsed, ok in samples:
        by_tool[tool].append(elapsed)
        failed[tool] += not ok
    wall = figures["wall"]
    non_eval = sum(len(v) for tool, v in by_tool.items() if tool != "eval")
    load = (f"paced: {options.rate:g} calls/s offered" if options.rate
            else "each run calling as soon as its last call answered")
    print(f"{options.runs} concurrent runs x {options.calls} calls over HTTP, {load} "
          f"(warm-up of every tool in every run: {figures['warm_s']:.1f} s, untimed)")
    print(f"all calls: {len(samples) / wall:7.0f} calls/s   non-eval calls: "
          f"{non_eval / wall:7.0f} calls/s   (target >= 500)   wall {wall:.2f} s")
    for tool in MIX:
        values = by_tool[tool]
        if not values:
            continue
        target = "   (target p99 <= 100 ms)" if tool in {"read", "grep", "edit"} else ""
        print(f"  {tool:<9} n={len(values):4d}  p50 {_pct(values, 0.5):8.1f} ms   "
              f"p99 {_pct(values, 0.99):8.1f} ms   failed {failed[tool]}{target}")
    cpu = figures["cpu"]
    # On a shared machine wall-clock figures follow the load; CPU per call does much less.
    print(f"CPU per call: server process {cpu['cpu_server_s'] / len(samples) * 1000:.1f} ms, "
          f"its children (rg, parser workers, kernels) "
          f"{cpu['cpu_children_s'] / len(samples) * 1000:.1f} ms, this load generator "
          f"{cpu['cpu_client_s'] / len(samples) * 1000:.1f} ms; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    probe = figures["probe"]
    print(f"event loop: longest stall {probe['max_lag_ms']:.1f} ms, p99 lag "
          f"{probe['p99_lag_ms']:.1f} ms over {probe['samples']} ticks of 10 ms (target <= 50 ms)")
    print(f"garbage collector pauses by generation: longest "
          f"{' / '.join(f'{t:.1f}' for t in probe['gc_longest_ms'])} ms, total "
          f"{' / '.join(f'{t:.0f}' for t in probe['gc_total_ms'])} ms")
    exact = figures["exact"]
    print(f"transcripts: {sum(exact)}/{len(exact)} runs list every call exactly once")
    print(f"RSS per idle run: {figures['rss_per_idle_run'] / 1024:.0f} KiB")
    ratio = figures["read_p50"] / figures["contents_p50"]
    print(f"read via calls route p50 {figures['read_p50'] * 1000:.2f} ms vs GET api/contents p50 "
          f"{figures['contents_p50'] * 1000:.2f} ms: {ratio:.2f}x (target <= 1.2x)")
    print(f"the same clients calling GET api/contents (jupyter_server alone, no tool): "
          f"{figures['contents_rate']:.0f} calls/s")
    if options.stall_stacks:
        print("loop-thread stacks sampled every 10 ms during stalls > 50 ms (innermost first):")
        for stack, count in probe["stall_stacks"]:
            print(f"  {count * 10:5d} ms  {stack}")
    if options.asyncio_debug:
        slow = _slow_callbacks(log)
        print(f"callbacks holding the loop > 50 ms (asyncio debug): {len(slow)}")
        for entry in slow[:40]:
            print("  " + entry)


if __name__ == "__main__":
    main()
