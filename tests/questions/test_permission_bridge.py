"""Permission cards for tool() calls from inside an eval cell (the kernel bridge)."""

from __future__ import annotations

import asyncio

from traitlets.config import Config

from jupyter_agent_tools import Runtime

WAIT = 90  # seconds: bounds a kernel start and a card; never an assertion

CELL = """\
try:
    tool('write', {'path': 'denied.txt', 'content': 'no'})
except ToolError as e:
    print('first', e.code)
print('second', tool('write', {'path': 'allowed.txt', 'content': 'yes'}).text)
"""


async def test_bridge_write_from_a_cell_asks_on_the_same_card(root, jp_asyncio_loop):
    rt = Runtime(root_dir=str(root), config=Config({"KernelFactory": {"warm_pool": {}}}))
    try:
        run = await rt.create_run(space="lab", approvals="ask")
        async with await rt.connect_human("lab") as human:
            call = asyncio.ensure_future(run.call("eval", {
                "code": CELL, "description": "write two files through the bridge"}))
            card = await human.next_card(timeout=WAIT)
            assert card["tool"] == "eval" and card["args"]["code"] == CELL
            await human.answer(card["id"], answer="allow_once")
            card = await human.next_card(timeout=WAIT)
            assert card["tool"] == "write" and card["args"]["path"] == "denied.txt"
            await human.answer(card["id"], answer="Deny")
            card = await human.next_card(timeout=WAIT)
            assert card["args"] == {"path": "allowed.txt", "content": "yes"} and card["number"] == 3
            await human.answer(card["id"], answer="Allow once")
            result = await asyncio.wait_for(call, WAIT)
        assert result.ok, result.text
        first, second = result.text.splitlines()[:2]
        assert first == "first permission_denied" and second.startswith("second "), result.text
        assert not (root / "denied.txt").exists() and (root / "allowed.txt").read_text() == "yes"
        writes = [e for e in run.transcript.entries() if e.tool == "write"]
        assert [(e.origin, e.error_code) for e in writes] == [("cell", "permission_denied"),
                                                              ("cell", None)]
    finally:
        await rt.shutdown()
