"""Searches racing with writers, and a search that must not stall the server."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

from jupyter_agent_tools.files import write_files_atomically
from jupyter_agent_tools.structural import pattern as pattern_module
from jupyter_agent_tools.structural import worker as worker_module


def rewrite_until(stop: threading.Event, folder: Path, names: list[str]) -> int:
    """Atomically rewrite `names` in `folder` (temporary files come and go) until `stop`."""
    rounds = 0
    while not stop.is_set():
        rounds += 1
        write_files_atomically({folder / name: f"print({rounds})\nx = {rounds}\n"
                                for name in names})
    return rounds


async def test_searches_while_files_are_rewritten_never_fail(run, files, root):
    names = [f"m{i}.py" for i in range(20)]
    files({f"pkg/{name}": "print(0)\n" for name in names})
    stop = threading.Event()
    writer = asyncio.create_task(asyncio.to_thread(rewrite_until, stop, root / "pkg", names))
    try:
        results = await asyncio.gather(*(
            run.call("ast_grep", {"pattern": "print($A)", "path": "pkg", "language": "python"})
            for _ in range(60)))
    finally:
        stop.set()
        rounds = await writer
    failures = [r.text for r in results if not r.ok]
    assert failures == []
    assert rounds > 1
    # Every file is found in every search; a temporary file seen in the listing and gone
    # before it was read is counted as vanished, not searched.
    assert all(r.data["total"] == 20 for r in results)


def _compiled_in_the_server_process(pattern: str, language: str) -> None:
    raise AssertionError("a pattern was compiled in the server's process, not in a worker")


async def test_a_huge_pattern_does_not_stall_the_server(api, jp_fetch, jp_root_dir,
                                                        monkeypatch):
    # A tripwire, not a stand-in: the workers are other processes and keep the real
    # compiler; were a pattern compiled on the server's side, these searches would fail.
    monkeypatch.setattr(pattern_module, "compile_pattern", _compiled_in_the_server_process)
    monkeypatch.setattr(worker_module, "compile_pattern", _compiled_in_the_server_process)
    (jp_root_dir / "a.py").write_text("print(1)\n" * 1000)
    _, run = await api("POST", "runs", {"resources": ["parser"]})
    calls = f"runs/{run['id']}/calls"
    done = asyncio.Event()
    waits: list[float] = []

    async def poll_status() -> None:
        while not done.is_set():
            asked = time.monotonic()
            response = await jp_fetch("api", "status")
            assert response.code == 200
            waits.append(time.monotonic() - asked)
            await asyncio.sleep(0.01)

    async def search(pattern: str) -> dict:
        _, result = await api("POST", calls, {"tool": "ast_grep",
                                              "args": {"pattern": pattern, "path": "a.py"}})
        return result

    poller = asyncio.create_task(poll_status())
    try:
        huge, deep, long_ok = await asyncio.gather(
            search("print($A)" * 250_000),  # 2 MB: refused before any parsing
            search("f(" * 4_000 + ")" * 4_000),  # 4,000 levels deep, under the limit
            search("\n".join(["print($A)"] * 1_500)))  # 15 kB, 1,500 statements in a run
    finally:
        done.set()
        await poller
    assert huge["error"]["code"] == "invalid_arguments"
    assert "max_pattern_chars" in huge["error"]["message"]
    assert deep["ok"] and deep["data"]["total"] == 0
    assert long_ok["ok"], long_ok["text"]
    assert long_ok["data"]["total"] == 0
    # Generous: the loop only forwards work; a stalled one would hold a poll for seconds.
    assert waits and max(waits) < 5.0
