"""Memory returns (issue 46): a real server's process tree after runs end or idle.

Measured, not mocked: a `jupyter server` with the extension in a child process, its process
tree's resident memory (RSS, psutil) sampled before, during and after a mixed run. The
margins are memory margins, generous for a noisy shared machine; nothing here asserts a time.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from memory_helpers import (
    DESCRIPTION,
    EMPTY_NOTEBOOK,
    MIB,
    RETURN_MARGIN,
    TY,
    WORKER,
    children,
    command_lines,
    kernels,
    project,
    server_pid,
    tree_rss,
    wait_for,
)

from jupyter_agent_tools.testing.server import JupyterServerProcess


@pytest.fixture
def released_server(tmp_path):
    project(tmp_path)
    with JupyterServerProcess(tmp_path, extra_args=[
            "--Runtime.idle_release_seconds=2",
            "--DebugSupervisor.spare_adapter_seconds=600"]) as server:
        yield server


def test_memory_returns_after_a_mixed_run(released_server):
    server = released_server
    pid = server_pid(server)
    client = server.client()
    client.status()
    time.sleep(1)
    idle = tree_rss(pid)
    assert not children(pid), command_lines(pid)

    run = client.create_run(conversation_id="memory")
    time.sleep(1)
    assert not children(pid), f"creating a run started {command_lines(pid)}"

    wrote = run.call("write", {"path": "bad.py", "content": "x: int = 'no'\n"})
    assert wrote.ok and wrote.data["diagnostics"]["new"], wrote.text  # the first write's, too
    hover = run.call("lsp", {"action": "hover", "file": "app.py", "line": 4, "symbol": "total"})
    assert hover.ok, hover.text
    evaluated = run.call("eval", {"code": "sum(range(10))", "description": DESCRIPTION})
    assert evaluated.ok and "45" in evaluated.text, evaluated.text
    found = run.call("ast_grep", {"pattern": "return $A * 2", "language": "python",
                                  "max_results": 5})
    assert found.ok and found.data["total"] >= 400, found.text
    launched = run.call("debug", {"action": "launch", "program": "app.py"})
    assert launched.ok, launched.text
    run.call("debug", {"action": "terminate"})
    (server.root_dir / "n.ipynb").write_text(EMPTY_NOTEBOOK)
    ran = run.call("notebook", {"action": "insert", "path": "n.ipynb", "run": True,
                                "source": "print(6 * 7)"})
    assert ran.ok and "42" in ran.text, ran.text  # a session of the notebook's own started
    peak = tree_rss(pid)
    started = command_lines(pid)
    assert any("ty" in line for line in started), started  # the write's diagnostics
    assert peak > idle + 100 * MIB, (idle // MIB, peak // MIB)  # the run did hold memory

    run.close()
    returned = wait_for(lambda: not children(pid) and tree_rss(pid) < idle + RETURN_MARGIN)
    after = tree_rss(pid)
    print(f"\nserver tree RSS: idle {idle // MIB} MiB, peak {peak // MIB} MiB, "
          f"after release {after // MIB} MiB")
    assert returned, (f"idle {idle // MIB} MiB, after {after // MIB} MiB; still running: "
                      f"{command_lines(pid)}")


def test_idle_runs_give_back_their_servers_and_workers(released_server):
    """A run left open but idle: the search workers, the warm kernel and the language
    servers stop; the run's own kernel (its variables) stays, and everything works again."""
    server = released_server
    pid = server_pid(server)
    client = server.client()
    run = client.create_run()
    assert run.call("eval", {"code": "kept = 41", "description": DESCRIPTION}).ok
    assert run.call("ast_grep", {"pattern": "return $A * 2", "language": "python",
                                 "path": "pkg/m1.py"}).ok
    assert run.call("write", {"path": "ok.py", "content": "y = 1\n"}).ok
    running = command_lines(pid)
    assert any(WORKER in line for line in running), running
    assert any(TY in line for line in running), running
    assert wait_for(lambda: len(kernels(pid)) == 2)  # the run's, and the warm one refilled

    def given_back() -> bool:
        lines = command_lines(pid)
        return (not any(WORKER in line or TY in line for line in lines)
                and len(kernels(pid)) == 1)

    assert wait_for(given_back), command_lines(pid)
    again = run.call("eval", {"code": "kept + 1", "description": DESCRIPTION})
    assert again.ok and "42" in again.text, again.text  # the run's own kernel was kept
    found = run.call("ast_grep", {"pattern": "return $A * 2", "language": "python",
                                  "path": "pkg/m1.py"})
    assert found.ok and found.data["total"] == 200, found.text
    wrote = run.call("write", {"path": "bad.py", "content": "x: int = 'no'\n"})
    assert wrote.ok and wrote.data["diagnostics"]["new"], wrote.text  # ty started again
    run.close()


