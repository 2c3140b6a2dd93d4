"""The first ast_grep in a language against the ast-grep CLI's cold run (issue 46).

    python -m benchmarks.bench_first_search [--repeat N] [--files N]

Generated Kotlin and C# projects (`--files` files of 25 methods each, a match per method).
"workers up": a runtime whose search workers already run (as on a server that searched in
another language before), its first call in the language: nothing of the language is
loaded or cached. "fresh": a new runtime's first call, the workers' start included. The CLI
(`ast-grep run -p P -l L --json=stream .`) has nothing to keep: each run is cold. The tools
run alternately; best of `--repeat`, and CPU seconds (the CLI's threads; our process and
workers). Ratio = ours / CLI (target, issue 46: <= 1.0x, workers up).
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import tempfile
import time
from pathlib import Path

from ast_grep_py import SgRoot

from jupyter_agent_tools import Resource, Runtime
from jupyter_agent_tools.structural.provider import ParserProvider

from .bench_structural import ast_grep_binary, ast_grep_version, children_cpu, process_cpu

METHODS = 25
CASES = {
    "kotlin": ("kt", "println($X)",
               "class Thing{i}(val a: Int) {{\n{body}}}\n",
               "    fun method{j}(x: Int): Int {{\n        val y = maxOf(x, {j})\n"
               "        if (y > {j}) {{\n            println(\"big $y\")\n        }}\n"
               "        return y + a\n    }}\n"),
    "csharp": ("cs", "Console.WriteLine($X)",
               "using System;\nnamespace Demo {{\n  public class Thing{i} {{\n{body}  }}\n}}\n",
               "    public int Method{j}(int x) {{\n      var y = Math.Max(x, {j});\n"
               "      if (y > {j}) {{\n        Console.WriteLine(\"big \" + y);\n      }}\n"
               "      return y;\n    }}\n"),
}


def make_project(folder: Path, language: str, files: int) -> None:
    ending, _, outer, method = CASES[language]
    folder.mkdir()
    for i in range(files):
        body = "".join(method.format(j=j) for j in range(METHODS))
        (folder / f"thing{i}.{ending}").write_text(outer.format(i=i, body=body))


def engine_floor(folder: Path, language: str) -> float:
    """CPU seconds to parse every file and find the matches with ast-grep's engine, in this
    process, nothing else: the least any search by that engine does (the CLI does the same
    work plus its walk and output)."""
    texts = [path.read_text() for path in sorted(folder.iterdir())]
    pattern = CASES[language][1]
    started = time.process_time()
    for text in texts:
        SgRoot(text, language).root().find_all(pattern=pattern)
    return time.process_time() - started


def run_cli(binary: str, folder: Path, language: str) -> tuple[float, float]:
    pattern = CASES[language][1]
    cpu, started = children_cpu(), time.perf_counter()
    done = subprocess.run([binary, "run", "-p", pattern, "-l", language, "--json=stream", "."],
                          cwd=folder, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"ast-grep failed: {done.stderr.decode()}")
    return elapsed, children_cpu() - cpu


async def run_ours(folder: Path, language: str, workers_up: bool, expected: int
                   ) -> tuple[float, float]:
    runtime = Runtime(root_dir=str(folder), resource_providers=[
        "jupyter_agent_tools.structural.provider:ParserProvider"])
    try:
        run = await runtime.create_run()
        provider = runtime.provider(Resource.PARSER)
        assert isinstance(provider, ParserProvider)
        workers = provider.pool.workers
        if workers_up:
            provider.pool.start()
            await asyncio.gather(*(asyncio.to_thread(worker.request, "ping", 60)
                                   for worker in workers))
            await asyncio.sleep(0.2)  # idle: what they load while waiting is loaded
        before = {worker.pid: process_cpu(worker.pid) for worker in workers if worker.pid}
        cpu, started = time.process_time(), time.perf_counter()
        result = await run.call("ast_grep", {"pattern": CASES[language][1], "path": ".",
                                             "language": language})
        elapsed = time.perf_counter() - started
        assert result.ok and result.data["total"] == expected, result.text[:300]
        cpu = time.process_time() - cpu + sum(
            process_cpu(worker.pid) - before.get(worker.pid, 0.0)
            for worker in workers if worker.pid)
        return elapsed, cpu
    finally:
        await runtime.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per tool; the best is kept")
    parser.add_argument("--files", type=int, default=200)
    options = parser.parse_args()
    binary = ast_grep_binary()
    version = ast_grep_version(binary)
    print(f"{version}; {options.files} files a language, {METHODS} matches each")
    print(f"{'language':<9} {'ast-grep':>9} {'up':>8} {'ratio':>6} {'fresh':>8} {'ratio':>6}  "
          f"{'CPU s: ast-grep / up / fresh':>29}")
    ratios = []
    with tempfile.TemporaryDirectory(prefix="bench-first-search-") as scratch:
        for language in CASES:
            folder = Path(scratch) / language
            make_project(folder, language, options.files)
            theirs, up, fresh = [], [], []
            for _ in range(options.repeat):  # alternating: a loaded machine slows all alike
                theirs.append(run_cli(binary, folder, language))
                up.append(asyncio.run(run_ours(folder, language, True,
                                               options.files * METHODS)))
                fresh.append(asyncio.run(run_ours(folder, language, False,
                                                  options.files * METHODS)))
            best = min(t for t, _ in theirs)
            best_up, best_fresh = min(t for t, _ in up), min(t for t, _ in fresh)
            ratios.append(best_up / best)
            cli_cpu = min(c for _, c in theirs)
            print(f"{language:<9} {best:>8.3f}s {best_up:>7.3f}s {best_up / best:>5.2f}x "
                  f"{best_fresh:>7.3f}s {best_fresh / best:>5.2f}x  "
                  f"{cli_cpu:>10.3f} / {min(c for _, c in up):.3f} / "
                  f"{min(c for _, c in fresh):.3f}", flush=True)
            floor = min(engine_floor(folder, language) for _ in range(3))
            print(f"    floor: parsing and matching alone, in one process: {floor:.3f} CPU s = "
                  f"{floor / cli_cpu:.2f}x the CLI's CPU (every file holds a match: the "
                  "prefilter rules none out)")
    print(f"workers up: max {max(ratios):.2f}x the CLI's cold run (target, issue 46: <= 1.0x)")


if __name__ == "__main__":
    main()
