"""The worker processes: sharding, the tree cache, and no process outliving the runtime."""

from __future__ import annotations

import asyncio
import fcntl
import os
import pickle
from collections import deque
from pathlib import Path

from process_helpers import ended
from traitlets.config import Config

from jupyter_agent_tools import Runtime
from jupyter_agent_tools.structural.astgrep import compile_sg
from jupyter_agent_tools.structural.cache import CachedFile, TreeCache
from jupyter_agent_tools.structural.pool import WorkerPool, WorkerProcess, _pipe_capacity
from jupyter_agent_tools.structural.worker import SearchEngine, SearchJob

PARSER = "jupyter_agent_tools.structural.provider:ParserProvider"
F_SETPIPE_SZ = 1031  # Linux's fcntl to size a pipe


def test_unread_files_go_in_batches_and_read_ones_go_home():
    pool = WorkerPool(2, 2**20, 27.0, 10.0)
    files = [(f"/r/f{i}.py", 100_000) for i in range(50)] + [("/r/big.js", 9_000_000)]
    homed, batches = pool.plan(files)
    assert homed == [[], []]
    assert batches[0] == ["/r/big.js"]  # largest first: it must not be the last to start
    assert sorted(p for batch in batches for p in batch) == sorted(p for p, _ in files)
    assert len(batches) > 2  # idle workers keep taking batches until none is left
    pool._remember(["/r/f1.py", "/r/big.js"], 1)
    homed, batches = pool.plan(files)
    assert homed == [[], ["/r/f1.py", "/r/big.js"]]
    assert "/r/f1.py" not in [p for batch in batches for p in batch]


def test_tree_cache_is_bounded_and_stamped():
    cache = TreeCache(budget_bytes=10_000, tree_cost_factor=27.0)
    entry = cache.put(("a", "python"), CachedFile((1, 100), b"x" * 100))
    cache.set_tree(("a", "python"), entry, object())  # ~2.9 kB with its tree
    assert cache.get(("a", "python"), (1, 100)) is entry
    assert cache.get(("a", "python"), (2, 100)) is None  # changed on disk: dropped
    for name in "bcdefgh":
        e = cache.put((name, "python"), CachedFile((1, 100), b"x" * 100))
        cache.set_tree((name, "python"), e, object())
    assert cache.used_bytes <= 10_000 and cache.evictions > 0
    assert cache.get(("h", "python"), (1, 100)) is not None  # the newest stays
    huge = cache.put(("z", "python"), CachedFile((1, 1), b"x" * 20_000))
    assert huge is not None and cache.get(("z", "python"), (1, 1)) is None  # never fits


async def test_second_search_reuses_trees(run, files):
    files({f"m{i}.py": f"print({i})\n" for i in range(10)})
    args = {"pattern": "print($A)", "language": "python"}
    await run.call("ast_grep", args)
    provider = run.runtime.provider("parser")
    first = provider.pool.cache_stats()
    await run.call("ast_grep", args)
    second = provider.pool.cache_stats()
    assert sum(s.get("hits", 0) for s in second) - sum(s.get("hits", 0) for s in first) == 10


async def test_no_worker_outlives_the_runtime(root, files):
    files({"a.py": "print(1)\n"})
    config = Config()
    config.ParserProvider.prestart_workers = True  # every worker, not only the one searching
    rt = Runtime(root_dir=str(root), resource_providers=[PARSER], config=config)
    run = await rt.create_run()
    assert (await run.call("ast_grep", {"pattern": "print($A)", "path": "a.py"})).ok
    pids = [w.pid for w in rt.provider("parser").pool.workers]
    assert all(pids)
    await rt.shutdown()
    for pid in pids:
        try:
            os.kill(pid, 0)
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (ProcessLookupError, FileNotFoundError):
            continue
        # A reused pid belongs to someone else; ours would still run our worker.
        assert b"structural.worker" not in cmdline, f"worker {pid} is still alive"


async def test_a_killed_pool_leaves_no_process():
    pool = WorkerPool(2, 2**20, 27.0, 10.0)
    pool.start()
    pids = [worker.pid for worker in pool.workers]
    assert all(pids)
    for pid in pids:  # each in a session of its own: ending its group reaches what it started
        assert pid is not None and os.getsid(pid) == pid
    await pool.shutdown()
    assert all(ended(pid) for pid in pids if pid is not None)
    assert all(not worker.alive() for worker in pool.workers)


async def test_a_killed_worker_is_replaced(run, files):
    files({f"m{i}.py": f"print({i})\n" for i in range(6)})
    for worker in run.runtime.provider("parser").pool.workers:
        worker.kill()
    res = await run.call("ast_grep", {"pattern": "print($A)", "language": "python"})
    assert res.ok and res.data["total"] == 6


