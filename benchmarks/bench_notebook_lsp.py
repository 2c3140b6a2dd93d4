"""`lsp hover` in a notebook vs in the same code as one `.py` file.

    python -m benchmarks.bench_notebook_lsp [--rounds N] [--cells N]

A 200-cell Python notebook (each cell a function calling the previous cell's, and a
`%time` magic every tenth cell) and a module holding the same code joined as the virtual
document joins it; hover on the same name through `run.call("lsp", ...)` in each, interleaved,
on one basedpyright. Target (issue #18): notebook ≤ 1.2 × module.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import cast

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_agent_tools import Runtime
from jupyter_agent_tools.lsp.supervisor import LanguageServerSupervisor
from jupyter_agent_tools.runtime import Resource

SUPERVISOR = "jupyter_agent_tools.lsp.supervisor:LanguageServerSupervisor"


def cell_source(index: int) -> str:
    body = f"def step_{index}(value: float) -> float:\n"
    body += f"    return step_{index - 1}(value) + {index}\n" if index else "    return value\n"
    if index % 10 == 9:
        body += f"%time step_{index}(1.0)\n"
    return body


async def bench(rounds: int, cells: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "proj"
        project.mkdir()
        (project / "pyproject.toml").write_text("[project]\nname = 'bench'\nversion = '0'\n")
        sources = [cell_source(index) for index in range(cells)]
        nbformat.write(new_notebook(cells=[new_code_cell(s.rstrip("\n")) for s in sources],
                                    metadata={"kernelspec": {"name": "python3",
                                                             "language": "python",
                                                             "display_name": "Python 3"}}),
                       project / "analysis.ipynb")
        # The module is the notebook's code as one file, magics as comments (3 lines per cell).
        module = "\n\n\n".join(s.rstrip("\n").replace("%time", "#time") for s in sources)
        (project / "analysis.py").write_text(module + "\n")
        runtime = Runtime(root_dir=tmp, resource_providers=[SUPERVISOR])
        supervisor = cast(LanguageServerSupervisor, runtime.providers[Resource.LSP])
        supervisor.specs = {name: spec for name, spec in supervisor.specs.items()
                            if name == "basedpyright"}
        run = await runtime.create_run(cwd="proj")
        target = cells * 3 // 4
        in_notebook = {"action": "hover", "file": "analysis.ipynb", "cell": target + 1,
                       "line": 2, "symbol": f"step_{target - 1}"}
        first_line = sum(len(s.rstrip("\n").splitlines()) + 2 for s in sources[:target])
        in_module = {"action": "hover", "file": "analysis.py", "line": first_line + 2,
                     "symbol": f"step_{target - 1}"}
        for args in (in_notebook, in_module):  # warm: open, analyse
            warm = await run.call("lsp", args)
            assert warm.ok and f"def step_{target - 1}" in warm.text, warm.text
        samples: dict[str, list[float]] = {"notebook": [], "module": []}
        for index in range(rounds):
            order = [("notebook", in_notebook), ("module", in_module)]
            for kind, args in order if index % 2 else reversed(order):
                started = time.perf_counter()
                result = await run.call("lsp", args)
                samples[kind].append(time.perf_counter() - started)
                assert result.ok, result.text
        await runtime.shutdown()
    return {kind: statistics.median(values) * 1000 for kind, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--cells", type=int, default=200)
    options = parser.parse_args()
    figures = asyncio.run(bench(options.rounds, options.cells))
    notebook, module = figures["notebook"], figures["module"]
    ratio = notebook / module
    print(f"lsp hover, {options.cells}-cell notebook vs the same code as a .py (medians, ms)")
    print(f"  notebook {notebook:7.2f}  module {module:7.2f}  ratio {ratio:5.2f}x  "
          f"target 1.20x  {'OK' if ratio <= 1.2 else 'OVER'}")


if __name__ == "__main__":
    main()
