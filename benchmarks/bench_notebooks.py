"""ast_grep over notebooks against the same code as `.py` files (issue 18: target <= 1.5x).

    python -m benchmarks.bench_notebooks [--notebooks N] [--repeat N]

Corpus: N modules of the running Python's standard library (those of 2-40 KB, in turn),
each written twice into a temporary root: as `py/<name>.py`, and as `nb/<name>.ipynb`, a
notebook (nbformat, Python kernelspec) whose code cells are the module split before each
top-level `def`/`class`, each cell with a small stream output as a run notebook has.
Each corpus is searched in a fresh Runtime: cold = the first search (worker start-up, empty
caches), warm = best of `--repeat` searches again, files unchanged. Ratio = notebooks / .py.
Matches are compared as (module, line in the module): a cell's line plus the cell's first
line in the module must give back the line of the same match in the `.py` file.

grep is timed the same way: first (cold: every notebook parsed, its cells written to a mirror
file) and best of `--repeat` after (warm: a stat per notebook, ripgrep over the mirrors, packed
into a few files). In notebooks a grep is three ripgreps: the search of the other files, the
listing of the files (the notebooks are picked from it), and the search of the notebooks'
mirrors (the last two beside the first). Target (issue 30): warm grep <= 1.5x the `.py` files.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import subprocess
import sysconfig
import tempfile
import time
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

from jupyter_agent_tools import Resource, Runtime
from jupyter_agent_tools.files.notebook_mirror import NotebookMirrors
from jupyter_agent_tools.files.ripgrep import find_rg

PATTERNS = ["print($A)", "isinstance($X, $$$T)", "$A == $A"]
GREP_PATTERN = r"print\("
LEAVE_NOTEBOOKS_OUT = ["--type-add", "ipynb:*.ipynb", "--type-not", "ipynb"]  # as grep does
_CELL_START = re.compile(r"^(?=(?:def|class|async def) )", re.MULTILINE)


def modules(count: int) -> list[Path]:
    """`count` modules of 2-40 KB, taken again in turn when the stdlib has fewer."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    found = sorted((path for path in stdlib.glob("*.py")
                    if 2_000 <= path.stat().st_size <= 40_000), key=lambda p: p.name)
    return [found[index % len(found)] for index in range(count)]


def write_corpus(root: Path, count: int) -> dict[str, list[int]]:
    """Both copies of each module; for each notebook, its cells' first lines (from 1)."""
    (root / "py").mkdir()
    (root / "nb").mkdir()
    first_lines: dict[str, list[int]] = {}
    for index, module in enumerate(modules(count)):
        name = f"m{index:04d}_{module.stem}"
        text = module.read_text(encoding="utf-8", errors="replace")
        (root / "py" / f"{name}.py").write_text(text)
        pieces = [piece for piece in _CELL_START.split(text) if piece]
        cells: list[nbformat.NotebookNode] = []
        starts: list[int] = []
        line = 1
        for piece in pieces:
            cells.append(new_code_cell(piece.rstrip("\n"), execution_count=len(cells) + 1,
                                       outputs=[new_output("stream", name="stdout",
                                                           text="ok\n")]))
            starts.append(line)
            line += piece.count("\n")
        notebook = new_notebook(cells=cells, metadata={"kernelspec": {
            "name": "python3", "display_name": "Python 3", "language": "python"}})
        nbformat.write(notebook, str(root / "nb" / f"{name}.ipynb"))
        first_lines[name] = starts
    return first_lines


async def search(root: Path, folder: str, repeat: int) -> dict:
    runtime = Runtime(root_dir=str(root), resource_providers=[
        "jupyter_agent_tools.structural.provider:ParserProvider"], max_read_bytes=100_000_000)
    figures: dict = {"cold": 0.0, "warm": float("inf"), "matches": {}}
    try:
        started = time.perf_counter()
        run = await runtime.create_run()
        session = run.resources[Resource.PARSER]
        for pattern in PATTERNS:
            began = time.perf_counter()
            outcome = await session.search(pattern, folder, "python", limit=10**7)
            figures["matches"][pattern] = outcome.answer["matches"]
            figures["files"] = outcome.files_searched
        figures["cold"] = time.perf_counter() - started
        for _ in range(repeat):
            began = time.perf_counter()
            for pattern in PATTERNS:
                await session.search(pattern, folder, "python", limit=10**7)
            figures["warm"] = min(figures["warm"], time.perf_counter() - began)
    finally:
        await runtime.shutdown()
    return figures


