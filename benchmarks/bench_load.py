"""Load: concurrent runs of mixed calls over HTTP against one real server, with a loop probe.

    python -m benchmarks.bench_load [--runs 20] [--calls 50]
                                    [--rate CALLS_PER_S | --closed-loop] [--asyncio-debug]

Each run issues its calls one after another (as an agent does), all runs at once: read,
grep, ast_grep, edit and eval `1+1` in a fixed shuffled mix (30/20/20/20/10 %). Before the
timed phases each run makes one call of every tool, untimed (kernel start-up and the
parser's first use are not what this measures). Paced, the runs offer a fixed rate of calls/s
in all (each run at its share, the runs staggered: open loop while the server keeps up);
latencies then count from when each call was due, so a run that fell behind counts its wait.
A server extension started only here (benchmarks/loop_probe.py) measures the event loop's lag
with a 10 ms timer; its samples are reset at the start of every phase.

Target (issue 30, "HTTP under load"): at 40 calls/s offered over 20 runs of mixed calls
(warm kernels), p99 of read/grep/edit <= 100 ms and the event loop never stalls over 50 ms
(and no call fails); and the highest offered rate that holds it, as a ratio to the same
figure for jupyter_server's own `GET api/contents/<file>` on the same machine.

By default (no --rate, no --closed-loop), in one server start:
1. a timed phase at 40 calls/s (--runs x --calls calls, about 25 s), with the figures below
   and whether it holds issue 30's target;
2. a search for the highest offered rate that holds it: phases of about --phase-seconds at
   80, 160, 320... calls/s (doubling until one does not hold), then geometric bisection
   between the last that held and the first that did not, to within 10 %, at most
   --search-phases phases in all; the same runs, kernels and edit files throughout;
3. the same search for `GET api/contents/<file>` by as many clients as runs, from half that
   route's closed-loop rate; then both rates and their ratio. Each phase is one line:
   offered and achieved rate, p99s, longest stall, the load generator's CPU, the verdict.
With --rate one paced phase at that rate, no search; with --closed-loop each run calls as soon
as its last call answered (the throughput of issue 14's targets), no search.

Prints calls/s (all, and the non-eval calls), p50/p99 per tool, the longest event-loop
stall, whether every call (warm-up and every phase) appears exactly once in its run's
transcript, the RSS each idle run adds (server and its child processes), and `read` over the
calls route against jupyter_server's own `GET api/contents/<file>` of the same file, as a p50
ratio, and the rate of that contents route under the same clients, closed loop (the ceiling
any route has on these cores). With --asyncio-debug the server runs in asyncio debug mode and
every callback that held its loop over 50 ms is listed; with --profile the loop thread is
profiled during the first phase (either slows everything: neither runs the search, and their
figures are not the benchmark's); with --stall-stacks a watchdog thread in the server samples
the loop thread's stack while it is stalled, naming the code that held it.

The project has no root marker unless --diagnostics: edits are then measured without
diagnostics-on-write (which waits for basedpyright and ruff to analyse each written file).

Targets (issue 14), closed loop: p99 <= 100 ms for read/grep/edit, >= 500 calls/s for the
non-eval calls, longest stall <= 50 ms, the calls route <= 1.2x the contents API.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import re
import statistics
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from jupyter_agent_tools.testing.server import JupyterServerProcess

REPO = Path(__file__).resolve().parent.parent
MIX = {"read": 3, "grep": 2, "ast_grep": 2, "edit": 2, "eval": 1}
SOURCE_FILES = 20

# Issue 30's target.
TARGET_RATE = 40.0  # calls/s offered in all
TARGET_TOOLS = ("read", "grep", "edit")
TARGET_P99_MS = 100.0
TARGET_STALL_MS = 50.0

SEARCH_WITHIN = 1.1  # bisection stops once the first failing rate is within 10 % of the last holding
MIN_CALLS_PER_PHASE = 10  # per client: a whole mix even in a short phase at a low rate

Sample = tuple[str, float, bool]  # tool, latency in seconds, whether it succeeded
Caller = Callable[[int], Awaitable[tuple[str, bool]]]  # makes a client's call n: its tool, ok


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
    """One run's calls, phase after phase; edits count up so each is valid and its args unique,
    and `made` lists every call, for the transcript check."""

    def __init__(self, index: int, rng: random.Random) -> None:
        self.index = index
        self.rng = rng
        self.edits = 0
        self.made: list[tuple[str, dict[str, Any]]] = []

    def tools(self, calls: int) -> list[str]:
        """A phase's tools: the mix's proportions, shuffled."""
        weighted = [tool for tool, weight in MIX.items() for _ in range(weight)]
        tools = [weighted[n % len(weighted)] for n in range(calls)]
        self.rng.shuffle(tools)
        return tools

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


@dataclass
class Phase:
    """One timed phase: every client's calls at once, the loop probe's lag reset at its start."""

    offered: float | None  # calls/s in all; None: each client calls as soon as its last answered
    judged: tuple[str, ...]  # the tools whose p99 issue 30's target bounds
    samples: list[Sample]
    wall: float
    probe: dict[str, Any]  # the loop probe's answer at the end of the phase
    cpu: dict[str, float]  # CPU seconds of the server, of its children, of this load generator

    @property
    def achieved(self) -> float:
        return len(self.samples) / self.wall

    @property
    def stall_ms(self) -> float:
        return float(self.probe["max_lag_ms"])

    def latencies(self) -> dict[str, list[float]]:
        by_tool: dict[str, list[float]] = defaultdict(list)
        for tool, elapsed, _ in self.samples:
            by_tool[tool].append(elapsed)
        return by_tool

    def failed(self) -> Counter[str]:
        return Counter(tool for tool, _, ok in self.samples if not ok)

    @property
    def holds(self) -> bool:
        latencies = self.latencies()
        return (all(_pct(latencies[tool], 0.99) <= TARGET_P99_MS
                    for tool in self.judged if tool in latencies)
                and self.stall_ms <= TARGET_STALL_MS and not self.failed())

    def line(self) -> str:
        """The phase on one line: rates, the judged p99s, stall, generator CPU, verdict."""
        latencies = self.latencies()
        p99s = "  ".join(f"{tool} {_pct(latencies[tool], 0.99) if tool in latencies else math.nan:7.1f}"
                         for tool in self.judged)
        failed = sum(self.failed().values())
        return (f"  offered {self.offered or math.nan:6.0f}  achieved {self.achieved:6.0f} calls/s"
                f"  p99 {p99s} ms  stall {self.stall_ms:6.1f} ms"
                f"  generator CPU {self.cpu['cpu_client_s'] / self.wall:4.0%}"
                f"{f'  failed {failed}' if failed else ''}"
                f"  {'holds' if self.holds else 'does not hold'}")


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


def _run_caller(client: aiohttp.ClientSession, run_id: str, plan: RunPlan, calls: int) -> Caller:
    tools = plan.tools(calls)

    async def call(n: int) -> tuple[str, bool]:
        tool = tools[n]
        args = plan.args(tool, n)
        plan.made.append((tool, args))
        _, ok = await _call(client, run_id, tool, args)
        return tool, ok

    return call


def _contents_caller(client: aiohttp.ClientSession, index: int) -> Caller:
    """jupyter_server's own `GET api/contents/<file>`: the simplest authenticated request."""
    async def call(n: int) -> tuple[str, bool]:
        async with client.get(f"api/contents/src/module_{(index + n) % SOURCE_FILES}.py",
                              params={"type": "file", "content": 1}) as response:
            await response.read()
            return "contents", response.status == 200

    return call


