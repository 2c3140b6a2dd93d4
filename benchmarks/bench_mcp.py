"""`read` of a 40-line file through MCP (tools/call) against the plain HTTP call route, same run.

Both go to a real Jupyter server: the HTTP route as `POST runs/{id}/calls`, MCP as `tools/call`
in a session opened on `runs/{id}/mcp` with the official SDK client (streamable HTTP, each
answer one JSON body, an event stream only for calls that ask for progress). Prints calls/s,
p50/p99 and the ratio (target: MCP <= 1.3x HTTP).
After the interleaved timing, each transport makes the same calls again, in alternating blocks
of 100, while the server's CPU time is read before and after each block
(benchmarks/loop_probe.py): CPU per call is the figure
that a shared machine's load moves least (the p50 ratio is a fixed MCP cost over an HTTP call
that is faster or slower with the load), and of it the median of each pair of blocks' ratio
(a block that a burst elsewhere, or a full garbage collection, slowed moves it least). The client's own CPU per call is printed beside it: the
SDK client (httpx, its session and validation) is part of every MCP call's time. Target: server
CPU per call MCP <= 1.2x HTTP. Last, where the server's loop spends its CPU: each transport's
calls again under cProfile (loop thread, its CPU time), summed per package, per call. With
--profile FILE the MCP part of that profile is kept in FILE.
Run: python -m benchmarks.bench_mcp [--calls N] [--profile FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pstats
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from .server import jupyter_server
from .stats import line, summarize

READ = {"path": "small.py"}
_CPU_BLOCK = 100  # calls per block of the CPU comparison


# Where the loop's CPU goes, by where the code lives (the first match of a file's path).
_PACKAGES = ("jupyter_agent_tools/runtime", "jupyter_agent_tools/tools", "jupyter_agent_tools/files",
             "jupyter_agent_tools/mcp_endpoint", "jupyter_agent_tools/http", "jupyter_agent_tools",
             "mcp/", "mcp_types", "anyio", "starlette", "pydantic", "tornado", "jupyter_server",
             "asyncio", "json")


def _cpu_by_package(profile_file: str, calls: int) -> dict[str, float]:
    """Milliseconds of the loop thread's own CPU time per call, summed per package."""
    totals: dict[str, float] = {}
    stats = pstats.Stats(profile_file).stats  # type: ignore[attr-defined]
    for (filename, _, function), (_, _, own, _, _) in stats.items():
        where = next((name for name in _PACKAGES if name in filename), None)
        if where is None:
            where = "builtins" if filename == "~" else "other"
            if filename == "~" and ("json" in function or "loads" in function or "dumps" in function):
                where = "json"
        totals[where] = totals.get(where, 0.0) + own / calls * 1000
    return totals


def _loop_waits(profile_file: str, calls: int) -> tuple[float, float]:
    """Per call: the loop's iterations, and how often it waited for a socket to be readable
    (tornado registers the reader each time the data it wants has not come yet)."""
    iterations = waits = 0
    stats = pstats.Stats(profile_file).stats  # type: ignore[attr-defined]
    for (filename, _, function), (_, count, _, _, _) in stats.items():
        if function == "_run_once" and filename.endswith("base_events.py"):
            iterations += count
        elif function == "register" and filename.endswith("selectors.py"):
            waits += count
    return iterations / calls, waits / calls


async def _cpu_per_call(http: httpx2.AsyncClient, call: Callable[[], Awaitable[None]],
                        calls: int, profile: bool) -> tuple[float, float]:
    """Milliseconds of CPU time per call of the server process and of this client process,
    over `calls` calls in a row (with `profile`, under the loop probe's cProfile)."""
    probe = str(http.base_url).removesuffix("agent-tools/api/") + "bench-loop-probe"
    before = (await http.get(probe)).json()["cpu_server_s"]
    if profile:
        await http.post(probe)  # starts the profile; the GET below writes it
    client_before = time.process_time()
    for _ in range(calls):
        await call()
    client = time.process_time() - client_before
    after = (await http.get(probe)).json()["cpu_server_s"]
    return (after - before) / calls * 1000, client / calls * 1000


