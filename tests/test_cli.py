"""`jupyter agent-tools …` as a user types it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent


def agent_tools(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "jupyter"), "agent-tools", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_call_exit_codes(tmp_path):
    (tmp_path / "a.txt").write_text("hello\n")
    ok = agent_tools("call", "read", '{"path": "a.txt"}', cwd=tmp_path)
    assert ok.returncode == 0 and "hello" in ok.stdout
    failed = agent_tools("call", "read", '{"path": "missing.txt"}', "--json", cwd=tmp_path)
    assert failed.returncode == 1 and json.loads(failed.stdout)["error"]["code"] == "not_found"
    assert agent_tools("call", "read", "{not json", cwd=tmp_path).returncode == 2
    assert agent_tools("call", "read", "[1]", cwd=tmp_path).returncode == 2
    assert agent_tools("call", "read", "{}", "--surface", "everything", cwd=tmp_path).returncode == 2
    assert agent_tools("call", "read", "{}", "--cwd", "..", cwd=tmp_path).returncode == 2
    assert agent_tools("bogus", cwd=tmp_path).returncode == 2


def test_plan_surface_cannot_write_from_the_cli(tmp_path):
    result = agent_tools("call", "write", '{"path": "x", "content": ""}', "--surface", "plan",
                         "--json", cwd=tmp_path)
    assert result.returncode == 1 and json.loads(result.stdout)["error"]["code"] == "unknown_tool"
    assert not (tmp_path / "x").exists()


def test_tools_lists_schemas_per_surface(tmp_path):
    plan = agent_tools("tools", "--surface", "plan", "--format", "openai", cwd=tmp_path)
    names = {schema["function"]["name"] for schema in json.loads(plan.stdout)}
    assert "read" in names and "write" not in names and "bash" not in names
    table = agent_tools("tools", cwd=tmp_path)
    assert table.returncode == 0 and "apply_patch" in table.stdout


def test_status_json(tmp_path):
    result = agent_tools("status", "--json", cwd=tmp_path)
    status = json.loads(result.stdout)
    assert result.returncode == 0 and Path(status["root_dir"]) == tmp_path.resolve()
    assert "read" in status["tools"]


def test_the_server_extension_is_enabled_and_ok(tmp_path):
    listed = subprocess.run([str(BIN / "jupyter"), "server", "extension", "list"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    output = listed.stdout + listed.stderr
    assert "jupyter_agent_tools enabled" in output.replace("\x1b[32m", "").replace("\x1b[0m", "")
    assert "jupyter_agent_tools 0.1.0 OK" in output.replace("\x1b[32m", "").replace("\x1b[0m", "")