async def _paced(call: Caller, calls: int, pace: float | None, offset: float) -> list[Sample]:
    """A client's calls one after another; paced, call n is due `offset + n * pace` seconds in,
    and its latency counts from then: a client that fell behind counts the wait."""
    samples = []
    start = time.perf_counter() + offset
    for n in range(calls):
        if pace is None:
            due = time.perf_counter()
        else:
            due = start + n * pace
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
        tool, ok = await call(n)
        samples.append((tool, time.perf_counter() - due, ok))
    return samples


async def _phase(client: aiohttp.ClientSession, callers: list[Caller], calls: int,
                 offered: float | None, judged: tuple[str, ...]) -> Phase:
    """Every caller makes `calls` calls, all at once: paced to offer `offered` calls/s in all
    (each at its share, staggered), or each as soon as its last call answered."""
    before = await _get(client, "bench-loop-probe")
    async with client.post("bench-loop-probe"):  # resets the lag samples (starts the profile)
        pass
    pace = len(callers) / offered if offered else None  # each caller's interval
    started = time.perf_counter()
    client_cpu_before = time.process_time()
    per_caller = await asyncio.gather(*[
        _paced(call, calls, pace, index * pace / len(callers) if pace else 0.0)
        for index, call in enumerate(callers)])
    wall = time.perf_counter() - started
    client_cpu = time.process_time() - client_cpu_before
    probe = await _get(client, "bench-loop-probe")
    cpu = {key: probe[key] - before[key] for key in ("cpu_server_s", "cpu_children_s")}
    cpu["cpu_client_s"] = client_cpu
    return Phase(offered, judged, [sample for samples in per_caller for sample in samples],
                 wall, probe, cpu)


