"""Every write is a compare-and-swap, across runs: two runs of one runtime changing one file
at once lose nothing (disjoint changes all land), and a change computed on what another run
(or the user) has changed since is refused as stale_edit, never a silent overwrite."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_agent_tools.files import StaleFile, write_files_atomically
from jupyter_agent_tools.files import atomic as atomic_module
from jupyter_agent_tools.files.order import FileLocks, bytes_sha256

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


@pytest.fixture
def notebook_runtime(runtime_factory):
    return runtime_factory({"KernelFactory": {"warm_pool": {}, "idle_timeout_seconds": 30.0}})


def write_notebook(path: Path, sources: list[str]) -> None:
    nbformat.write(new_notebook(cells=[new_code_cell(s) for s in sources],
                                metadata={"kernelspec": KERNELSPEC}), path)


def cells_on_disk(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"])


# -- disjoint changes from two runs all land ----------------------------------------------


async def test_two_runs_parallel_disjoint_edits_all_land(runtime, root):
    path = root / "module.py"
    path.write_text("".join(f"value_{i} = {i}\n" for i in range(40)))
    first, second = await runtime.create_run(), await runtime.create_run()

    def edit(run, i):
        return run.call("edit", {"path": "module.py", "old_string": f"value_{i} = {i}\n",
                                 "new_string": f"value_{i} = {i * 100}  # changed\n"})

    results = await asyncio.gather(*(edit(first, i) for i in range(0, 40, 2)),
                                   *(edit(second, i) for i in range(1, 40, 2)))
    assert [r.code for r in results if not r.ok] == []
    assert path.read_text() == "".join(f"value_{i} = {i * 100}  # changed\n" for i in range(40))
    assert runtime.file_locks.busy() == 0  # every lock is gone with its last holder


async def test_two_runs_parallel_disjoint_patches_all_land(runtime, root):
    path = root / "table.txt"
    lines = [f"row {i}\n" for i in range(120)]
    path.write_text("".join(lines))
    first, second = await runtime.create_run(), await runtime.create_run()

    def patch(run, i):
        at = 3 * i  # rows 3i-1 .. 3i+1 around the changed row 3i: hunks never overlap
        context = lines[max(at - 1, 0):at]
        body = "".join(" " + line for line in context) + f"-row {at}\n+row {at} patched\n"
        after = lines[at + 1:at + 2]
        body += "".join(" " + line for line in after)
        start = at - len(context) + 1
        size = len(context) + 1 + len(after)
        return run.call("apply_patch", {"patch": f"--- a/table.txt\n+++ b/table.txt\n"
                                                 f"@@ -{start},{size} +{start},{size} @@\n{body}"})

    results = await asyncio.gather(*(patch(first, i) for i in range(0, 40, 2)),
                                   *(patch(second, i) for i in range(1, 40, 2)))
    assert [r.text for r in results if not r.ok] == []
    expected = [f"row {i} patched\n" if i % 3 == 0 else f"row {i}\n" for i in range(120)]
    assert path.read_text() == "".join(expected)


async def test_two_runs_creating_one_file_with_a_patch_one_is_stale(runtime, root):
    first, second = await runtime.create_run(), await runtime.create_run()
    results = await asyncio.gather(*(
        run.call("apply_patch", {"patch": f"--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n"
                                          f"+made_by = {n}\n"})
        for n, run in enumerate((first, second))))
    assert sorted(r.code or "ok" for r in results) == ["ok", "stale_edit"]
    assert (root / "new.py").read_text() == f"made_by = {0 if results[0].ok else 1}\n"


async def test_two_runs_parallel_disjoint_cell_edits_of_a_closed_notebook_all_land(
        runtime, root):
    path = root / "analysis.ipynb"
    write_notebook(path, [f"x{i} = {i}" for i in range(40)])
    first, second = await runtime.create_run(), await runtime.create_run()

    def edit(run, i):
        return run.call("edit", {"path": "analysis.ipynb", "cell": i + 1,
                                 "old_string": f"x{i} = {i}", "new_string": f"x{i} = -{i}"})

    results = await asyncio.gather(*(edit(first, i) for i in range(0, 40, 2)),
                                   *(edit(second, i) for i in range(1, 40, 2)))
    assert [r.text for r in results if not r.ok] == []
    assert [source(c) for c in cells_on_disk(path)] == [f"x{i} = -{i}" for i in range(40)]


# -- a change computed on what another run changed is refused -------------------------------


async def test_write_over_a_file_another_run_changed_since_it_was_read_is_stale(runtime, root):
    path = root / "notes.md"
    path.write_text("draft\n")
    first, second = await runtime.create_run(), await runtime.create_run()
    assert (await first.call("read", {"path": "notes.md"})).ok
    assert (await second.call("read", {"path": "notes.md"})).ok
    results = await asyncio.gather(
        first.call("write", {"path": "notes.md", "content": "first's version\n"}),
        second.call("write", {"path": "notes.md", "content": "second's version\n"}))
    assert sorted(r.code or "ok" for r in results) == ["ok", "stale_edit"]
    winner = next(r for r in results if r.ok)
    loser = next(r for r in results if not r.ok)
    assert "changed since you last read" in loser.error["message"]
    written = "first's version\n" if winner is results[0] else "second's version\n"
    assert path.read_text() == written
    # Read again, the loser writes on what the file holds now.
    rerun = first if loser is results[0] else second
    assert (await rerun.call("read", {"path": "notes.md"})).ok
    assert (await rerun.call("write", {"path": "notes.md", "content": "merged\n"})).ok
    # A run's own writes and edits keep what it knows: no stale_edit against itself.
    assert (await rerun.call("edit", {"path": "notes.md", "old_string": "merged",
                                      "new_string": "merged again"})).ok
    assert (await rerun.call("write", {"path": "notes.md", "content": "final\n"})).ok
    assert path.read_text() == "final\n"


async def test_write_of_a_file_the_run_never_read_overwrites_it(runtime, root):
    (root / "fresh.txt").write_text("someone's\n")
    run = await runtime.create_run()
    assert (await run.call("write", {"path": "fresh.txt", "content": "mine\n"})).ok
    assert (root / "fresh.txt").read_text() == "mine\n"


async def test_edit_after_someone_else_changed_other_lines_lands_but_write_then_is_stale(
        runtime, root):
    path = root / "config.py"
    path.write_text("a = 1\nb = 2\n")
    first, second = await runtime.create_run(), await runtime.create_run()
    assert (await first.call("read", {"path": "config.py"})).ok
    assert (await second.call("edit", {"path": "config.py", "old_string": "b = 2",
                                       "new_string": "b = 20"})).ok
    # first's edit still applies on the current bytes: it lands, second's line is kept.
    assert (await first.call("edit", {"path": "config.py", "old_string": "a = 1",
                                      "new_string": "a = 10"})).ok
    assert path.read_text() == "a = 10\nb = 20\n"
    # ...but first never saw b = 20: a whole-file write from what it read is refused.
    stale = await first.call("write", {"path": "config.py", "content": "a = 10\nb = 2\n"})
    assert stale.code == "stale_edit"
    assert path.read_text() == "a = 10\nb = 20\n"


@pytest.mark.parametrize("action", [
    {"action": "set_source", "cell": 2, "source": "y = 'run {run}'"},
    {"action": "set_type", "cell": 2, "cell_type": "{kind}"},
    {"action": "delete", "cell": 2},
    {"action": "move", "cell": 2, "index": "{index}"},
])
async def test_two_runs_changing_one_cell_of_a_closed_notebook_one_is_stale(
        notebook_runtime, root, action):
    path = root / "shared.ipynb"
    write_notebook(path, ["x = 1", "y = 2", "z = 3", "w = 4"])
    first, second = await notebook_runtime.create_run(), await notebook_runtime.create_run()
    for run in (first, second):
        assert (await run.call("read", {"path": "shared.ipynb"})).ok

    def args(n: int) -> dict:
        filled = {key: value.format(run=n, kind=("markdown", "raw")[n], index=(1, 4)[n])
                  if isinstance(value, str) else value for key, value in action.items()}
        if "index" in filled:
            filled["index"] = int(filled["index"])
        return {"path": "shared.ipynb", **filled}

    results = await asyncio.gather(first.call("notebook", args(0)),
                                   second.call("notebook", args(1)))
    assert sorted(r.code or "ok" for r in results) == ["ok", "stale_edit"], \
        [r.text for r in results]
    cells = cells_on_disk(path)
    winner = 0 if results[0].ok else 1
    if action["action"] == "set_source":
        assert source(cells[1]) == f"y = 'run {winner}'"
    elif action["action"] == "set_type":
        assert cells[1]["cell_type"] == ("markdown", "raw")[winner]
    elif action["action"] == "delete":  # one cell deleted, not two
        assert [source(c) for c in cells] == ["x = 1", "z = 3", "w = 4"]
    else:  # moved once, where the winner put it
        assert [source(c) for c in cells].index("y = 2") == (1, 4)[winner] - 1
        assert len(cells) == 4


async def test_the_runs_own_inserts_renumber_what_it_saw(notebook_runtime, root):
    path = root / "mine.ipynb"
    write_notebook(path, ["a = 1", "b = 2", "c = 3"])
    run = await notebook_runtime.create_run()
    other = await notebook_runtime.create_run()
    assert (await run.call("read", {"path": "mine.ipynb"})).ok
    # Its own insert shifts cell 3 to 4: naming it 4 is what the agent sees now.
    assert (await run.call("notebook", {"action": "insert", "path": "mine.ipynb", "index": 1,
                                        "source": "top = 0"})).ok
    assert (await run.call("notebook", {"action": "set_source", "path": "mine.ipynb",
                                        "cell": 4, "source": "c = 30"})).ok
    # Another run's insert shifts them again: cell 4 is no longer the cell the run saw there.
    assert (await other.call("notebook", {"action": "insert", "path": "mine.ipynb",
                                          "index": 1, "source": "other = 0"})).ok
    stale = await run.call("notebook", {"action": "set_source", "path": "mine.ipynb",
                                        "cell": 4, "source": "b = 20"})
    assert stale.code == "stale_edit" and stale.data["seen_at"] == 3, stale.text
    assert [source(c) for c in cells_on_disk(path)] == ["other = 0", "top = 0", "a = 1",
                                                        "b = 2", "c = 30"]


async def test_a_runs_own_cell_edit_is_what_it_saw_and_another_runs_is_not(
        notebook_runtime, root):
    path = root / "cells.ipynb"
    write_notebook(path, ["a = 1", "b = 2"])
    run, other = await notebook_runtime.create_run(), await notebook_runtime.create_run()
    assert (await run.call("read", {"path": "cells.ipynb"})).ok
    assert (await run.call("edit", {"path": "cells.ipynb", "cell": 1, "old_string": "1",
                                    "new_string": "10"})).ok
    assert (await run.call("notebook", {"action": "set_source", "path": "cells.ipynb",
                                        "cell": 1, "source": "a = 100"})).ok
    assert (await other.call("edit", {"path": "cells.ipynb", "cell": 2, "old_string": "2",
                                      "new_string": "20"})).ok
    stale = await run.call("notebook", {"action": "set_source", "path": "cells.ipynb",
                                        "cell": 2, "source": "b = 200"})
    assert stale.code == "stale_edit", stale.text
    assert [source(c) for c in cells_on_disk(path)] == ["a = 100", "b = 20"]


async def test_write_over_a_notebook_changed_by_another_run_since_it_was_read_is_stale(
        notebook_runtime, root):
    path = root / "whole.ipynb"
    write_notebook(path, ["a = 1"])
    run, other = await notebook_runtime.create_run(), await notebook_runtime.create_run()
    assert (await run.call("read", {"path": "whole.ipynb"})).ok
    # The run's own changes keep what it knows...
    assert (await run.call("notebook", {"action": "insert", "path": "whole.ipynb",
                                        "source": "b = 2"})).ok
    assert (await run.call("edit", {"path": "whole.ipynb", "cell": 2, "old_string": "2",
                                    "new_string": "3"})).ok
    mine = nbformat.writes(nbformat.v4.new_notebook(
        cells=[new_code_cell("a = 1"), new_code_cell("b = 3"), new_code_cell("c = 4")],
        metadata={"kernelspec": KERNELSPEC}))
    assert (await run.call("write", {"path": "whole.ipynb", "content": mine})).ok
    # ...another run's change is one it never saw: its whole-notebook write is refused.
    assert (await other.call("notebook", {"action": "set_source", "path": "whole.ipynb",
                                          "cell": 1, "source": "a = 100"})).ok
    stale = await run.call("write", {"path": "whole.ipynb", "content": mine})
    assert stale.code == "stale_edit", stale.text
    assert [source(c) for c in cells_on_disk(path)] == ["a = 100", "b = 3", "c = 4"]


# -- the writer's compare-and-swap against writers outside the order (the user) -------------


def test_the_writer_refuses_bytes_that_are_not_those_the_change_was_based_on(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("base\n")
    base = bytes_sha256(b"base\n")
    path.write_text("the user's\n")
    with pytest.raises(StaleFile) as refused:
        write_files_atomically({path: "agent\n"}, root=tmp_path, based_on={path: base})
    assert refused.value.changed
    assert path.read_text() == "the user's\n"
    # A file based on nothing (created by the change) is not written over one made since.
    with pytest.raises(StaleFile):
        write_files_atomically({path: "agent\n"}, root=tmp_path, based_on={path: None})
    assert path.read_text() == "the user's\n"
    # On the bytes it was based on, it writes.
    write_files_atomically({path: "agent\n"}, root=tmp_path,
                           based_on={path: bytes_sha256(b"the user's\n")})
    assert path.read_text() == "agent\n"


@pytest.mark.parametrize("when", ["before_replace", "after_replace"])
def test_an_in_place_save_racing_the_replace_is_kept_and_every_file_put_back(
        tmp_path, monkeypatch, when):
    """Jupyter's contents API saves a file in place (truncate, write). A save that lands
    between the writer's check and its replace, or into the replaced file just after it,
    is found, and every file of the change is put back, the user's bytes included."""
    one, two = tmp_path / "a.txt", tmp_path / "b.txt"
    one.write_text("one\n")
    two.write_text("two\n")
    commit = atomic_module._commit
    saved = []

    def racing_commit(target):
        if target.path == two and when == "before_replace":
            two.write_text("the user's save\n")  # in place, as the contents API writes
            saved.append(True)
        commit(target)
        if target.path == two and when == "after_replace":
            assert target.backup is not None  # the replaced file, still being written to
            with open(os.path.join(tmp_path, target.backup), "r+") as handle:
                handle.truncate(0)
                handle.write("the user's save\n")
            saved.append(True)

    monkeypatch.setattr(atomic_module, "_commit", racing_commit)
    with pytest.raises(StaleFile):
        write_files_atomically({one: "agent one\n", two: "agent two\n"}, root=tmp_path,
                               based_on={one: bytes_sha256(b"one\n"),
                                         two: bytes_sha256(b"two\n")})
    assert saved
    assert one.read_text() == "one\n"
    assert two.read_text() == "the user's save\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


