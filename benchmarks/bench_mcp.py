"""`read` of a 40-line file through MCP (tools/call) against the plain HTTP call route, same run.

Both go to a real Jupyter server: the HTTP route as `POST runs/{id}/calls`, MCP as `tools/call`
in a session opened on `runs/{id}/mcp` with the official SDK client (streamable HTTP, each
answer a server-sent event). Prints calls/s, p50/p99 and the ratio (target: MCP ≤ 1.3× HTTP).
Part of the gap is the SDK client's: it closes each SSE answer as soon as the result event
arrives, before the end of the chunked body is parsed, so its next call opens a new connection.
Run: python -m benchmarks.bench_mcp [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from .server import jupyter_server
from .stats import line, summarize

READ = {"path": "small.py"}


async def _compare(url: str, token: str, calls: int) -> tuple[list[float], list[float]]:
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
    return samples["http"], samples["mcp"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    calls = parser.parse_args().calls
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "small.py").write_text("".join(f"value_{i} = {i}\n" for i in range(40)))
        with jupyter_server(root) as (url, token):
            http, mcp = asyncio.run(_compare(url, token, calls))
    rows = {"POST runs/{id}/calls (HTTP)": summarize(http),
            "tools/call over MCP (same run)": summarize(mcp)}
    print(f"`read` of a 40-line file, {calls} calls each, interleaved")
    for name, summary in rows.items():
        print(line(name, summary))
    over_http, over_mcp = rows.values()
    print(f"MCP / HTTP p50: {over_mcp['p50_ms'] / over_http['p50_ms']:.2f}x (target <= 1.3x)   "
          f"calls/s: {over_mcp['calls_per_s'] / over_http['calls_per_s']:.2f}x")


if __name__ == "__main__":
    main()
