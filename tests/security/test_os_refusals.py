"""A path the operating system refuses answers with a contract code from every path-taking
tool, naming the problem; never "failed unexpectedly … a bug in the tool" (issue 14)."""

from __future__ import annotations

import re

import pytest

from jupyter_agent_tools import Runtime

PROVIDERS = ["jupyter_agent_tools.structural.provider:ParserProvider",
             "jupyter_agent_tools.lsp.supervisor:LanguageServerSupervisor",
             "jupyter_agent_tools.dap.supervisor:DebugSupervisor"]

TOOLS = {
    "read": lambda p: {"path": p},
    "write": lambda p: {"path": p, "content": "x = 1\n"},
    "edit": lambda p: {"path": p, "old_string": "old", "new_string": "new"},
    "glob": lambda p: {"pattern": "*.py", "path": p},
    "grep": lambda p: {"pattern": "old", "path": p},
    "apply_patch": lambda p: {"patch": f"--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-old\n+new\n"},
    "ast_grep": lambda p: {"pattern": "print($A)", "path": p, "language": "python"},
    "ast_edit": lambda p: {"pattern": "print($A)", "rewrite": "log($A)", "path": p,
                           "language": "python"},
    "lsp": lambda p: {"action": "definition", "file": p, "line": 1, "symbol": "old"},
    "lsp_rename": lambda p: {"file": p, "line": 1, "symbol": "old", "new_name": "new"},
    "debug breakpoints": lambda p: {"action": "breakpoints", "file": p, "lines": [1]},
    "debug launch": lambda p: {"action": "launch", "program": p},
}

REFUSALS = [
    ("x" * 300, "invalid_arguments", "too long"),  # ENAMETOOLONG: one name over 255 bytes
    # a path over PATH_MAX; searches bound their free-text arguments before that
    ("/".join(["folder"] * 700), "invalid_arguments", "too long|over the 4096-character limit"),
    ("notes.py/inner.py", "not_found", "notes.py/inner.py"),  # ENOTDIR: a file as a folder
]


@pytest.fixture
def run(root, jp_asyncio_loop):
    (root / "notes.py").write_text("old = 1\n")
    runtime = Runtime(root_dir=str(root), resource_providers=PROVIDERS)
    yield jp_asyncio_loop.run_until_complete(runtime.create_run(conversation_id="refusals"))
    jp_asyncio_loop.run_until_complete(runtime.shutdown())


@pytest.mark.parametrize("tool", sorted(TOOLS))
@pytest.mark.parametrize(("path", "code", "says"), REFUSALS, ids=["long name", "long path", "file as folder"])
async def test_an_os_refusal_is_a_contract_error(run, root, tool, path, code, says):
    if tool.startswith("lsp") and code == "not_found":
        # lsp asks first whether any server serves the file: here none can (no root marker).
        code, says = "unavailable", "no root marker"
    result = await run.call(tool.split()[0], TOOLS[tool](path))
    assert result.code == code and re.search(says, result.error["message"]), result.text
    assert "bug in the tool" not in result.text
    assert (root / "notes.py").read_text() == "old = 1\n"
    assert sorted(p.name for p in root.iterdir()) == ["notes.py"]
