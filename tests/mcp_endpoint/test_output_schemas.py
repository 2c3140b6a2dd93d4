"""Every tool's outputSchema over MCP, against what its calls really answer.

The SDK's client checks each successful result's structuredContent against the tool's
outputSchema itself (a mismatch raises); failed results are checked here with `jsonschema`.
Calls of every tool, succeeding and failing, go through a real server.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from jsonschema.validators import validator_for

AGENT = Path(__file__).parent.parent / "workers" / "scripted_agent.py"
NOTEBOOK = {"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": None,
                       "outputs": [], "source": "print(6 * 7)"}],
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                        "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}

# (tool, arguments, whether it succeeds): in order, each may rely on the ones before.
CALLS: list[tuple[str, dict[str, Any], bool]] = [
    ("write", {"path": "a.py", "content": "value = 1\nprint(value)\n"}, True),
    ("write", {"path": "../outside.py", "content": "x"}, False),
    ("read", {"path": "a.py", "limit": 1}, True),
    ("read", {"path": "n.ipynb", "outputs": "images"}, True),
    ("read", {"path": "missing.py"}, False),
    ("edit", {"path": "a.py", "old_string": "value = 1", "new_string": "value = 2"}, True),
    ("edit", {"path": "a.py", "old_string": "value", "new_string": "v"}, False),
    ("apply_patch", {"patch": "--- /dev/null\n+++ b/b.py\n@@ -0,0 +1 @@\n+b = 1\n"}, True),
    ("apply_patch", {"patch": "not a patch"}, False),
    ("glob", {"pattern": "*.py"}, True),
    ("glob", {"pattern": "*.py", "path": "nowhere"}, False),
    ("grep", {"pattern": "value"}, True),
    ("grep", {"pattern": "value", "path": "nowhere"}, False),
    ("bash", {"command": "echo hello"}, True),
    ("bash", {"command": "echo oops >&2; exit 3"}, False),
    ("bash", {"command": "echo started; sleep 0.2", "background": True}, True),
    ("job", {"action": "list"}, True),
    ("job", {"action": "wait", "job_id": "JOB"}, True),
    ("job", {"action": "output", "job_id": "no-such-job"}, False),
    ("ast_grep", {"pattern": "value = $X", "language": "python"}, True),
    ("ast_grep", {"pattern": "value = $X", "language": "no-such-language"}, False),
    ("ast_edit", {"pattern": "value = $X", "rewrite": "value = $X + 1", "language": "python"}, True),
    ("ast_edit", {"pattern": "nothing_like_this($X)", "rewrite": "x", "language": "python"}, True),
    ("ast_edit", {"pattern": "value = $X", "rewrite": "value = $Y", "language": "python"}, False),
    ("resolve", {"edit_id": "EDIT", "action": "accept"}, True),
    ("resolve", {"edit_id": "edit_999", "action": "discard"}, False),
    ("lsp", {"action": "status"}, True),
    ("lsp", {"action": "hover", "file": "missing.py", "line": 1}, False),
    ("lsp_rename", {"file": "missing.py", "line": 1, "symbol": "v", "new_name": "w"}, False),
    ("debug", {"action": "adapters"}, True),
    ("debug", {"action": "status"}, False),
    ("debug", {"action": "stack"}, False),
    ("eval", {"code": "print(6 * 7)\n6 * 7", "description": "print and show a product"}, True),
    ("eval", {"code": "1 / 0", "description": "divide one by zero on purpose"}, False),
    ("eval", {"code": "1", "description": "too short"}, False),
    ("notebook", {"action": "list"}, True),
    ("notebook", {"action": "insert", "path": "n.ipynb", "source": "x = 3"}, True),
    ("notebook", {"action": "run", "path": "n.ipynb", "cell": 1}, True),
    ("notebook", {"action": "delete", "path": "n.ipynb", "cell": 99}, False),
    ("ask_user", {"question": "Which database?", "options": [{"label": "sqlite"},
                                                             {"label": "postgres"}]}, True),
    ("ask_user", {"question": "Which ones?", "multi_select": True}, False),
    ("vibe_list", {}, True),
    ("vibe_list", {"status": "done"}, False),
    ("vibe_spawn", {"label": "echo", "brief": "echo done"}, True),
    ("vibe_spawn", {"label": "echo", "brief": "echo done", "tier": "best"}, False),
    ("vibe_wait", {"worker_id": "w1", "timeout_seconds": 60}, True),
    ("vibe_send", {"worker_id": "w1", "message": "echo again"}, True),
    ("vibe_kill", {"worker_id": "w1"}, True),
    ("vibe_wait", {"worker_id": "w9", "timeout_seconds": 0}, False),
    ("vibe_kill", {"worker_id": "w9"}, False),
    ("vibe_send", {"worker_id": "w9", "message": "hello"}, False),
]


@pytest.fixture
def jp_server_config(jp_server_config):
    return {
        **jp_server_config,
        "WorkerPool": {"backend": "command"},
        "CommandBackend": {"argv": {"fast": [sys.executable, str(AGENT)],
                                    "good": [sys.executable, str(AGENT)]},
                           "kill_grace_seconds": 1.0},
    }


async def answer(context, params):
    return types.ElicitResult(action="accept", content={"answer": "postgres"})


def check(schema: dict[str, Any], structured: Any, what: str) -> None:
    errors = sorted(validator_for(schema)(schema).iter_errors(structured), key=str)
    assert not errors, f"{what}: {errors[0].message} at {list(errors[0].absolute_path)}"


async def test_every_result_matches_its_tools_output_schema(mcp_session, jp_root_dir):
    (jp_root_dir / "n.ipynb").write_text(json.dumps(NOTEBOOK))
    async with mcp_session(vibe="true", client={"elicitation_callback": answer}) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        for tool in tools.values():
            assert tool.output_schema is not None, tool.name
            assert tool.output_schema["type"] == "object", tool.name  # as MCP requires
            validator_for(tool.output_schema).check_schema(tool.output_schema)
        answered: dict[str, set[bool]] = {}
        ids: dict[str, str] = {}
        for name, arguments, succeeds in CALLS:
            arguments = {key: ids.get(value, value) if isinstance(value, str) else value
                         for key, value in arguments.items()}
            # The SDK's client has checked a successful result against the schema already.
            result = await session.call_tool(name, arguments)
            what = f"{name} {json.dumps(arguments)[:80]}"
            assert result.is_error is not succeeds, (what, result.content[0].text[:500])
            assert isinstance(result.structured_content, dict), what
            check(tools[name].output_schema, result.structured_content, what)
            if not succeeds:
                assert set(result.structured_content["error"]) == {"code", "message"}, what
            structured = result.structured_content
            if structured.get("job_id"):
                ids["JOB"] = structured["job_id"]
            if structured.get("edit_id"):
                ids.setdefault("EDIT", structured["edit_id"])
            answered.setdefault(name, set()).add(succeeds)
    assert set(answered) == set(tools)  # every tool the session lists was called
    assert [name for name, outcomes in answered.items() if False not in outcomes] == []
    # Each succeeded too, but lsp_rename (a language server's rename is tested in tests/lsp).
    assert [name for name, outcomes in answered.items() if True not in outcomes] == ["lsp_rename"]


async def test_a_result_that_breaks_the_schema_is_refused_by_the_sdks_client(
        mcp_session, glob_breaking_its_schema):
    """The check above can fail: a result whose data contradicts its tool's declared type."""
    async with mcp_session() as session:
        await session.list_tools()
        with pytest.raises(RuntimeError, match="Invalid structured content returned by tool glob"):
            await session.call_tool("glob", {"pattern": "*"})
