"""The run store of an embedded Runtime: where it is, what it keeps, and its bounds."""

from __future__ import annotations

import asyncio
import tempfile
import threading
from pathlib import Path

from jupyter_agent_tools.runtime.store import RunStore, StoreLimits

NO_PROVIDERS: list[str] = []


def stored(runtime_factory, store: Path, **traits):
    return runtime_factory(run_store_path=str(store), resource_providers=NO_PROVIDERS, **traits)


async def test_an_embedded_runtime_keeps_no_store_unless_told(runtime_factory, tmp_path):
    assert runtime_factory(resource_providers=NO_PROVIDERS).run_store is None
    store = tmp_path / "data" / "runs.sqlite3"
    runtime = stored(runtime_factory, store)
    run = await runtime.create_run()
    await runtime.run_store.flushed()
    assert store.is_file() and (store.stat().st_mode & 0o077) == 0
    assert [r["id"] for r in await runtime.list_runs()] == [run.id]
    assert runtime_factory(run_store_path="", resource_providers=NO_PROVIDERS).run_store is None


async def test_a_store_inside_the_root_is_moved_out(runtime_factory, root):
    runtime = stored(runtime_factory, root / ".jupyter" / "runs.sqlite3")
    try:
        path = runtime.run_store.path
        assert not path.is_relative_to(root)
        assert path.is_relative_to(Path(tempfile.gettempdir()).resolve())
        await runtime.create_run()
        await runtime.run_store.flushed()
        assert path.is_file() and not (root / ".jupyter").exists()
        assert (await runtime.status())["run_store"] == {"path": str(path), "error": None}
    finally:
        await runtime.shutdown()
        for leftover in path.parent.glob(path.name + "*"):
            leftover.unlink()


async def test_runs_left_open_end_by_restart_and_closed_ones_by_close(runtime_factory, tmp_path):
    store = tmp_path / "runs.sqlite3"
    first = stored(runtime_factory, store)
    closed = await first.create_run()
    crashed = await first.create_run(conversation_id="c")
    assert (await crashed.call("glob", {"pattern": "*"})).ok
    await first.close_run(closed.id)
    # A second runtime on the same store while the first holds its runs: they stay its own.
    assert {r["id"] for r in await stored(runtime_factory, store).list_runs()} == {closed.id}
    # The first's store gone without closing its runs, as in a crash: a new one ends them.
    await first.run_store.close()
    second = stored(runtime_factory, store)
    ended = {r["id"]: r for r in await second.list_runs()}
    assert ended[closed.id]["ended_by"] == "close" and ended[crashed.id]["ended_by"] == "restart"
    assert all(r["state"] == "ended" for r in ended.values())
    assert [e["tool"] for e in await second.run_store.transcript(crashed.id)] == ["glob"]
    resumed = await second.create_run(conversation_id="c")
    assert resumed.resumed_from == crashed.id
    assert [e.tool for e in resumed.transcript.entries()] == ["glob"]


async def test_stored_transcripts_drop_what_the_run_drops(runtime_factory, tmp_path):
    runtime = stored(runtime_factory, tmp_path / "runs.sqlite3", max_transcript_entries=3)
    run = await runtime.create_run()
    for number in range(5):
        assert (await run.call("glob", {"pattern": f"{number}*"})).ok
    await runtime.close_run(run.id)
    kept = await runtime.run_store.transcript(run.id)
    assert [e["args"]["pattern"] for e in kept] == ["2*", "3*", "4*"]
    assert (await runtime.ended_run(run.id))["transcript_dropped"] == 2


async def test_the_oldest_ended_runs_go_past_the_count(runtime_factory, tmp_path):
    runtime = stored(runtime_factory, tmp_path / "runs.sqlite3", max_stored_runs=2)
    ids = []
    for _ in range(4):
        run = await runtime.create_run()
        ids.append(run.id)
        await runtime.close_run(run.id)
    open_run = await runtime.create_run()
    assert [r["id"] for r in await runtime.list_runs()] == [*ids[2:], open_run.id]


async def test_ended_runs_go_past_their_age(runtime_factory, tmp_path):
    store = tmp_path / "runs.sqlite3"
    runtime = stored(runtime_factory, store, stored_run_max_age_days=1 / 86_400)  # a second
    run = await runtime.create_run()
    await runtime.close_run(run.id)
    assert [r["id"] for r in await runtime.list_runs()] == [run.id]
    await asyncio.sleep(1.2)
    later = stored(runtime_factory, store, stored_run_max_age_days=1 / 86_400)
    assert await later.list_runs() == []
    kept = stored(runtime_factory, store)  # the default: 30 days
    assert await kept.list_runs() == []


async def test_the_oldest_ended_runs_go_past_the_size(runtime_factory, root, tmp_path):
    store = tmp_path / "runs.sqlite3"
    runtime = stored(runtime_factory, store, max_store_mb=0.5)
    ids = []
    for number in range(8):  # about 100 KB of transcript each
        run = await runtime.create_run()
        ids.append(run.id)
        assert (await run.call("write", {"path": f"f{number}.txt",
                                         "content": f"{number}" * 100_000})).ok
        await runtime.close_run(run.id)
    kept = [r["id"] for r in await runtime.list_runs()]
    assert kept == ids[-len(kept):] and 2 <= len(kept) < len(ids)
    assert runtime.run_store._used_bytes(runtime.run_store._connection) <= 0.5 * 2**20


async def test_writes_past_the_queue_bound_are_dropped_not_waited_for(tmp_path, root):
    store = RunStore(tmp_path / "runs.sqlite3", root, StoreLimits(
        max_runs=10, max_age_seconds=0, max_bytes=0, max_pending_writes=5))
    release = threading.Event()
    store._executor.submit(release.wait)  # the writer thread is busy
    for number in range(8):
        store.run_opened(f"run{number}", None, {"id": f"run{number}", "created_at": number},
                         float(number))
    assert store.dropped_writes == 3
    release.set()
    await store.flushed()
    store.run_ended("run0", "close", 0)
    assert [r["id"] for r in await store.ended_runs()] == ["run0"]
    await store.close()


async def test_cards_a_run_left_unanswered_stay_and_answered_ones_go(runtime_factory, tmp_path):
    store = tmp_path / "runs.sqlite3"
    runtime = runtime_factory(run_store_path=str(store), resource_providers=[
        "jupyter_agent_tools.questions.port:QuestionPort"])
    run = await runtime.create_run(space="lab")
    human = await runtime.connect_human("lab")
    answered = asyncio.ensure_future(run.call("ask_user", {"question": "First?"}))
    card = await human.next_card(timeout=30)
    await human.answer(card["id"], text="yes")
    assert (await answered).ok
    waiting = asyncio.ensure_future(run.call("ask_user", {"question": "Second?"}))
    left = await human.next_card(timeout=30)
    await runtime.run_store.flushed()
    assert [c["id"] for c in await runtime.run_store.cards(run.id)] == [left["id"]]
    await runtime.shutdown()  # a clean stop: the waiting card is cut short, and kept
    assert not (await waiting).ok
    later = runtime_factory(run_store_path=str(store), resource_providers=NO_PROVIDERS)
    assert (await later.ended_run(run.id))["ended_by"] == "restart"
    assert [c["question"] for c in await later.run_store.cards(run.id)] == ["Second?"]
