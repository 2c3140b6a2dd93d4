"""Cost of the regression machinery against the plain alternatives, in the same run.

1. A regression notebook (notebooks/regression/files.ipynb) executed cell by cell and judged
   per cell (`testing.execution.execute_notebook`, what the pytest plugin does) vs the same
   notebook executed whole by nbclient (`NotebookClient.execute`), against one live server.
2. Transcript replay (`testing.replay`) vs recording the same calls: the replay's overhead
   over the calls themselves (id learning, normalising, comparing).

Run: python -m benchmarks.bench_regression [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from jupyter_agent_tools import Runtime
from jupyter_agent_tools.demo.tour import SAMPLE_PROJECT
from jupyter_agent_tools.testing.agents import SERVER_ARGS
from jupyter_agent_tools.testing.execution import execute_notebook, read_notebook
from jupyter_agent_tools.testing.replay import replay_embedded
from jupyter_agent_tools.testing.server import JupyterServerProcess

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "regression" / "files.ipynb"
CALLS = [
    ("glob", {"pattern": "**/*.py"}),
    ("read", {"path": "inventory/stock.py"}),
    ("grep", {"pattern": r"def \w+"}),
    ("read", {"path": "missing.py"}),
    ("write", {"path": "notes.txt", "content": "one\ntwo\n"}),
    ("edit", {"path": "notes.txt", "old_string": "two", "new_string": "three"}),
    ("bash", {"command": "python main.py"}),
]


def _nbclient_whole(env: dict[str, str]) -> None:
    from nbclient import NotebookClient

    notebook = read_notebook(NOTEBOOK)
    NotebookClient(notebook, timeout=300, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute(env=env)


def _timed(fn, rounds: int) -> list[float]:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def notebooks(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as root, \
            JupyterServerProcess(root, extra_args=SERVER_ARGS) as server:
        env = {**os.environ, **server.kernel_env()}

        def ours() -> None:
            outcome = execute_notebook(NOTEBOOK, env=env)
            assert not outcome.failed, [cell.summary for cell in outcome.failed]

        per_cell = _timed(ours, rounds)
        whole = _timed(lambda: _nbclient_whole(env), rounds)
    ours_s, plain_s = statistics.median(per_cell), statistics.median(whole)
    print(f"{'notebook, per-cell judging (ours)':<40} median {ours_s:7.2f} s")
    print(f"{'notebook, nbclient execute (plain)':<40} median {plain_s:7.2f} s")
    print(f"{'ratio ours / plain':<40} {ours_s / plain_s:7.2f}x")


async def _record(root: Path) -> tuple[list[dict], float]:
    runtime = Runtime(root_dir=str(root))
    try:
        run = await runtime.create_run(cwd="p")
        start = time.perf_counter()
        for tool, args in CALLS:
            await run.call(tool, args)
        return run.transcript.to_json(), time.perf_counter() - start
    finally:
        await runtime.shutdown()


def replays(rounds: int) -> None:
    recorded, replayed = [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as scratch:
            a, b = Path(scratch, "a"), Path(scratch, "b")
            for root in (a, b):
                shutil.copytree(SAMPLE_PROJECT, root / "p")
            entries, seconds = asyncio.run(_record(a))
            recorded.append(seconds)
            start = time.perf_counter()
            report, _ = asyncio.run(replay_embedded(entries, str(b), "p"))
            replayed.append(time.perf_counter() - start)
            assert report.differences == [], [d.describe() for d in report.differences]
    rec, rep = statistics.median(recorded), statistics.median(replayed)
    print(f"{'record 7 calls (embedded run)':<40} median {rec * 1000:7.1f} ms")
    print(f"{'replay them (new runtime + compare)':<40} median {rep * 1000:7.1f} ms")
    print(f"{'ratio replay / record':<40} {rep / rec:7.2f}x  (replay includes starting a runtime)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    notebooks(options.rounds)
    replays(options.rounds)


if __name__ == "__main__":
    main()
