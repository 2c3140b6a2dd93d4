"""A staged edit accepted while another run edits its files: checked and written in each
file's turn, so the other run's edits are never lost, and an accept refused as stale leaves
every one of its files as it was."""

from __future__ import annotations

import asyncio

FILES = {f"pkg/m{i}.py": "import logging\n\nprint('start')\n"
         + "".join(f"x{j} = {j}\n" for j in range(10)) + "print(x0)\n" for i in range(4)}


async def test_an_accept_racing_another_runs_edits_loses_nothing(
        parser_runtime, run, files, root):
    other = await parser_runtime.create_run()
    for attempt in range(10):
        files(FILES)
        staged = await run.call("ast_edit", {"pattern": "print($A)",
                                             "rewrite": "logging.info($A)",
                                             "path": "pkg", "language": "python"})
        assert staged.ok, staged.text
        edits = [other.call("edit", {"path": name, "old_string": f"x{j} = {j}\n",
                                     "new_string": f"x{j} = {j}0\n"})
                 for j in range(10) for name in FILES]
        accept = run.call("resolve", {"edit_id": staged.data["edit_id"], "action": "accept"})
        # The accept goes among the edits, in a different place each time.
        place = attempt * 4
        results = await asyncio.gather(*edits[:place], accept, *edits[place:])
        accepted = results[place]
        edited = results[:place] + results[place + 1:]
        assert [r.code for r in edited if not r.ok] == []  # every edit landed
        texts = [(root / name).read_text() for name in FILES]
        for text in texts:
            assert all(f"x{j} = {j}0\n" in text for j in range(10)), text
        if accepted.ok:
            assert all(text.count("logging.info(") == 2 for text in texts), texts
        else:  # refused: none of its files changed
            assert accepted.code == "stale_edit", accepted.text
            assert not any("logging.info" in text for text in texts), texts
