"""notebooks/model_agent.ipynb: without a key, every cell runs and does nothing."""

from __future__ import annotations

import os
from pathlib import Path

from jupyter_agent_tools.testing.execution import execute_notebook, read_notebook

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "model_agent.ipynb"
KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")


def test_without_a_key_the_notebook_is_skipped_cleanly(tmp_path):
    env = {name: value for name, value in os.environ.items() if name not in KEYS}
    outcome = execute_notebook(NOTEBOOK, env=env, cwd=tmp_path, cell_timeout=120)
    assert [cell.status for cell in outcome.cells] == ["passed"] * len(outcome.cells), [
        cell.report() for cell in outcome.failed]
    printed = "".join(o.get("text", "") for cell in outcome.cells for o in cell.outputs)
    assert printed.startswith("Skipped: set ANTHROPIC_API_KEY or OPENAI_API_KEY")
    assert not list(tmp_path.iterdir()), "no run was created, nothing was copied"


def test_the_sdks_are_imported_only_inside_their_loops():
    notebook = read_notebook(NOTEBOOK)
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            compile(cell.source, f"model_agent.ipynb cell {index + 1}", "exec")
            top_level = [line for line in cell.source.splitlines()
                         if line.startswith(("import ", "from "))]
            assert not any("anthropic" in line or "openai" in line for line in top_level)
