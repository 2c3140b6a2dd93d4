"""No call may stall the server: searches run off its event loop, and race writers safely.

Against a real `jupyter server` in a child process, over HTTP, while another client polls the
server's own `GET api/status`. Bounds are generous (machines are shared and noisy); the real
figures come from `python -m benchmarks.bench_load`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from jupyter_agent_tools.testing.server import JupyterServerProcess

# A poll slower than this means the loop was held: a stall, not noise.
POLL_BOUND_S = 1.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServerProcess]:
    root = tmp_path_factory.mktemp("event-loop-root")
    # A backtracking engine needs ~2^30 steps per line for `(a+)+$` here; a linear one, none.
    (root / "redos").mkdir()
    for index in range(20):
        (root / "redos" / f"lines_{index}.txt").write_text(("a" * 30 + "!\n") * 2_000)
    (root / "shared").mkdir()
    # Long names of one letter: what made the old glob library backtrack (issue 25).
    deep = root.joinpath("globbed", *["a" * 20] * 4)
    deep.mkdir(parents=True)
    for index in range(50):
        (deep / f"{'a' * 60}{index}.txt").write_text("")
    with JupyterServerProcess(root) as process:
        yield process


def _client(server: JupyterServerProcess) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=server.url.rstrip("/") + "/",
                             headers={"Authorization": f"token {server.token}"}, timeout=120)


async def _new_run(client: httpx.AsyncClient) -> str:
    response = await client.post("agent-tools/api/runs", json={})
    assert response.status_code == 201, response.text
    return response.json()["id"]


async def _call(client: httpx.AsyncClient, run_id: str, tool: str, args: dict) -> dict:
    response = await client.post(f"agent-tools/api/runs/{run_id}/calls",
                                 json={"tool": tool, "args": args})
    assert response.status_code == 200, response.text
    return response.json()


async def _poll_status(client: httpx.AsyncClient, stop: asyncio.Event) -> list[float]:
    """Latencies of `GET api/status` (jupyter_server's own route) until `stop` is set."""
    latencies: list[float] = []
    while not stop.is_set() or len(latencies) < 5:
        started = time.perf_counter()
        response = await client.get("api/status")
        latencies.append(time.perf_counter() - started)
        assert response.status_code == 200
        await asyncio.sleep(0.01)
    return latencies


async def test_a_catastrophic_regex_does_not_stall_the_server(server: JupyterServerProcess):
    async with _client(server) as searcher, _client(server) as poller:
        run_id = await _new_run(searcher)
        stop = asyncio.Event()
        polling = asyncio.create_task(_poll_status(poller, stop))
        await asyncio.sleep(0.1)  # the poll is running before the regex starts
        results = await asyncio.gather(*[
            _call(searcher, run_id, "grep", {"pattern": "(a+)+$", "path": "redos"})
            for _ in range(4)
        ])
        await asyncio.sleep(0.1)
        stop.set()
        latencies = await polling
    assert all(result["ok"] and result["data"]["total"] == 0 for result in results)
    assert len(latencies) >= 5
    assert max(latencies) < POLL_BOUND_S, f"api/status took {max(latencies):.2f} s"


async def test_pathological_globs_from_a_plan_run_do_not_stall_the_server(
        server: JupyterServerProcess):
    # Three calls of a read-only plan run once blocked every route for 32 s.
    patterns = ["***/" * 16, "*a" * 32, "**/*" * 16]
    async with _client(server) as searcher, _client(server) as poller:
        response = await searcher.post("agent-tools/api/runs", json={"surface": "plan"})
        run_id = response.json()["id"]
        stop = asyncio.Event()
        polling = asyncio.create_task(_poll_status(poller, stop))
        await asyncio.sleep(0.1)
        results = await asyncio.gather(*[
            _call(searcher, run_id, "glob", {"pattern": pattern, "path": "globbed"})
            for pattern in patterns])
        await asyncio.sleep(0.1)
        stop.set()
        latencies = await polling
    assert all(result["ok"] for result in results), results
    assert max(latencies) < POLL_BOUND_S, f"api/status took {max(latencies):.2f} s"


async def test_bodies_of_millions_of_values_do_not_stall_the_server(server: JupyterServerProcess):
    # Parsing holds the interpreter lock on any thread: 4 MB of `[]` took about a second.
    body = b'{"tool": "read", "args": {"x": [' + b",".join([b"[]"] * 1_300_000) + b"]}}"
    async with _client(server) as sender, _client(server) as poller:
        run_id = await _new_run(sender)
        stop = asyncio.Event()
        polling = asyncio.create_task(_poll_status(poller, stop))
        await asyncio.sleep(0.1)
        answers = await asyncio.gather(*[
            sender.post(f"agent-tools/api/runs/{run_id}/calls", content=body) for _ in range(4)])
        await asyncio.sleep(0.1)
        stop.set()
        latencies = await polling
    assert all(answer.status_code == 413 for answer in answers)
    assert "max_request_values" in answers[0].json()["error"]["message"]
    assert max(latencies) < POLL_BOUND_S, f"api/status took {max(latencies):.2f} s"


async def test_searches_while_other_runs_write_have_no_unexpected_failure(
        server: JupyterServerProcess):
    rounds = 25

    async def writer(client: httpx.AsyncClient, run_id: str, index: int) -> list[dict]:
        # Each write goes through the atomic writer: a temp file appears, then is renamed.
        return [await _call(client, run_id, "write",
                            {"path": f"shared/w{index}_{n % 3}.py",
                             "content": f"value_{n} = {n}  # needle\n" * 50})
                for n in range(rounds)]

    async def searcher(client: httpx.AsyncClient, run_id: str) -> list[dict]:
        results = []
        searches = [("glob", {"pattern": "*.py", "path": "shared"}),
                    ("grep", {"pattern": r"value_\d+", "path": "shared"}),
                    ("ast_grep", {"pattern": "$V = $N", "path": "shared", "language": "python"})]
        for n in range(rounds):
            tool, args = searches[n % len(searches)]
            results.append(await _call(client, run_id, tool, args))
        return results

    async with _client(server) as client:
        writers = [await _new_run(client) for _ in range(3)]
        searchers = [await _new_run(client) for _ in range(3)]
        answers = await asyncio.gather(
            *[writer(client, run_id, i) for i, run_id in enumerate(writers)],
            *[searcher(client, run_id) for run_id in searchers],
        )
    failures = [result for batch in answers for result in batch if not result["ok"]]
    assert failures == []
    searches = [result for batch in answers[len(writers):] for result in batch]
    assert len(searches) == 3 * rounds
    # No temp file of the writer is ever reported as a match or a listed file.
    for result in searches:
        named = [m["file"] for m in result["data"].get("matches", [])]
        named += result["data"].get("files", [])
        assert all(Path(name).name.startswith("w") and name.endswith(".py") for name in named)