@dataclass
class Search:
    holding: float | None  # the highest offered rate that held
    failing: float | None  # the lowest that did not
    phases: list[Phase]

    def outcome(self) -> str:
        if self.holding is None:
            lowest = min(phase.offered or math.inf for phase in self.phases)
            return f"none held (down to {lowest:.0f} calls/s)"
        if self.failing is None:
            return f"{self.holding:.0f} calls/s (every phase held: the search ran out of phases)"
        return f"{self.holding:.0f} calls/s ({self.failing:.0f} does not hold)"


async def _search(measure: Callable[[float], Awaitable[Phase]], first: Phase,
                  max_phases: int) -> Search:
    """The highest offered rate whose phase holds issue 30's target, printing each phase:
    doubling from a first phase that held (halving from one that did not) until the verdict
    turns, then geometric bisection to within SEARCH_WITHIN; at most `max_phases` phases,
    the first included."""
    assert first.offered is not None
    print(first.line(), flush=True)
    phases = [first]
    holding = first.offered if first.holds else None
    failing = None if first.holds else first.offered
    while len(phases) < max_phases:
        if failing is None:
            assert holding is not None
            rate = holding * 2
        elif holding is None:
            rate = failing / 2
        elif failing / holding > SEARCH_WITHIN:
            rate = math.sqrt(holding * failing)
        else:
            break
        phase = await measure(rate)
        print(phase.line(), flush=True)
        phases.append(phase)
        if phase.holds:
            holding = rate
        else:
            failing = rate
    return Search(holding, failing, phases)


def _calls_per_phase(rate: float, clients: int, phase_s: float) -> int:
    """Each client's calls for a search phase of about `phase_s` seconds at `rate`."""
    return max(MIN_CALLS_PER_PHASE, round(rate * phase_s / clients))


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
    """`GET api/contents/<file>` by as many clients as runs, as many calls each, closed loop:
    the rate of the simplest authenticated request on the same cores. The loop probe is left
    alone (its profile and lag samples stay the timed phase's)."""
    started = time.perf_counter()
    per_client = await asyncio.gather(*[_paced(_contents_caller(client, index), calls, None, 0.0)
                                        for index in range(clients)])
    wall = time.perf_counter() - started
    if not all(ok for samples in per_client for _, _, ok in samples):
        raise RuntimeError("GET api/contents failed")
    return clients * calls / wall


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000


