"""agent-tools/mcp with the official TypeScript SDK's client (ts_client.mjs), which checks every
result's structuredContent against its tool's outputSchema with ajv.

Its SDK is installed under .tools/node by scripts/setup.sh."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SDK = REPO / ".tools" / "node" / "node_modules" / "@modelcontextprotocol" / "sdk"
SCRIPT = Path(__file__).parent / "ts_client.mjs"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not (SDK / "package.json").exists(),
    reason="node and the TypeScript MCP SDK (scripts/setup.sh installs it under .tools/node)")


@pytest.fixture
def ts_client(mcp_url, jp_serverapp):
    """`await ts_client([(tool, args), ...])` → what the TypeScript client saw."""

    async def run(calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
        process = await asyncio.create_subprocess_exec(
            "node", str(SCRIPT), str(SDK), mcp_url(), jp_serverapp.identity_provider.token,
            json.dumps(calls), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(process.communicate(), 120)
        assert process.returncode == 0, err.decode()[-2000:]
        return json.loads(out)

    return run


async def test_the_typescript_client_accepts_every_tools_results(ts_client, jp_root_dir):
    (jp_root_dir / "a.py").write_text("value = 1\n")
    seen = await ts_client([
        ("read", {"path": "a.py"}),
        ("read", {"path": "missing.py"}),
        ("glob", {"pattern": "*.py"}),
        ("grep", {"pattern": "value"}),
        ("write", {"path": "b.txt", "content": "b\n"}),
        ("edit", {"path": "a.py", "old_string": "nothing", "new_string": "x"}),
        ("bash", {"command": "echo hi"}),
        ("ast_grep", {"pattern": "value = $X", "language": "python"}),
        ("notebook", {"action": "list"}),
    ])
    tools = {tool["name"]: tool for tool in seen["tools"]}
    assert {"read", "write", "eval", "notebook", "ask_user"} <= set(tools)
    assert all(tool["outputSchema"]["type"] == "object" for tool in tools.values())
    calls = seen["calls"]
    assert [call.get("thrown") for call in calls] == [None] * len(calls), calls
    assert [call["isError"] for call in calls] == [False, True, False, False, False, True,
                                                   False, False, False]
    assert calls[0]["structuredContent"]["path"] == "a.py"
    assert calls[1]["structuredContent"]["error"]["code"] == "not_found"


async def test_the_typescript_client_refuses_a_result_that_breaks_the_schema(
        ts_client, glob_breaking_its_schema):
    """The check above can fail: a result whose data contradicts its tool's declared type."""
    [call] = (await ts_client([("glob", {"pattern": "*"})]))["calls"]
    assert "does not match the tool's output schema" in call["thrown"], call
