"""Transcript replay: a transcript recorded over HTTP, re-issued against fresh runs."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from jupyter_agent_tools import Runtime
from jupyter_agent_tools.demo.tour import SAMPLE_PROJECT
from jupyter_agent_tools.testing.replay import replay_embedded

CALLS = [
    ("read", {"path": "inventory/stock.py", "limit": 12}),
    ("grep", {"pattern": r"def \w+", "glob": "*.py"}),
    ("read", {"path": "no/such/file.py"}),
    ("ast_edit", {"pattern": "System.out.println($$$A)", "rewrite": "System.err.println($$$A)",
                  "path": "Report.java"}),
    ("resolve", {"edit_id": "edit_1", "action": "accept"}),
]


# Rewritten in Java: no language server serves it here, so no diagnostics timing in the texts.
JAVA = 'class Report {\n    void show(int total) {\n        System.out.println("total " + total);\n    }\n}\n'


def fresh_copy(root: Path, name: str) -> Path:
    project = Path(shutil.copytree(SAMPLE_PROJECT, root / name,
                                   ignore=shutil.ignore_patterns("__pycache__")))
    (project / "Report.java").write_text(JAVA)
    return project


def replay_cli(root: Path, transcript: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "jupyter"), "agent-tools", "--root",
                           str(root), "replay", str(transcript), "--cwd", "p", *args],
                          capture_output=True, text=True, timeout=300)


async def test_replay_reports_exactly_the_results_that_changed(api, jp_root_dir, tmp_path):
    fresh_copy(jp_root_dir, "recorded")
    code, run = await api("POST", "runs", {"cwd": "recorded"})
    assert code == 201
    for tool, args in CALLS:
        code, result = await api("POST", f"runs/{run['id']}/calls", {"tool": tool, "args": args})
        assert code == 200 and result["ok"] == (tool != "read" or "no/such" not in args["path"])
    _, entries = await api("GET", f"runs/{run['id']}/transcript")
    transcript = tmp_path / "transcript.json"
    transcript.write_text(json.dumps(entries))

    same = tmp_path / "same"
    fresh_copy(same, "p")
    unchanged = replay_cli(same, transcript, "--json")
    assert unchanged.returncode == 0, unchanged.stdout + unchanged.stderr
    assert json.loads(unchanged.stdout) == {"replayed": 5, "nested_not_reissued": 0, "differences": []}

    changed = tmp_path / "changed"
    project = fresh_copy(changed, "p")
    stock = project / "inventory/stock.py"
    stock.write_text(stock.read_text().replace("class Item:", "class Article:"))
    (project / "Report.java").unlink()
    report = replay_cli(changed, transcript)
    assert report.returncode == 1, report.stdout + report.stderr
    headlines = re.findall(r"^\[(\d)\] (\w+) '.*': (\w+) differs", report.stdout, re.MULTILINE)
    assert headlines == [("1", "read", "text"), ("4", "ast_edit", "ok"), ("5", "resolve", "ok")]
    assert "[1] read 'read inventory/stock.py': text differs" in report.stdout
    diff_lines = [line.strip() for line in report.stdout.splitlines()]
    assert any(line.startswith("-") and line.endswith("class Item:") for line in diff_lines)
    assert any(line.startswith("+") and line.endswith("class Article:") for line in diff_lines)
    assert report.stdout.endswith("5 calls replayed (0 nested calls left to their cells): 3 differ.\n")


def test_ids_a_tool_makes_up_are_mapped_to_the_new_run(tmp_path, jp_asyncio_loop):
    """A transcript whose ast_edit staged "edit_41" replays against a run that stages "edit_1"."""
    fresh_copy(tmp_path / "a", "p")
    entries = jp_asyncio_loop.run_until_complete(record_a_rewrite(tmp_path / "a"))
    renamed = json.loads(json.dumps(entries).replace("edit_1", "edit_41"))
    assert renamed[1]["args"]["edit_id"] == "edit_41"

    fresh_copy(tmp_path / "b", "p")
    report, transcript = jp_asyncio_loop.run_until_complete(
        replay_embedded(renamed, str(tmp_path / "b"), "p"))
    assert report.replayed == 2 and report.differences == []
    assert [entry["args"].get("edit_id") for entry in transcript] == [None, "edit_1"]


async def record_a_rewrite(root: Path) -> list[dict]:
    runtime = Runtime(root_dir=str(root))
    try:
        run = await runtime.create_run(cwd="p")
        staged = await run.call("ast_edit", CALLS[3][1])
        await run.call("resolve", {"edit_id": staged.data["edit_id"], "action": "accept"})
        return run.transcript.to_json()
    finally:
        await runtime.shutdown()


def test_replay_refuses_a_transcript_with_a_call_recorded_without_its_arguments(
        tmp_path, jp_asyncio_loop):
    fresh_copy(tmp_path / "recorded", "p")
    entries = jp_asyncio_loop.run_until_complete(record_an_oversized_write(tmp_path / "recorded"))
    assert entries[1]["args"] == {} and entries[1]["args_omitted_bytes"] > 50_000
    transcript = tmp_path / "transcript.json"
    transcript.write_text(json.dumps(entries))

    fresh_copy(tmp_path / "replayed", "p")
    refused = replay_cli(tmp_path / "replayed", transcript)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.startswith("error: This transcript cannot be replayed: 1 call(s)")
    assert "[2] write 'write huge.txt'" in refused.stderr and "max_transcript_bytes" in refused.stderr
    # Refused whole: not even the call before it was re-issued.
    assert not (tmp_path / "replayed/p/small.txt").exists()


async def record_an_oversized_write(root: Path) -> list[dict]:
    runtime = Runtime(root_dir=str(root), max_transcript_bytes=20_000)
    try:
        run = await runtime.create_run(cwd="p")
        await run.call("write", {"path": "small.txt", "content": "s"})
        await run.call("write", {"path": "huge.txt", "content": "y" * 50_000})
        return run.transcript.to_json()
    finally:
        await runtime.shutdown()