async def test_cache_budget_is_configured_on_the_provider(root, files):
    from traitlets.config import Config

    files({f"m{i}.py": f"print({i})\n" for i in range(4)})
    config = Config()
    config.ParserProvider.max_tree_cache_mb = 0  # no memory for trees: every search parses
    config.ParserProvider.workers = 1
    rt = Runtime(root_dir=str(root), resource_providers=[PARSER], config=config)
    try:
        run = await rt.create_run()
        for _ in range(2):
            res = await run.call("ast_grep", {"pattern": "print($A)", "language": "python"})
            assert res.data["total"] == 4
        (stats,) = rt.provider("parser").pool.cache_stats()
        assert stats["budget_bytes"] == 0 and stats["hits"] == 0 and stats["entries"] == 0
    finally:
        await rt.shutdown()


def test_a_runtime_without_runs_starts_no_worker(parser_runtime):
    assert all(w.pid is None for w in parser_runtime.provider("parser").pool.workers)


def test_a_file_gone_before_it_is_read_is_counted_as_vanished(root):
    kept = root / "kept.py"
    kept.write_text("print(1)\n")
    engine = SearchEngine(TreeCache(2**20))
    answer = engine.run(SearchJob("print($A)", "python", [str(root / "gone.py"), str(kept)],
                                  limit=10, max_text=100, root=str(root)))
    assert answer["total"] == 1 and answer["counts"]["vanished"] == 1


def test_a_folder_swapped_for_a_link_after_the_walk_is_not_read(root, tmp_path):
    outside = tmp_path / "outside"
    for top in (root, outside):
        (top / "pkg").mkdir(parents=True)
    (root / "pkg" / "app.py").write_text("print('inside')\n")
    (outside / "pkg" / "app.py").write_text("print('the outside secret')\n")
    (root / "b.py").write_text("print('b')\n")
    listed = [str(root / "pkg" / "app.py"), str(root / "b.py")]  # what the walk found
    os.rename(root / "pkg", root / "pkg.real")
    os.symlink(outside / "pkg", root / "pkg")
    (root / "b.py").unlink()
    (root / "b.py").symlink_to(outside / "pkg" / "app.py")  # a file swapped for a link too
    engine = SearchEngine(TreeCache(2**20))
    answer = engine.run(SearchJob("print($A)", "python", listed, limit=10, max_text=100,
                                  root=str(root)))
    assert answer["matches"] == [] and answer["total"] == 0
    assert answer["counts"]["outside_root"] == 2 and answer["counts"]["searched"] == 0


async def test_the_matches_shown_are_the_first_in_file_order(run, files):
    # Later files are larger: batches go largest first, yet the matches shown must be
    # those of the first files (by name, as the walk lists them), as rg and the CLI order them.
    files({f"m{i:02}.py": f"print({i})\n" + "x = 1\n" * (400 * i) for i in range(40)})
    res = await run.call("ast_grep", {"pattern": "print($A)", "language": "python",
                                      "max_results": 3})
    assert res.ok and res.data["total"] == 40
    assert [m["file"] for m in res.data["matches"]] == ["m00.py", "m01.py", "m02.py"]


async def test_a_search_of_many_batches_keeps_both_workers_fed(run, files):
    files({f"d{i % 7}/m{i:03}.py": f"print({i})\n" + "y = 2\n" * 500 for i in range(300)})
    pool = run.runtime.provider("parser").pool
    _, batches = pool.plan([(str(p), p.stat().st_size) for p in sorted(run.cwd.rglob("*.py"))])
    assert len(batches) > 6  # requests are sent ahead while a worker works on one
    res = await run.call("ast_grep", {"pattern": "print($A)", "language": "python"})
    assert res.ok and res.data["total"] == 300
    # Each file went home to the worker that read it: the second search parses nothing.
    res = await run.call("ast_grep", {"pattern": "print($A)", "language": "python"})
    assert res.data["total"] == 300
    assert sum(s["hits"] for s in pool.cache_stats()) >= 300


async def test_a_pattern_that_does_not_parse_stops_a_search_of_many_batches(run, files):
    files({f"m{i:03}.py": "print(1)\n" + "y = 2\n" * 500 for i in range(200)})
    res = await run.call("ast_grep", {"pattern": "print(", "language": "python"})
    assert not res.ok and res.code == "unparseable_pattern"
    res = await run.call("ast_grep", {"pattern": "print($A)", "language": "python"})
    assert res.ok and res.data["total"] == 200  # no stale answer was left in a pipe


async def test_a_worker_killed_mid_search_fails_that_search_only(run, files):
    files({f"m{i:03}.py": "print(1)\n" + "y = 2\n" * 3000 for i in range(200)})
    pool = run.runtime.provider("parser").pool
    pool.start()
    search = asyncio.ensure_future(run.call("ast_grep", {"pattern": "print($A)",
                                                         "language": "python"}))
    await asyncio.sleep(0.15)
    pool.workers[0].kill()
    res = await search
    # Killed before it had a batch, or the search says a worker died.
    assert (res.ok and res.data["total"] == 200) or "worker" in res.text
    res = await run.call("ast_grep", {"pattern": "print($A)", "language": "python"})
    assert res.ok and res.data["total"] == 200