async def grep(root: Path, folder: str, repeat: int) -> tuple[float, float, int]:
    """grep's first and best later time over `folder`, and how many lines it found."""
    runtime = Runtime(root_dir=str(root), max_read_bytes=100_000_000)
    try:
        run = await runtime.create_run()
        times = []
        for _ in range(repeat + 1):
            began = time.perf_counter()
            result = await run.call("grep", {"pattern": GREP_PATTERN, "path": folder})
            times.append(time.perf_counter() - began)
        return times[0], min(times[1:]), result.data["total"]
    finally:
        await runtime.shutdown()


def grep_stages(root: Path, repeat: int) -> dict[str, float]:
    """Best times of the ripgreps a warm grep over `nb` runs, each alone (the tool runs the
    last two beside the first): where the time goes."""
    rg = find_rg()
    assert rg is not None
    with tempfile.TemporaryDirectory(prefix="bench-mirrors-") as scratch:
        mirrors = NotebookMirrors(Path(scratch))
        notebooks = sorted((root / "nb").glob("*.ipynb"))
        with mirrors.reading(root, [str(path) for path in notebooks], 100_000_000,
                             1 << 30) as (pack, _):
            commands = {
                "search of the other files (--debug: a line per notebook left out)":
                    ([rg, "--json", "--debug", *LEAVE_NOTEBOOKS_OUT, "--regexp", GREP_PATTERN,
                      "--", "nb"], root),
                "the same without --debug": ([rg, "--json", *LEAVE_NOTEBOOKS_OUT, "--regexp",
                                              GREP_PATTERN, "--", "nb"], root),
                "listing of the files (notebooks picked from it)": (
                    [rg, "--debug", "--null", "--files", "--", "nb"], root),
                "search of their mirrors, packed": (
                    [rg, "--json", "--no-ignore", "--text", "--regexp", GREP_PATTERN, "--",
                     *(part.file for part in pack.parts)], mirrors.folder),
            }
            best = {}
            for name, (argv, cwd) in commands.items():
                times = []
                for _ in range(repeat):
                    began = time.perf_counter()
                    subprocess.run(argv, cwd=cwd, capture_output=True, check=False)
                    times.append(time.perf_counter() - began)
                best[name] = min(times)
    return best


def places(matches: list[dict], first_lines: dict[str, list[int]] | None) -> set:
    found = set()
    for match in matches:
        name = Path(match["file"]).stem
        line = match["start"][0]
        if first_lines is not None:
            line += first_lines[name][match["cell"] - 1] - 1
        found.add((name, line))
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notebooks", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    args, _ = parser.parse_known_args()
    with tempfile.TemporaryDirectory(prefix="bench-notebooks-") as folder:
        root = Path(folder)
        first_lines = write_corpus(root, args.notebooks)
        plain = asyncio.run(search(root, "py", args.repeat))
        notebooks = asyncio.run(search(root, "nb", args.repeat))
        grep_plain = asyncio.run(grep(root, "py", args.repeat))
        grep_notebooks = asyncio.run(grep(root, "nb", args.repeat))
        stages = grep_stages(root, args.repeat)
    print(f"{len(first_lines)} modules as .py files and as notebooks; patterns {PATTERNS}")
    print(f"{'':12}{'.py':>10}{'.ipynb':>10}{'ratio':>8}")
    for kind in ("cold", "warm"):
        ratio = notebooks[kind] / plain[kind]
        print(f"{kind + ' (s)':12}{plain[kind]:>10.3f}{notebooks[kind]:>10.3f}{ratio:>7.2f}x"
              + ("  (target <= 1.5x)" if kind == "warm" else ""))
    for pattern in PATTERNS:
        ours = places(notebooks["matches"][pattern], first_lines)
        theirs = places(plain["matches"][pattern], None)
        same = "same places" if ours == theirs else (
            f"differ: {len(theirs - ours)} only in .py, {len(ours - theirs)} only in notebooks")
        print(f"  {pattern}: {len(theirs)} in .py, {len(ours)} in notebooks: {same}")
    print(f"grep {GREP_PATTERN!r}: .py {grep_plain[1]:.3f} s ({grep_plain[2]} lines), notebooks "
          f"{grep_notebooks[1]:.3f} s ({grep_notebooks[2]} lines): "
          f"{grep_notebooks[1] / grep_plain[1]:.2f}x (target <= 1.5x); first grep "
          f"{grep_plain[0]:.3f} s and {grep_notebooks[0]:.3f} s: "
          f"{grep_notebooks[0] / grep_plain[0]:.2f}x")

    print("  where a warm grep over the notebooks spends its time (each ripgrep alone, best):")
    for name, seconds in stages.items():
        print(f"    {name:<68} {seconds * 1000:6.1f} ms")


if __name__ == "__main__":
    main()
