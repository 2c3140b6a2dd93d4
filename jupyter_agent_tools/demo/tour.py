"""`jupyter agent-tools demo`: the tour of every tool on the bundled sample project.

The story runs against a fresh copy of `sample_project/` in a temporary root, through the
same `Run.call` an agent uses. A step whose tool this install cannot serve is shown as
skipped with the reason, never faked.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from traitlets.config import Config

from ..runtime import Run, Runtime, ToolResult

SAMPLE_PROJECT = Path(__file__).parent / "sample_project"
SPACE = "demo"


@dataclass
class Step:
    """One call of the tour: what it shows, the tool, and its arguments."""

    title: str
    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    # Fills arguments from earlier results (e.g. the edit id staged by ast_edit); raises
    # MissingResult when the earlier step produced nothing to pass on.
    bind: Callable[[dict[str, ToolResult]], dict[str, Any]] | None = None
    key: str | None = None


class MissingResult(Exception):
    """A step needs what an earlier step did not produce; the message says which."""


def _produced(results: dict[str, ToolResult], key: str, field: str, by: str) -> Any:
    value = results[key].data.get(field) if key in results else None
    if not value:
        raise MissingResult(f"{by} produced no {field} to pass on")
    return value


def _edit_id(results: dict[str, ToolResult]) -> dict[str, Any]:
    return {"edit_id": _produced(results, "staged", "edit_id", "ast_edit")}


def _worker_id(results: dict[str, ToolResult]) -> dict[str, Any]:
    return {"worker_id": _produced(results, "spawned", "worker_id", "vibe_spawn")}


STEPS: list[Step] = [
    Step("Find the Python files", "glob", {"pattern": "*.py"}),
    Step("Read the stock module", "read", {"path": "inventory/stock.py", "limit": 20}),
    Step("Search text", "grep", {"pattern": r"def \w+", "glob": "*.py"}),
    Step("Structural search: every print call", "ast_grep",
         {"pattern": "print($$$ARGS)", "language": "python", "path": "inventory"}),
    Step("Stage a rewrite: flush every print", "ast_edit",
         {"pattern": "print($$$ARGS)", "rewrite": "print($$$ARGS, flush=True)",
          "language": "python", "path": "inventory"}, key="staged"),
    Step("Accept the staged rewrite", "resolve", {"action": "accept"}, bind=_edit_id),
    Step("Language server: hover", "lsp",
         {"action": "hover", "file": "inventory/cli.py", "line": 8, "symbol": "Item"}),
    Step("Language server: go to definition", "lsp",
         {"action": "definition", "file": "inventory/cli.py", "line": 8, "symbol": "Item"}),
    Step("Language server: references", "lsp",
         {"action": "references", "file": "inventory/stock.py", "line": 28, "symbol": "total_value"}),
    Step("Rename across files", "lsp_rename",
         {"file": "inventory/stock.py", "line": 28, "symbol": "total_value", "new_name": "stock_value"}),
    Step("Write a file with a type error: new diagnostics appear", "write",
         {"path": "inventory/broken.py",
          "content": "from inventory.stock import Item\n\ncount: int = Item('a', 1.0).name\n"}),
    Step("Debug: a breakpoint before launch", "debug",
         {"action": "breakpoints", "file": "inventory/cli.py", "lines": [11]}),
    Step("Debug: launch the program", "debug", {"action": "launch", "program": "main.py"}),
    Step("Debug: where are we", "debug", {"action": "stack"}),
    Step("Debug: evaluate in the stopped frame", "debug",
         {"action": "evaluate", "expression": "stock.stock_value()"}),
    Step("Debug: step over", "debug", {"action": "step_over"}),
    Step("Debug: end the session", "debug", {"action": "terminate"}),
    Step("Eval: state that persists", "eval",
         {"code": "from inventory.cli import build\nstock = build()\nstock.stock_value()",
          "description": "build the sample stock and value it"}),
    Step("Eval: a table (a DataFrame when pandas is installed)", "eval",
         {"code": "rows = [(i.name, i.quantity, i.value()) for i in stock.items.values()]\n"
                  "try:\n"
                  "    import pandas as pd\n"
                  "    table = pd.DataFrame(rows, columns=['name', 'quantity', 'value'])\n"
                  "except ImportError:  # not in a default install: a plain table\n"
                  "    for row in [('name', 'quantity', 'value'), *rows]:\n"
                  "        print(*(f'{cell:>8}' for cell in row))\n"
                  "    table = None\n"
                  "table",
          "description": "tabulate the stock, with pandas when it is installed"}),
    Step("Eval: tool() from inside a cell", "eval",
         {"code": "found = tool('grep', {'pattern': 'flush=True'})\nlen(found.data['matches'])",
          "description": "count the rewritten prints via the bridge"}),
    Step("Ask the human (a scripted one answers in the demo)", "ask_user",
         {"question": "Ship the flushed prints?", "context": "The rewrite touched the report.",
          "options": [{"label": "ship", "description": "keep the change"},
                      {"label": "revert"}]}),
    Step("Spawn a background worker (a scripted agent: no model needed)", "vibe_spawn",
         {"brief": "List the Python files, then find the prints.\n"
                   'call glob {"pattern": "*.py"}\n'
                   'call ast_grep {"pattern": "print($$$A)", "language": "python"}',
          "label": "surveyor"}, key="spawned"),
    Step("Wait for the worker", "vibe_wait", {"timeout_seconds": 60}, bind=_worker_id),
    Step("Notebook: the agent adds a cell that loads the data, and runs it", "notebook",
         {"action": "insert", "path": "analysis.ipynb", "run": True,
          "source": "import csv\n\nwith open('sales.csv') as file:\n"
                    "    sales = list(csv.DictReader(file))\nrevenue = {}\nfor row in sales:\n"
                    "    revenue[row['region']] = revenue.get(row['region'], 0) + "
                    "float(row['revenue'])\nrevenue"}),
    Step("Notebook: a summary in a markdown cell, right after the title", "notebook",
         {"action": "insert", "path": "analysis.ipynb", "cell": "title",
          "cell_type": "markdown",
          "source": "**Summary:** the north region brings in most of the revenue."}),
    Step("Notebook: its cells as they are now, outputs saved", "read",
         {"path": "analysis.ipynb", "outputs": True}),
    Step("Run the program", "bash", {"command": "python main.py"}),
]


def _indent(text: str, max_lines: int = 25) -> str:
    lines = text.splitlines() or [""]
    if len(lines) > max_lines:
        lines = [*lines[:max_lines], f"... ({len(lines) - max_lines} more lines)"]
    return textwrap.indent("\n".join(lines), "    ")


def _demo_config() -> Config:
    """Workers driven by the scripted agent, so the tour needs no model and no API key."""
    config = Config()
    config.WorkerPool.backend = "python"
    config.PythonBackend.agent = "jupyter_agent_tools.testing.agents:scripted_agent"
    return config


async def _answer_cards(human: Any) -> None:
    """A scripted human: answers every card of the demo space with its first option."""
    try:
        while True:
            card = await human.next_card()
            options = card.get("options") or []
            label = options[0]["label"] if options else None
            await human.answer(card["id"], answer=label)
    finally:
        await human.close()


def _print_now(line: str) -> None:
    """Each step shows as it ends, also through a pipe (`make demo | tee`)."""
    print(line, flush=True)


async def run_demo(out: Callable[[str], None] = _print_now, workdir: Path | None = None) -> int:
    """Run the tour; return the number of steps that failed (skipped steps are not failures)."""
    with tempfile.TemporaryDirectory(prefix="agent-tools-demo-") as scratch:
        root = Path(workdir or scratch)
        project = root / "sample_project"
        out(f"jupyter-agent-tools demo — {len(STEPS)} steps, sample project at {project}")
        shutil.copytree(SAMPLE_PROJECT, project, ignore=shutil.ignore_patterns("__pycache__"))
        runtime = Runtime(root_dir=str(root), config=_demo_config())
        human_task = None
        try:
            run = await runtime.create_run(cwd="sample_project", conversation_id="demo",
                                           vibe=True, space=SPACE)
            if "ask_user" in run.tool_names():
                human = await runtime.connect_human(SPACE)
                human_task = asyncio.ensure_future(_answer_cards(human))
            out(f"tools visible to this run: {', '.join(run.tool_names())}\n")
            return await _tour(run, out)
        finally:
            if human_task is not None:
                human_task.cancel()
            await runtime.shutdown()


async def _tour(run: Run, out: Callable[[str], None]) -> int:
    results: dict[str, ToolResult] = {}
    failures = skipped = 0
    available = set(run.tool_names())
    for number, step in enumerate(STEPS, 1):
        header = f"[{number:2}] {step.title} — {step.tool}"
        if step.tool not in available:
            skipped += 1
            out(f"{header}\n    (skipped: {step.tool} is not available in this install)\n")
            continue
        try:
            args = {**step.args, **(step.bind(results) if step.bind else {})}
        except MissingResult as missing:
            failures += 1  # the tour broke earlier; calling with a made-up id would hide it
            out(f"{header}  [not run]\n    ({missing}: see the steps above)\n")
            continue
        began = time.monotonic()
        result = await run.call(step.tool, args)
        seconds = time.monotonic() - began
        if step.key:
            results[step.key] = result
        mark = f"ok in {seconds:.1f}s" if result.ok else f"error {result.code} in {seconds:.1f}s"
        failures += 0 if result.ok else 1
        out(f"{header}  [{mark}]\n{_indent(result.text)}\n")
    out("Transcript:")
    for entry in run.transcript.entries():
        state = "ok" if entry.ok else f"error {entry.error_code}"
        out(f"  {entry.tool:<12} {entry.label[:50]:<50} {state:<22} {entry.duration_ms:8.1f} ms")
    out(f"\n{len(STEPS) - skipped - failures} steps ok, {failures} failed, {skipped} skipped.")
    return failures