def test_an_http_run_idles_out(tmp_path):
    project(tmp_path, files=1)
    with JupyterServerProcess(tmp_path, extra_args=[
            "--Runtime.run_idle_timeout_seconds=3", "--Runtime.idle_release_seconds=2",
            "--KernelFactory.warm_pool={}"]) as server:
        pid = server_pid(server)
        client = server.client()
        run = client.create_run()
        assert run.call("eval", {"code": "1 + 1", "description": DESCRIPTION}).ok
        assert children(pid)  # its kernel
        assert wait_for(lambda: not children(pid)), command_lines(pid)
        ended = httpx.get(f"{server.url.rstrip('/')}/agent-tools/api/runs/{run.id}",
                          headers={"Authorization": f"token {server.token}"}, timeout=30)
        assert ended.json().get("ended_by") == "idle", ended.text


def test_notebook_insert_does_not_start_basedpyright(tmp_path):
    """basedpyright is installed (it serves `lsp`), yet a notebook insert's diagnostics come
    from ty, and no basedpyright process starts."""
    project(tmp_path, files=1)
    (tmp_path / "n.ipynb").write_text(
        '{"cells": [], "metadata": {"kernelspec": {"name": "python3", "language": "python",'
        ' "display_name": "Python 3"}, "language_info": {"name": "python"}}, "nbformat": 4,'
        ' "nbformat_minor": 5}')
    with JupyterServerProcess(tmp_path) as server:
        pid = server_pid(server)
        servers = server.client().status()["resources"]["lsp"]["servers"]
        if not servers["basedpyright"]["available"]:
            pytest.skip("basedpyright is not installed: nothing to keep from starting")
        run = server.client().create_run()
        inserted = run.call("notebook", {"action": "insert", "path": "n.ipynb",
                                         "source": "x: int = 'no'\n"})
        assert inserted.ok, inserted.text
        files = inserted.data["diagnostics"]["files"]
        assert files and all(f["status"] == "ok" for f in files.values()), inserted.text
        assert inserted.data["diagnostics"]["new"], inserted.text
        started = command_lines(pid)
        assert not any("basedpyright" in line for line in started), started
        assert any("ty" in line for line in started), started
        wrote = run.call("write", {"path": "w.py", "content": "z: str = 1\n"})
        assert wrote.ok and wrote.data["diagnostics"]["new"], wrote.text
        assert not any("basedpyright" in line for line in command_lines(pid))
        run.close()


PARSER = "jupyter_agent_tools.structural.provider:ParserProvider"


async def test_nothing_is_released_while_a_call_runs(runtime_factory, root):
    """The idle timer waits for calls in flight: a search worker stays up under a long `bash`,
    and stops once every run has been idle for idle_release_seconds."""
    (root / "a.py").write_text("print(1)\n")
    runtime = runtime_factory(resource_providers=[PARSER], idle_release_seconds=0.5,
                              run_idle_timeout_seconds=0)
    pool = runtime.provider("parser").pool
    run = await runtime.create_run()
    assert not any(worker.alive() for worker in pool.workers)  # creating a run started none
    assert (await run.call("ast_grep", {"pattern": "print($A)", "path": "a.py"})).ok
    alive = [worker.pid for worker in pool.workers if worker.alive()]
    assert alive
    slow = await run.call("bash", {"command": "sleep 7"})
    assert slow.ok, slow.text
    # 7 s of a call in flight, past the 0.5 s (and the 5 s look): the worker was left alone.
    assert [worker.pid for worker in pool.workers if worker.alive()] == alive
    for _ in range(300):  # then idle: released within a look or two (bounded poll)
        if not any(worker.alive() for worker in pool.workers):
            break
        await asyncio.sleep(0.1)
    assert not any(worker.alive() for worker in pool.workers)
    assert runtime.runs  # an idle run stays open (run_idle_timeout_seconds is 0 here)
    assert (await run.call("ast_grep", {"pattern": "print($A)", "path": "a.py"})).ok