def test_a_file_without_the_patterns_operator_is_not_parsed(root):
    # `$A == $A` has no word: its operator rules out a file without `==` before any parse.
    (root / "eq.py").write_text("if x == x:\n    pass\n")
    (root / "none.py").write_text("y = 1\nprint(y)\n")
    engine = SearchEngine(TreeCache(2**20))
    answer = engine.run(SearchJob("$A == $A", "python", [str(root / "eq.py"), str(root / "none.py")],
                                  limit=10, max_text=100, root=str(root)))
    assert answer["total"] == 1
    assert answer["counts"]["prefiltered"] == 1 and answer["counts"]["parsed"] == 1
    # After a `$$$` ast-grep may skip a token of the pattern: no operator is required then.
    assert compile_sg("f($$$A, x == 1)", "python").literals == (b"f", b"x")
    assert compile_sg("$A?.$B", "typescript").literals == (b"?.",)


def test_a_trees_memory_is_what_its_parse_kept(root):
    # Kotlin's trees take about 70 times their source, Python's about 31: each tree is
    # accounted as the allocator measured it, not by one factor for every language.
    body = "".join(f"    fun m{j}(x: Int): Int {{ println(x + {j}); return x }}\n"
                   for j in range(300))
    (root / "big.kt").write_text(f"class Big {{\n{body}}}\n")
    (root / "big.py").write_text("".join(f"def m{j}(x):\n    print(x + {j})\n    return x\n"
                                         for j in range(300)))
    engine = SearchEngine(TreeCache(2**30, tree_cost_factor=1.0))
    for path, language in ((root / "big.kt", "kotlin"), (root / "big.py", "python")):
        engine.run(SearchJob("$F($X)", language, [str(path)], limit=1, max_text=10,
                             root=str(root)))
    kotlin, python = (engine.cache._entries[(str(root / name), language)]
                      for name, language in (("big.kt", "kotlin"), ("big.py", "python")))
    assert kotlin.tree_bytes is not None and python.tree_bytes is not None
    assert kotlin.tree_bytes > 40 * len(kotlin.source)
    assert 15 * len(python.source) < python.tree_bytes < kotlin.tree_bytes / len(
        kotlin.source) * len(python.source)
    assert engine.cache.used_bytes >= kotlin.tree_bytes + python.tree_bytes


def test_a_request_the_pipe_cannot_hold_whole_waits_for_the_answer(root):
    # Both pipes of one page, as for a user past pipe-user-pages-soft. A request sent ahead
    # that the pipe cannot hold, while the worker writes an answer bigger than its pipe,
    # would leave each waiting for the other.
    files = []
    for i in range(60):
        path = root / (f"{i:02}_" + "n" * 180 + ".py")
        path.write_text(("print('" + "x" * 500 + "')\n") * 20)
        files.append(str(path))
    worker = WorkerProcess(2**24, 27.0)
    worker.start()
    try:
        assert worker._outbox is not None and worker._inbox is not None
        for connection in (worker._outbox, worker._inbox):
            fcntl.fcntl(connection.fileno(), F_SETPIPE_SZ, 4096)
        worker._ahead_bytes = _pipe_capacity(worker._outbox.fileno())
        jobs = deque(SearchJob("print($A)", "python", files[start:start + 20], limit=1000,
                               max_text=600, root=str(root)) for start in range(0, 60, 20))
        assert len(pickle.dumps(jobs[0])) > 4096
        answers: list[dict] = []
        worker.request_each([], lambda: jobs.popleft() if jobs else None,
                            lambda _, answer: answers.append(answer), timeout=20)
        assert [answer["total"] for answer in answers] == [400, 400, 400]
    finally:
        worker.stop()


async def test_a_small_search_is_not_held_behind_a_big_one(run, files):
    # Two runs share the workers: a search takes them a batch at a time, and another
    # search waiting for a worker gets it between two batches, not after the whole search.
    files({f"big/m{i:03}.py": "print(1)\n" + "y = [1, 2, 3]\n" * 6000 for i in range(150)})
    files({"small.py": "print(2)\n"})
    other = await run.runtime.create_run()
    big = asyncio.ensure_future(run.call("ast_grep", {"pattern": "print($A)", "path": "big",
                                                      "language": "python"}))
    while not any(turn.locked() for turn in run.runtime.provider("parser").pool._turns):
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)  # the big search is under way on both workers
    small = await other.call("ast_grep", {"pattern": "print($A)", "path": "small.py"})
    assert small.ok and small.data["total"] == 1
    assert not big.done(), "the small search waited for the whole big one"
    assert (await big).data["total"] == 150
