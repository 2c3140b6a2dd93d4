"""Misbehaving servers answer with clear errors within their timeouts, and never linger."""

from __future__ import annotations

from lsp_projects import PY_FILES, broken_spec, pid_alive

BROKEN = {"broken.toml": "", "a.brk": "symbol here\n"}


async def test_hang_at_initialize_is_unavailable_within_the_timeout(lsp_runtime, write_files):
    write_files(BROKEN, "proj")
    runtime = lsp_runtime(language_servers={"broken": broken_spec("hang")}, initialize_timeout_seconds=2.0)
    run = await runtime.create_run(cwd="proj")
    result = await run.call("lsp", {"action": "hover", "file": "a.brk", "line": 1,
                                    "symbol": "symbol"})
    assert result.code == "unavailable"
    assert "did not answer initialize within 2s" in result.error["message"]
    assert "action=reload" in result.error["message"]
    status = await run.call("lsp", {"action": "status", "file": "a.brk"})
    (entry,) = status.data["servers"]
    assert not entry["running"] and "initialize failed" in entry["last_error"]
    written = await run.call("write", {"path": "a.brk", "content": "changed\n"})
    assert written.ok and "No diagnostics for a.brk" not in written.text
    assert "broken is stopped after an error" in written.text  # no second 2 s wait


async def test_crash_mid_request_is_a_clear_error_and_restarts(lsp_runtime, write_files):
    write_files(BROKEN, "proj")
    runtime = lsp_runtime(language_servers={"broken": broken_spec("crash")})
    run = await runtime.create_run(cwd="proj")
    args = {"action": "hover", "file": "a.brk", "line": 1, "symbol": "symbol"}
    result = await run.call("lsp", args)
    assert result.code == "unavailable"
    assert "broken exited with status 3" in result.error["message"]
    assert "fatal: hover exploded" in result.error["message"]  # the stderr tail
    again = await run.call("lsp", args)  # restarted lazily, crashes again, still clear
    assert again.code == "unavailable" and "exited with status 3" in again.error["message"]
    status = await run.call("lsp", {"action": "status", "file": "a.brk"})
    assert status.data["servers"][0]["restarts"] == 1
    written = await run.call("write", {"path": "a.brk", "content": "saved\n"})  # dies on save
    assert written.ok and "broken exited with status 3" in written.text
    assert "fatal: save exploded" in written.text


async def test_chatty_stderr_and_unparseable_capabilities_do_not_block(lsp_runtime, write_files):
    write_files(BROKEN, "proj")
    runtime = lsp_runtime(language_servers={"broken": broken_spec("chatty")})
    run = await runtime.create_run(cwd="proj")
    for _ in range(3):  # 2 MB of stderr per message would fill an unread pipe at once
        result = await run.call("lsp", {"action": "hover", "file": "a.brk", "line": 1,
                                        "symbol": "symbol"})
        assert result.ok and result.text == "a fixture symbol"
    pid = (await run.call("lsp", {"action": "status", "file": "a.brk"})).data["servers"][0]["pid"]
    await runtime.close_run(run.id)
    assert not pid_alive(pid)


async def test_published_diagnostics_are_awaited_and_pending_is_not_clean(lsp_runtime, write_files):
    write_files(BROKEN, "proj")
    write_files(BROKEN, "quiet")
    runtime = lsp_runtime(diagnostics_timeout_seconds=1.0, language_servers={
        "broken": broken_spec("chatty"),
        "mute": {**broken_spec("mute"), "root_markers": ["mute.toml"]},
    })
    (write_files({"mute.toml": ""}, "quiet") / "broken.toml").unlink()
    run = await runtime.create_run()
    first = await run.call("write", {"path": "proj/a.brk", "content": "first problem\n"})
    assert [d["message"] for d in first.data["diagnostics"]["new"]] == ["first problem"]
    moved = await run.call("write", {"path": "proj/a.brk", "content": "first problem\nmore\n"})
    assert moved.data["diagnostics"]["new"] == []
    second = await run.call("write", {"path": "proj/a.brk", "content": "second problem\n"})
    assert [d["message"] for d in second.data["diagnostics"]["new"]] == ["second problem"]

    pending = await run.call("write", {"path": "quiet/a.brk", "content": "x\n"})
    assert pending.ok
    assert pending.data["diagnostics"]["files"]["quiet/a.brk"]["status"] == "pending"
    assert "mute did not report in time" in pending.text
    listed = await run.call("lsp", {"action": "diagnostics", "file": "quiet/a.brk"})
    assert listed.data["status"] == "pending" and "pending" in listed.text


async def test_one_of_two_servers_failing_shows_what_the_other_said(lsp_runtime, write_files):
    write_files(PY_FILES, "proj")
    # ruff's place taken by a server that never initializes; basedpyright still answers
    hanging = {"command": broken_spec("hang")["command"]}
    runtime = lsp_runtime(language_servers={"ruff": hanging}, initialize_timeout_seconds=2.0)
    run = await runtime.create_run(cwd="proj")
    clean = await run.call("lsp", {"action": "diagnostics", "file": "main.py"})
    assert clean.ok and clean.data["status"] == "clean", clean.text
    assert clean.data["servers"] == ["basedpyright"] and clean.data["failed"] == ["ruff"]
    assert clean.text.startswith("No diagnostics in main.py from basedpyright: clean. ruff failed")
    assert "did not answer initialize within 2s" in clean.text
