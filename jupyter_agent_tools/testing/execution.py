"""Execute a notebook with nbclient, one code cell at a time, and say how each cell went.

A failing cell does not stop the notebook (later cells may check independent things, and each
failure is reported on its own). A cell that raises `SkipNotebook` (or pytest's `Skipped`)
skips itself and every later cell. A kernel that dies or a cell that times out fails that
cell; after a death the remaining cells are failed as not run.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CELL_TIMEOUT_SECONDS = 300
MAX_REPORT_CHARS = 12_000
#: Exception names a cell raises to skip the rest of its notebook.
SKIP_NAMES = frozenset({"SkipNotebook", "Skipped"})

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass
class CellOutcome:
    """How one code cell went: "passed", "failed" or "skipped", and why."""

    index: int  # position among all cells, 0-based, as nbformat counts
    source: str
    status: str = "not run"
    reason: str = ""
    outputs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def title(self) -> str:
        first = next((line for line in self.source.splitlines() if line.strip()), "")
        return f"cell {self.index + 1}: {first.strip()[:70]}"

    @property
    def summary(self) -> str:
        """One line: the cell and what went wrong."""
        error = next((o for o in self.outputs if o.get("output_type") == "error"), None)
        why = f"{error.get('ename')}: {error.get('evalue')}" if error else self.reason
        return f"{self.title} — {why}" if why else self.title

    def report(self) -> str:
        """What a failure shows: a summary, the cell's source numbered, its outputs and error."""
        numbered = "\n".join(f"{n:4} | {line}" for n, line in enumerate(self.source.splitlines(), 1))
        parts = [self.summary, numbered, _outputs_text(self.outputs)]
        if self.reason:
            parts.append(self.reason)
        text = "\n\n".join(part for part in parts if part)
        if len(text) > MAX_REPORT_CHARS:
            text = text[: MAX_REPORT_CHARS // 2] + "\n… (cut) …\n" + text[-MAX_REPORT_CHARS // 2:]
        return text


@dataclass
class NotebookOutcome:
    """Every code cell's outcome, and the executed notebook (outputs filled in)."""

    path: Path
    cells: list[CellOutcome]
    notebook: Any

    @property
    def failed(self) -> list[CellOutcome]:
        return [cell for cell in self.cells if cell.status == "failed"]


def code_cells(notebook: Any) -> list[CellOutcome]:
    """The outcomes-to-be of a notebook's non-empty code cells, in order."""
    return [CellOutcome(index, cell.source) for index, cell in enumerate(notebook.cells)
            if cell.cell_type == "code" and cell.source.strip()]


def read_notebook(path: Path) -> Any:
    import nbformat

    return nbformat.read(str(path), as_version=4)


def execute_notebook(path: Path, *, env: dict[str, str], cwd: Path | None = None,
                     cell_timeout: int = CELL_TIMEOUT_SECONDS) -> NotebookOutcome:
    """Run every code cell of `path` in a fresh kernel (started with `env`) and judge each."""
    return asyncio.run(_execute(Path(path), env, cwd or Path(path).parent, cell_timeout))


async def _execute(path: Path, env: dict[str, str], cwd: Path, cell_timeout: int) -> NotebookOutcome:
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    notebook = read_notebook(path)
    outcomes = code_cells(notebook)
    kernel_name = notebook.metadata.get("kernelspec", {}).get("name") or "python3"
    client = NotebookClient(
        notebook, timeout=cell_timeout, kernel_name=kernel_name, allow_errors=True,
        interrupt_on_timeout=True, resources={"metadata": {"path": str(cwd)}},
        error_on_timeout={"ename": "CellTimeout",
                          "evalue": f"the cell ran longer than {cell_timeout} s and was interrupted",
                          "traceback": []},
    )
    async with client.async_setup_kernel(env=env):
        skipped: str | None = None
        dead: str | None = None
        for outcome in outcomes:
            if skipped is not None or dead is not None:
                outcome.status = "skipped" if skipped is not None else "failed"
                outcome.reason = skipped or dead or ""
                continue
            cell = notebook.cells[outcome.index]
            try:
                await client.async_execute_cell(cell, outcome.index,
                                                execution_count=client.code_cells_executed + 1)
            except DeadKernelError:
                dead = "the kernel died in an earlier cell; this cell did not run"
                outcome.outputs = list(cell.get("outputs", []))
                outcome.status, outcome.reason = "failed", "the kernel died while running this cell"
                continue
            outcome.outputs = list(cell.outputs)
            error = next((o for o in cell.outputs if o.get("output_type") == "error"), None)
            expected = "raises-exception" in cell.metadata.get("tags", [])
            if error is not None and error.get("ename") in SKIP_NAMES:
                skipped = f"skipped: {error.get('evalue', '')}"
                outcome.status, outcome.reason = "skipped", skipped
            elif (error is not None) == expected:
                outcome.status = "passed"
            else:
                outcome.status = "failed"
                outcome.reason = ("the cell is tagged raises-exception but raised nothing"
                                  if expected else "")
    return NotebookOutcome(path, outcomes, notebook)


def _outputs_text(outputs: list[dict[str, Any]]) -> str:
    """Outputs as text: streams, plain-text results, and error tracebacks without colours."""
    parts: list[str] = []
    for output in outputs:
        kind = output.get("output_type")
        if kind == "stream":
            parts.append(f"[{output.get('name', 'stream')}]\n{output.get('text', '')}".rstrip())
        elif kind in ("execute_result", "display_data"):
            text = output.get("data", {}).get("text/plain")
            if text:
                parts.append(f"[{kind}]\n{text}".rstrip())
        elif kind == "error":
            traceback = "\n".join(output.get("traceback") or [])
            body = traceback or f"{output.get('ename')}: {output.get('evalue')}"
            parts.append(f"[error] {output.get('ename')}: {output.get('evalue')}\n"
                         f"{_ANSI.sub('', body)}".rstrip())
    return "\n\n".join(parts)