async def _compare(url: str, token: str, calls: int, profile: str) -> tuple[
        list[float], list[float], dict[str, list[tuple[float, float]]],
        dict[str, dict[str, float]], dict[str, tuple[float, float]]]:
    headers = {"Authorization": f"token {token}"}
    async with httpx2.AsyncClient(base_url=url + "agent-tools/api/", headers=headers,
                                  timeout=60) as http:
        run_id = (await http.post("runs", json={})).json()["id"]

        async def over_http() -> None:
            response = await http.post(f"runs/{run_id}/calls", json={"tool": "read", "args": READ})
            assert response.json()["ok"]

        async with streamable_http_client(f"{url}agent-tools/api/runs/{run_id}/mcp",
                                          http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()

            async def over_mcp() -> None:
                result = await session.call_tool("read", READ)
                assert not result.is_error

            for warm in (over_http, over_mcp):  # warm connections and caches
                for _ in range(50):
                    await warm()
            samples: dict[str, list[float]] = {"http": [], "mcp": []}
            for _ in range(calls):  # interleaved, so load on the machine hits both alike
                for name, call in (("http", over_http), ("mcp", over_mcp)):
                    start = time.perf_counter()
                    await call()
                    samples[name].append(time.perf_counter() - start)
            # In alternating blocks: the server's CPU per call drifts with the machine's load
            # over a run, and blocks of 1000 calls each measured one transport early, the
            # other late (the ratio moved between 1.45x and 2.4x from run to run).
            # Each pair of blocks gives a ratio too: their median is what a block slowed by
            # a neighbour's burst (or a full garbage collection) moves least.
            spent: dict[str, list[tuple[float, float]]] = {"http": [], "mcp": []}
            blocks = max(1, calls // _CPU_BLOCK)
            for block in range(blocks):
                order = [("http", over_http), ("mcp", over_mcp)]
                for name, call in order if block % 2 else reversed(order):
                    spent[name].append(await _cpu_per_call(http, call, _CPU_BLOCK,
                                                           profile=False))
            cpu = spent
            profiled = calls // 2
            await _cpu_per_call(http, over_http, profiled, profile=True)
            by_package = {"http": _cpu_by_package(profile, profiled)}
            waits = {"http": _loop_waits(profile, profiled)}
            await _cpu_per_call(http, over_mcp, profiled, profile=True)
            by_package["mcp"] = _cpu_by_package(profile, profiled)
            waits["mcp"] = _loop_waits(profile, profiled)
    return samples["http"], samples["mcp"], cpu, by_package, waits


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--profile", metavar="FILE",
                        help="cProfile the server's loop thread during the MCP-only block into FILE")
    options = parser.parse_args()
    calls = options.calls
    # The probe extension reads the server's CPU time (and, asked to, profiles it).
    profile = str(Path(options.profile or tempfile.mktemp(suffix=".prof")).resolve())
    os.environ["BENCH_PROFILE"] = profile
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(Path(__file__).resolve().parent.parent), os.environ.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "small.py").write_text("".join(f"value_{i} = {i}\n" for i in range(40)))
        with jupyter_server(root, "--ServerApp.jpserver_extensions=benchmarks.loop_probe=True") \
                as (url, token):
            http, mcp, cpu, by_package, waits = asyncio.run(_compare(url, token, calls, profile))
    if not options.profile:
        os.unlink(profile)
    rows = {"POST runs/{id}/calls (HTTP)": summarize(http),
            "tools/call over MCP (same run)": summarize(mcp)}
    print(f"`read` of a 40-line file, {calls} calls each, interleaved")
    for name, summary in rows.items():
        print(line(name, summary))
    over_http, over_mcp = rows.values()
    print(f"MCP / HTTP p50: {over_mcp['p50_ms'] / over_http['p50_ms']:.2f}x (target <= 1.3x)   "
          f"calls/s: {over_mcp['calls_per_s'] / over_http['calls_per_s']:.2f}x")
    for side, index in (("server", 0), ("client", 1)):
        http_ms = statistics.fmean(block[index] for block in cpu["http"])
        mcp_ms = statistics.fmean(block[index] for block in cpu["mcp"])
        paired = statistics.median(mcp[index] / http[index]
                                   for http, mcp in zip(cpu["http"], cpu["mcp"], strict=True))
        print(f"{side} CPU per call ({calls} calls each, in alternating blocks of {_CPU_BLOCK}): "
              f"HTTP {http_ms:.2f} ms, MCP {mcp_ms:.2f} ms ({mcp_ms / http_ms:.2f}x); "
              f"median of the blocks' ratios {paired:.2f}x")
    print("   target: server CPU MCP/HTTP <= 1.2x. The loop thread's CPU per call under cProfile, "
          "by package (ms; the profiler inflates all alike):")
    names = sorted(set(by_package["http"]) | set(by_package["mcp"]),
                   key=lambda name: -by_package["mcp"].get(name, 0.0))
    for name in names:
        http_ms, mcp_ms = by_package["http"].get(name, 0.0), by_package["mcp"].get(name, 0.0)
        print(f"   {name:<34} HTTP {http_ms:6.3f}   MCP {mcp_ms:6.3f}   MCP - HTTP {mcp_ms - http_ms:+7.3f}")
    total_http, total_mcp = sum(by_package["http"].values()), sum(by_package["mcp"].values())
    print(f"   {'total':<34} HTTP {total_http:6.3f}   MCP {total_mcp:6.3f}   "
          f"MCP - HTTP {total_mcp - total_http:+7.3f}")
    (http_turns, http_waits), (mcp_turns, mcp_waits) = waits["http"], waits["mcp"]
    # A wait is a wake-up of its own (a reader registered, polled, removed): it comes when
    # the client's next bytes (a request, or its body after its headers) are not there yet
    # when the server looks, so it counts the client's pace as much as the server's work.
    print(f"   per call, loop iterations: HTTP {http_turns:.2f}, MCP {mcp_turns:.2f}; waits for "
          f"the client's bytes: HTTP {http_waits:.2f}, MCP {mcp_waits:.2f} (a slower client, "
          "and the SDK's is, leaves the server waiting more often)")


if __name__ == "__main__":
    main()