async def test_file_locks_order_holders_and_forget_idle_files():
    locks = FileLocks()
    order: list[str] = []

    async def hold(name: str, paths: list[str], pause: float) -> None:
        async with locks.hold(paths):
            order.append(f"{name} in")
            await asyncio.sleep(pause)
            order.append(f"{name} out")

    # b then a, and a then b: sorted acquisition, so no deadlock; each waits its turn.
    await asyncio.wait_for(asyncio.gather(hold("x", ["/r/b", "/r/a"], 0.05),
                                          hold("y", ["/r/a", "/r/b"], 0.0),
                                          hold("z", ["/r/c"], 0.0)), 5)
    assert order.index("x out") < order.index("y in")
    assert order.index("z in") < order.index("x out")  # another file does not wait
    assert locks.busy() == 0


# -- the user's saves through the contents API, racing the agent's edits --------------------


async def test_a_contents_api_save_racing_an_agent_edit_never_loses_the_users_bytes(
        jp_serverapp, jp_fetch, jp_root_dir):
    runtime = jp_serverapp.web_app.settings["agent_tools_runtime"]
    run = await runtime.create_run()
    path = jp_root_dir / "report.py"
    for i in range(30):
        path.write_text(f"a = 0\nmarker = 'before {i}'\n")
        users = f"a = 0\nmarker = 'the user {i}'\n"
        save = jp_fetch("api", "contents", "report.py", method="PUT", body=json.dumps(
            {"type": "file", "format": "text", "content": users}))
        edit = run.call("edit", {"path": "report.py", "old_string": "a = 0",
                                 "new_string": "a = 1"})
        first, second = (save, edit) if i % 2 else (edit, save)
        results = await asyncio.gather(first, second)
        result = results[1] if first is save else results[0]
        now = path.read_text()
        # The user's bytes are there: saved after the agent's edit (it is overwritten, as
        # the user chose), or before it (the edit lands on them, or is refused as stale).
        assert now in (users, users.replace("a = 0", "a = 1")), now
        assert result.ok or result.code == "stale_edit", result.text
