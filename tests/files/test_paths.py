"""Path containment: one rule, applied by every file tool."""

from __future__ import annotations

import os

import pytest

OUTSIDE = [
    "../secret.txt",
    "sub/../../secret.txt",
    "{outside}/secret.txt",
    "{sibling}/secret.txt",
    "link_out/secret.txt",
    "file_link",
    "a\x00b",
]

FILE_TOOLS = {
    "read": lambda p: {"path": p},
    "write": lambda p: {"path": p, "content": "pwned"},
    "edit": lambda p: {"path": p, "old_string": "secret", "new_string": "pwned"},
    "glob": lambda p: {"pattern": "*", "path": p},
    "grep": lambda p: {"pattern": "secret", "path": p},
    "apply_patch": lambda p: {
        "patch": f"--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-secret\n+pwned\n"
    },
}


@pytest.fixture
def layout(tmp_path):
    """root/ with escape hatches: a sibling with a shared prefix, symlinks pointing out."""
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    sibling = tmp_path / "rootx"
    sibling.mkdir()
    (sibling / "secret.txt").write_text("secret\n")
    (tmp_path / "secret.txt").write_text("secret\n")
    os.symlink(outside, root / "link_out")
    os.symlink(outside / "secret.txt", root / "file_link")
    return root, outside, sibling


CASES = [
    (tool, template)
    for tool in sorted(FILE_TOOLS)
    for template in OUTSIDE
    # a unified diff's header is one line of text: it cannot carry a NUL byte
    if not (tool == "apply_patch" and "\x00" in template)
]


@pytest.mark.parametrize(("tool", "template"), CASES)
async def test_every_file_tool_refuses_paths_out_of_root(layout, tool, template, jp_asyncio_loop):
    from jupyter_agent_tools import Runtime

    root, outside, sibling = layout
    path = template.format(outside=outside, sibling=sibling)
    if tool in {"glob", "grep"} and template == "file_link":
        path = "link_out"
    runtime = Runtime(root_dir=str(root))
    run = await runtime.create_run()
    result = await run.call(tool, FILE_TOOLS[tool](path))
    assert result.code == "path_outside_root", result.text
    assert "inside" in result.error["message"] or "NUL" in result.error["message"]
    assert (outside / "secret.txt").read_text() == "secret\n"
    assert (sibling / "secret.txt").read_text() == "secret\n"
    await runtime.shutdown()


async def test_inside_paths_with_dotdot_that_stay_inside_work(layout, jp_asyncio_loop):
    from jupyter_agent_tools import Runtime

    root, _, _ = layout
    (root / "a.txt").write_text("hello\n")
    runtime = Runtime(root_dir=str(root))
    run = await runtime.create_run(cwd="sub")
    result = await run.call("read", {"path": "../a.txt"})
    assert result.ok and "hello" in result.text
    await runtime.shutdown()


async def test_walks_do_not_follow_symlinks_out(layout, jp_asyncio_loop):
    from jupyter_agent_tools import Runtime

    root, _, _ = layout
    runtime = Runtime(root_dir=str(root))
    run = await runtime.create_run()
    result = await run.call("grep", {"pattern": "secret"})
    assert result.ok and result.data["total"] == 0
    await runtime.shutdown()
