"""A language server that cannot start for memory (issue 46): the cause is named from its own
output, and the lighter Python server (ty) takes over.

Real basedpyright (Node.js) under a real address-space limit (`ulimit -v`, as a pod or a
shared host sets one): V8 cannot reserve its heap and prints a native backtrace.
"""

from __future__ import annotations

import pytest

from jupyter_agent_tools.discovery import find_executable

ADDRESS_SPACE_KB = 800_000  # the 800 MiB of the issue


@pytest.fixture
def starved_basedpyright():
    binary = find_executable(("basedpyright-langserver",))
    if binary is None or find_executable(("ty",)) is None:
        pytest.skip("needs basedpyright and ty")
    return {"basedpyright": {"command": [
        "sh", "-c", f'ulimit -v {ADDRESS_SPACE_KB} && exec "$0" --stdio', binary]}}


async def test_basedpyright_out_of_memory_is_named_and_ty_takes_over(
        lsp_runtime, write_files, starved_basedpyright):
    write_files({"pyproject.toml": "[project]\nname = 'p'\nversion = '0'\n",
                 "main.py": "total = 1\nprint(total)\n"}, "proj")
    runtime = lsp_runtime(language_servers=starved_basedpyright)
    run = await runtime.create_run(cwd="proj")

    hover = await run.call("lsp", {"action": "hover", "file": "main.py", "line": 2,
                                   "symbol": "total"})
    assert hover.ok and "Literal[1]" in hover.text, hover.text  # ty answered

    running = (await runtime.status())["resources"]["lsp"]["running"]
    failed = [s for s in running if s["server"] == "basedpyright"]
    assert failed, running
    reason = failed[0]["last_error"]
    assert "ran out of memory" in reason and "Fatal process out of memory" in reason, reason
    assert "Native stack trace" not in reason and "0x" not in reason, reason

    wrote = await run.call("write", {"path": "bad.py", "content": "x: int = 'no'\n"})
    assert wrote.ok and wrote.data["diagnostics"]["new"], wrote.text
    assert "invalid-assignment" in {d["code"] for d in wrote.data["diagnostics"]["new"]}
    checked = await run.call("lsp", {"action": "diagnostics", "file": "bad.py"})
    assert "invalid-assignment" in checked.text, checked.text  # ty's, in basedpyright's place