def _print_phase(phase: Phase, runs: int, calls: int, warm_s: float, *, stall_stacks: bool) -> None:
    """The first timed phase's figures, in full."""
    latencies = phase.latencies()
    failed = phase.failed()
    wall = phase.wall
    count = len(phase.samples)
    non_eval = sum(len(values) for tool, values in latencies.items() if tool != "eval")
    load = (f"paced: {phase.offered:g} calls/s offered" if phase.offered
            else "each run calling as soon as its last call answered")
    print(f"{runs} concurrent runs x {calls} calls over HTTP, {load} "
          f"(warm-up of every tool in every run: {warm_s:.1f} s, untimed)")
    # Issue 14's throughput target is closed loop: paced, the rate is the one offered.
    throughput_target = "" if phase.offered else "   (target >= 500)"
    print(f"all calls: {phase.achieved:7.0f} calls/s   non-eval calls: "
          f"{non_eval / wall:7.0f} calls/s{throughput_target}   wall {wall:.2f} s")
    for tool in MIX:
        values = latencies.get(tool)
        if not values:
            continue
        target = f"   (target p99 <= {TARGET_P99_MS:.0f} ms)" if tool in TARGET_TOOLS else ""
        print(f"  {tool:<9} n={len(values):4d}  p50 {_pct(values, 0.5):8.1f} ms   "
              f"p99 {_pct(values, 0.99):8.1f} ms   failed {failed[tool]}{target}")
    cpu = phase.cpu
    # On a shared machine wall-clock figures follow the load; CPU per call does much less.
    print(f"CPU per call: server process {cpu['cpu_server_s'] / count * 1000:.1f} ms, "
          f"its children (rg, parser workers, kernels) "
          f"{cpu['cpu_children_s'] / count * 1000:.1f} ms, this load generator "
          f"{cpu['cpu_client_s'] / count * 1000:.1f} ms; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    probe = phase.probe
    print(f"event loop: longest stall {probe['max_lag_ms']:.1f} ms, p99 lag "
          f"{probe['p99_lag_ms']:.1f} ms over {probe['samples']} ticks of 10 ms "
          f"(target <= {TARGET_STALL_MS:.0f} ms)")
    print(f"garbage collector pauses by generation: longest "
          f"{' / '.join(f'{t:.1f}' for t in probe['gc_longest_ms'])} ms, total "
          f"{' / '.join(f'{t:.0f}' for t in probe['gc_total_ms'])} ms")
    if phase.offered:
        print(f"issue 30 target at {phase.offered:g} calls/s offered (p99 of read/grep/edit <= "
              f"{TARGET_P99_MS:.0f} ms, longest stall <= {TARGET_STALL_MS:.0f} ms, no failed "
              f"call): {'holds' if phase.holds else 'does not hold'}")
    if stall_stacks:
        print("loop-thread stacks sampled every 10 ms during stalls > 50 ms (innermost first):")
        for stack, ticks in probe["stall_stacks"]:
            print(f"  {ticks * 10:5d} ms  {stack}")


async def _bench(url: str, token: str, options: argparse.Namespace, rate: float | None,
                 search: bool) -> None:
    runs, calls = options.runs, options.calls
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
        # One plan per run for every phase: its edits keep matching the file, its `made` grows.
        plans = [RunPlan(index, rng) for index in range(runs)]
        warm_started = time.perf_counter()
        await asyncio.gather(*[_warm(client, r, p) for r, p in zip(run_ids, plans, strict=True)])
        warm_s = time.perf_counter() - warm_started

        async def measure_runs(offered: float | None, calls_per_run: int) -> Phase:
            callers = [_run_caller(client, r, p, calls_per_run)
                       for r, p in zip(run_ids, plans, strict=True)]
            return await _phase(client, callers, calls_per_run, offered, TARGET_TOOLS)

        async def measure_contents(offered: float) -> Phase:
            calls_per_client = _calls_per_phase(offered, runs, options.phase_seconds)
            callers = [_contents_caller(client, index) for index in range(runs)]
            return await _phase(client, callers, calls_per_client, offered, ("contents",))

        first = await measure_runs(rate, calls)
        _print_phase(first, runs, calls, warm_s, stall_stacks=options.stall_stacks)
        runs_search = None
        if search:
            print(f"search for the highest offered rate that holds it, mixed calls "
                  f"(phases of about {options.phase_seconds:g} s, at most {options.search_phases}):",
                  flush=True)
            runs_search = await _search(
                lambda offered: measure_runs(
                    offered, _calls_per_phase(offered, runs, options.phase_seconds)),
                first, options.search_phases)
        exact = [await _exactly_once(client, r, p) for r, p in zip(run_ids, plans, strict=True)]
        print(f"transcripts: {sum(exact)}/{len(exact)} runs list every call (warm-up and every "
              f"phase) exactly once")
        print(f"RSS per idle run: {(idle - before) / runs / 1024:.0f} KiB")
        read_p50, contents_p50 = await _read_against_contents(client, run_ids[0], 200)
        print(f"read via calls route p50 {read_p50 * 1000:.2f} ms vs GET api/contents p50 "
              f"{contents_p50 * 1000:.2f} ms: {read_p50 / contents_p50:.2f}x (target <= 1.2x)")
        contents_rate = await _contents_throughput(client, runs, calls)
        print(f"the same clients calling GET api/contents (jupyter_server alone, no tool), "
              f"closed loop: {contents_rate:.0f} calls/s")
        if runs_search is not None:
            # Start near where the search should end (a held rate is below the closed-loop
            # one), to spend few phases on it.
            print(f"the same search for GET api/contents/<file> by {runs} clients (p99 <= "
                  f"{TARGET_P99_MS:.0f} ms, longest stall <= {TARGET_STALL_MS:.0f} ms, no failed "
                  f"call), from half its closed-loop rate:", flush=True)
            start = await measure_contents(max(TARGET_RATE, round(contents_rate / 2, -1)))
            contents_search = await _search(measure_contents, start, options.search_phases)
            print(f"issue 30: highest offered rate holding the target, mixed calls over the calls "
                  f"route: {runs_search.outcome()}")
            print(f"reference: highest offered rate at which jupyter_server's GET api/contents/"
                  f"<file> holds p99 <= {TARGET_P99_MS:.0f} ms and stall <= "
                  f"{TARGET_STALL_MS:.0f} ms, same {runs} clients (an offered rate, not the "
                  f"closed-loop throughput): {contents_search.outcome()}")
            limit = next((phase for phase in contents_search.phases
                          if phase.offered == contents_search.failing), None)
            if limit is not None and limit.cpu["cpu_client_s"] / limit.wall >= 0.9:
                print(f"  (this load generator used {limit.cpu['cpu_client_s'] / limit.wall:.0%} "
                      f"of a core at {contents_search.failing:.0f} calls/s: the route's figure "
                      f"may be the generator's limit, a floor for jupyter_server's)")
            if runs_search.holding and contents_search.holding:
                print(f"ratio, mixed calls to the contents route: "
                      f"{runs_search.holding / contents_search.holding:.2f}")
        for run_id in run_ids:
            async with client.delete(f"agent-tools/api/runs/{run_id}"):
                pass


def _slow_callbacks(log: str) -> list[str]:
    """asyncio's 'Executing <...> took N seconds' lines, longest first."""
    found = re.findall(r"Executing (.+?) took (\d+\.\d+) seconds", log)
    ordered = sorted(found, key=lambda item: -float(item[1]))
    return [f"{float(seconds) * 1000:7.0f} ms  {what[:220]}" for what, seconds in ordered]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--calls", type=int, default=50,
                        help="each run's calls in the first timed phase")
    load = parser.add_mutually_exclusive_group()
    load.add_argument("--rate", type=float, metavar="CALLS_PER_S",
                      help="one phase offering this many calls/s in all (each run paced, the runs "
                           "staggered), no search; latencies count from when each call was due")
    load.add_argument("--closed-loop", action="store_true",
                      help="one phase where each run calls as soon as its last call answered, "
                           "no search")
    parser.add_argument("--phase-seconds", type=float, default=6.0,
                        help="the length each search phase aims at (calls per run follow the rate)")
    parser.add_argument("--search-phases", type=int, default=8,
                        help="the most phases of each search, its first included (bounds the "
                             "default run to about 4 minutes)")
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
                        help="cProfile the server's loop thread during the first timed phase "
                             "into FILE")
    options = parser.parse_args()
    if options.only:
        for tool in list(MIX):
            if tool not in options.only:
                MIX[tool] = 0
    rate = None if options.closed_loop else options.rate or TARGET_RATE
    # Debug mode and the profiler slow the loop: a rate searched under them means nothing.
    search = not (options.rate or options.closed_loop or options.asyncio_debug or options.profile)
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
            asyncio.run(_bench(server.url.rstrip("/") + "/", server.token, options, rate, search))
            log = server.log_tail(max_chars=50_000_000)
        finally:
            server.stop()
    if options.asyncio_debug:
        slow = _slow_callbacks(log)
        print(f"callbacks holding the loop > 50 ms (asyncio debug): {len(slow)}")
        for entry in slow[:40]:
            print("  " + entry)


if __name__ == "__main__":
    main()
