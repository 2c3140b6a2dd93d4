"""The README's main job: `jupyter agent-tools demo` runs every step of the tour."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from jupyter_agent_tools.demo import tour


def test_the_demo_runs_every_step(tmp_path):
    demo = subprocess.run([str(Path(sys.executable).parent / "jupyter"), "agent-tools", "demo"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=280)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    summary = demo.stdout.strip().splitlines()[-1]
    assert summary.endswith("0 failed, 0 skipped."), demo.stdout[-3000:]
    # Nothing logged on the way out either (a bridge connection closed at shutdown once was).
    assert "Traceback" not in demo.stderr, demo.stderr[-3000:]
    for shown in ["(proposed) 2 replacements", "New diagnostics in inventory/broken.py",
                  "Stopped (breakpoint)", "stock.stock_value() = 9.0", "The user chose: ship",
                  "quantity  value", "{'north': 8020.0, 'south': 5130.0}",
                  "**Summary:** the north region"]:
        assert shown in demo.stdout, shown


async def test_a_step_whose_input_was_never_produced_is_not_run(runtime, monkeypatch):
    monkeypatch.setattr(tour, "STEPS", [
        tour.Step("Stage a rewrite that matches nothing", "ast_edit",
                  {"pattern": "never_called($A)", "rewrite": "x($A)", "language": "python"},
                  key="staged"),
        tour.Step("Accept it", "resolve", {"action": "accept"}, bind=tour._edit_id),
    ])
    run = await runtime.create_run()
    printed: list[str] = []
    assert await tour._tour(run, printed.append) == 1
    assert "[not run]" in printed[1] and "ast_edit produced no edit_id" in printed[1]
    assert [entry.tool for entry in run.transcript.entries()] == ["ast_edit"]
