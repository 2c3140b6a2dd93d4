"""A run's transcript: bounded in calls and in bytes, oldest dropped first, and says so."""

from __future__ import annotations

import asyncio

import nbformat
import pytest

from jupyter_agent_tools.testing.replay import UnreplayableTranscript, replay

CONTENT_CHARS = 5_000


async def write_files(run, count: int, chars: int = CONTENT_CHARS, char: str = "x") -> None:
    for number in range(count):
        result = await run.call("write", {"path": f"f{number}.txt", "content": char * chars})
        assert result.ok, result.text


async def test_the_default_keeps_every_normal_call_whole(runtime, root):
    assert runtime.max_transcript_bytes == 64 * 1024 * 1024
    assert runtime.max_transcript_entries == 10_000
    run = await runtime.create_run()
    content = "first\n" + "line\n" * 200_000  # a 1 MB write is a normal call
    calls = [("write", {"path": "big.txt", "content": content}),
             ("edit", {"path": "big.txt", "old_string": "first\n", "new_string": "one\n"}),
             ("read", {"path": "big.txt", "limit": 2})]
    for tool, args in calls:
        result = await run.call(tool, args)
        assert result.ok, result.text
    entries = run.transcript.to_json()
    assert [(e["tool"], e["args"], e["args_omitted_bytes"]) for e in entries] == [
        (tool, args, None) for tool, args in calls]
    assert run.transcript.dropped == 0 and run.describe()["transcript_dropped"] == 0
    assert entries[2]["text"].startswith("1\tone")


async def test_past_the_byte_bound_the_oldest_calls_are_dropped(runtime_factory, root):
    # Each write keeps a bit over 5,000 bytes: three fit in 20,000, a fourth does not.
    runtime = runtime_factory(max_transcript_bytes=20_000)
    run = await runtime.create_run()
    await write_files(run, 10)
    kept = run.transcript.to_json()
    assert [e["args"]["path"] for e in kept] == ["f7.txt", "f8.txt", "f9.txt"]
    assert all(e["args"]["content"] == "x" * CONTENT_CHARS for e in kept)
    assert run.transcript.dropped == 7 and run.describe()["transcript_dropped"] == 7
    assert 3 * CONTENT_CHARS < run.transcript.held_bytes <= 20_000
    assert all((root / f"f{number}.txt").stat().st_size == CONTENT_CHARS for number in range(10))


async def test_characters_beyond_latin_count_the_bytes_they_hold(runtime_factory):
    # 2,500 emoji hold 10,000 bytes (4 a character): two such writes fit in 25,000, not nine.
    runtime = runtime_factory(max_transcript_bytes=25_000)
    run = await runtime.create_run()
    await write_files(run, 9, chars=2_500, char="\N{GRINNING FACE}")
    assert [e["args"]["path"] for e in run.transcript.to_json()] == ["f7.txt", "f8.txt"]
    assert 20_000 < run.transcript.held_bytes <= 25_000


async def test_past_the_entry_bound_drops_are_counted_too(runtime_factory):
    runtime = runtime_factory(max_transcript_entries=4)
    run = await runtime.create_run()
    await write_files(run, 6, chars=10)
    assert [e["args"]["path"] for e in run.transcript.to_json()] == [
        "f2.txt", "f3.txt", "f4.txt", "f5.txt"]
    assert run.transcript.dropped == 2


async def test_a_call_dropped_while_it_runs_adds_nothing_when_it_ends(runtime_factory, root):
    runtime = runtime_factory(max_transcript_entries=2, max_transcript_bytes=3_000)
    run = await runtime.create_run()
    (root / "a.txt").write_text("a\n")
    # Prints 2,000 characters (what a text keeps), once the reads below have pushed it out.
    waiting = asyncio.ensure_future(run.call("bash", {
        "command": "while [ ! -e go ]; do sleep 0.05; done; head -c 2000 /dev/zero | tr '\\0' z"}))
    while not run.transcript.entries():
        await asyncio.sleep(0.01)
    for _ in range(3):
        assert (await run.call("read", {"path": "a.txt"})).ok
    (root / "go").touch()
    assert (await waiting).text.startswith("z" * 2_000)
    assert [e["tool"] for e in run.transcript.to_json()] == ["read", "read"]
    assert run.transcript.held_bytes < 500  # the two reads only: nothing of the bash call
    assert (await run.call("read", {"path": "a.txt"})).ok
    assert run.transcript.dropped == 3  # by count, not by phantom bytes


async def test_a_call_larger_than_the_bound_is_kept_without_its_arguments(runtime_factory, root):
    runtime = runtime_factory(max_transcript_bytes=20_000)
    run = await runtime.create_run()
    await write_files(run, 2)
    result = await run.call("write", {"path": "huge.txt", "content": "y" * 50_000})
    assert result.ok and (root / "huge.txt").stat().st_size == 50_000  # the call had them all
    *earlier, huge = run.transcript.to_json()
    assert huge["args"] == {} and huge["args_omitted_bytes"] > 50_000
    assert (huge["label"], huge["ok"]) == ("write huge.txt", True)
    # What the huge call holds is small, so the calls before it stay.
    assert [e["args"]["path"] for e in earlier] == ["f0.txt", "f1.txt"]
    assert run.transcript.dropped == 0


async def test_replay_refuses_a_call_recorded_without_its_arguments(runtime_factory):
    runtime = runtime_factory(max_transcript_bytes=20_000)
    recorded = await runtime.create_run()
    await recorded.call("read", {"path": "."})
    await recorded.call("write", {"path": "huge.txt", "content": "y" * 50_000})
    entries = recorded.transcript.to_json()

    fresh = await runtime.create_run()
    with pytest.raises(UnreplayableTranscript) as refused:
        await replay(entries, fresh.call)
    message = str(refused.value)
    assert "cannot be replayed" in message and "[2] write 'write huge.txt'" in message
    assert "c.Runtime.max_transcript_bytes" in message
    assert fresh.transcript.to_json() == []  # refused before any call was re-issued


async def test_a_notebook_change_keeps_its_data_for_front_ends_and_other_tools_none(runtime, root):
    (root / "nb.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook()))
    run = await runtime.create_run()
    inserted = await run.call("notebook", {"action": "insert", "path": "nb.ipynb",
                                           "source": "x = 1"})
    assert inserted.ok, inserted.text
    assert (await run.call("read", {"path": "nb.ipynb"})).ok
    notebook_entry, read_entry = run.transcript.to_json()
    assert notebook_entry["data"] == inserted.data
    assert notebook_entry["data"]["change_id"] and notebook_entry["data"]["cells"][0]["cell"] == 1
    assert read_entry["data"] is None  # read's data is not the transcript's to keep
