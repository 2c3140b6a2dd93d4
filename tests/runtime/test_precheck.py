"""A call that cannot succeed fails before its permission card: the human is never asked to
approve a path outside the root or an edit id that does not exist."""

from __future__ import annotations

import asyncio

import pytest

WAIT = 60  # seconds: bounds the wait for a card; never an assertion

PATCH_OUTSIDE = """\
--- a/../../outside.py
+++ b/../../outside.py
@@ -1 +1 @@
-a = 1
+a = 2
"""

DOOMED_CALLS = [
    ("write", {"path": "../../outside.txt", "content": "x"}, "path_outside_root"),
    ("edit", {"path": "/etc/hostname", "old_string": "a", "new_string": "b"}, "path_outside_root"),
    ("write", {"path": "escape/inside.txt", "content": "x"}, "path_outside_root"),  # a symlink
    ("apply_patch", {"patch": PATCH_OUTSIDE}, "path_outside_root"),
    ("apply_patch", {"patch": "@@ -1 +1 @@\n-a\n+b\n"}, "invalid_arguments"),  # unparseable
    ("apply_patch", {"patch": "just some words\n"}, "invalid_arguments"),  # changes nothing
    ("ast_edit", {"pattern": "print($A)", "rewrite": "log($A)", "path": "../.."}, "path_outside_root"),
    ("lsp_rename", {"file": "../../a.py", "line": 1, "symbol": "a", "new_name": "b"},
     "path_outside_root"),
    ("debug", {"action": "launch", "program": "/usr/bin/env"}, "path_outside_root"),
    ("resolve", {"edit_id": "None", "action": "accept"}, "unknown_edit"),
]


@pytest.fixture
def project(root, tmp_path):
    """A working directory inside the root, with a link that points out of it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    work = root / "work"
    work.mkdir()
    (work / "escape").symlink_to(outside)
    return work


@pytest.mark.parametrize(("tool", "args", "code"), DOOMED_CALLS,
                         ids=[f"{tool}-{code}" for tool, _, code in DOOMED_CALLS])
async def test_a_doomed_call_fails_before_any_card(runtime, project, tool, args, code):
    run = await runtime.create_run(cwd="work", approvals="ask", space="qa",
                                   conversation_id="precheck")
    assert tool in run.tool_names()
    async with await runtime.connect_human("qa") as human:
        doomed = started(run, tool, args)
        possible = started(run, "write", {"path": "fine.txt", "content": "ok"})
        # The first card the human sees is the possible call's: the doomed one showed none.
        card = await human.next_card(timeout=WAIT)
        assert (card["number"], card["args"]["path"]) == (1, "fine.txt"), card
        await human.answer(card["id"], answer="Allow once")
        assert (await possible).ok
        assert (await doomed).code == code, (await doomed).text
    assert not (project.parent.parent / "outside.txt").exists()


def started(run, tool: str, args: dict) -> asyncio.Future:
    """Start a call without waiting for it (a card would need an answer first)."""
    return asyncio.ensure_future(run.call(tool, args))


async def test_an_edit_resolved_once_is_refused_unasked_the_second_time(runtime, project):
    (project / "a.py").write_text("print(1)\n")
    run = await runtime.create_run(cwd="work", approvals="ask", space="qa")
    async with await runtime.connect_human("qa") as human:
        staging = started(run, "ast_edit", {"pattern": "print($A)", "rewrite": "log($A)",
                                                 "language": "python"})
        await human.answer((await human.next_card(timeout=WAIT))["id"], answer="Allow this tool for this run")
        edit_id = (await staging).data["edit_id"]
        discarding = started(run, "resolve", {"edit_id": edit_id, "action": "discard"})
        await human.answer((await human.next_card(timeout=WAIT))["id"], answer="Allow once")
        assert (await discarding).ok
        again = started(run, "resolve", {"edit_id": edit_id, "action": "accept"})
        possible = started(run, "write", {"path": "fine.txt", "content": "ok"})
        card = await human.next_card(timeout=WAIT)
        assert (card["number"], card["args"]["path"]) == (3, "fine.txt"), card
        await human.answer(card["id"], answer="Allow once")
        assert (await possible).ok
        assert (await again).code == "unknown_edit" and "already resolved" in (await again).text
    assert (project / "a.py").read_text() == "print(1)\n"
