"""tool() inside eval cells: the same Run.call as any call, from Python and JavaScript."""

from __future__ import annotations

import asyncio

WAIT = 60  # seconds: a bound on waits that should end soon, never an assertion


def cell(code: str, description: str = "call tools from inside a cell", **more: object) -> dict:
    return {"code": code, "description": description, **more}


async def test_a_python_cell_reads_through_the_bridge(kernels_runtime, root):
    (root / "notes.txt").write_text("alpha\nbeta\n")
    run = await kernels_runtime.create_run()
    result = await run.call("eval", cell(
        "r = tool('read', {'path': 'notes.txt'})\nprint(type(r).__name__, 'beta' in r.text)\nr.data"))
    assert result.ok, result.text
    assert "ToolResult True" in result.text
    read = [entry for entry in run.transcript.entries() if entry.tool == "read"]
    assert len(read) == 1 and read[0].origin == "cell" and read[0].ok


async def test_a_failing_tool_raises_tool_error_in_the_cell(kernels_runtime):
    run = await kernels_runtime.create_run()
    code = (
        "try:\n    tool('read', {'path': 'missing.txt'})\n"
        "except ToolError as e:\n    print('caught', e.code)\n"
        "try:\n    tool('read', {'nope': 1})\n"
        "except ToolError as e:\n    print('caught', e.code)\n"
        "try:\n    tool('no_such_tool', {})\n"
        "except ToolError as e:\n    print('caught', e.code)\n"
    )
    result = await run.call("eval", cell(code))
    assert result.text.splitlines() == [
        "caught not_found", "caught invalid_arguments", "caught unknown_tool"
    ], result.text
    uncaught = await run.call("eval", cell("tool('read', {'path': '../outside'})"))
    assert uncaught.code == "failed" and "path_outside_root" in uncaught.text


async def test_calls_from_threads_run_concurrently(kernels_runtime, root):
    for i in range(8):
        (root / f"f{i}.txt").write_text(f"file {i}\n")
    run = await kernels_runtime.create_run()
    code = (
        "from concurrent.futures import ThreadPoolExecutor\n"
        "with ThreadPoolExecutor(8) as pool:\n"
        "    texts = list(pool.map(lambda i: tool('read', {'path': f'f{i}.txt'}).text, range(8)))\n"
        "all(f'file {i}' in t for i, t in enumerate(texts))"
    )
    result = await run.call("eval", cell(code))
    assert result.text == "True", result.text


async def test_fast_calls_from_threads_pass_a_slow_one_in_flight(kernels_runtime, root):
    """The thread waiting on a slow call reads replies for the others; none waits behind it."""
    (root / "quick.txt").write_text("quick\n")
    run = await kernels_runtime.create_run()
    code = (
        "import threading, time\n"
        "finished = []\n"
        "slow = threading.Thread(target=lambda: finished.append(\n"
        "    tool('bash', {'command': 'sleep 2; echo slow'}).text.strip()))\n"
        "slow.start(); time.sleep(0.3)\n"
        "quick = [threading.Thread(target=lambda: finished.append(\n"
        "    'quick' if 'quick' in tool('read', {'path': 'quick.txt'}).text else 'wrong')) for _ in range(6)]\n"
        "for t in quick: t.start()\n"
        "for t in [*quick, slow]: t.join()\n"
        "finished"
    )
    result = await run.call("eval", cell(code))
    assert result.ok, result.text
    assert result.text == str(["quick"] * 6 + ["slow"]), result.text


async def test_the_stdin_lane_serves_threads_when_the_socket_is_out_of_reach(kernels_runtime, root):
    """A kernel that cannot reach the server's socket (a gateway's) calls over stdin, where
    the thread waiting on a slow call reads the replies of the others."""
    (root / "quick.txt").write_text("quick\n")
    run = await kernels_runtime.create_run()
    code = (
        "import agent_tools, threading, time\n"
        "agent_tools._bridge.lane.reachable = False\n"
        "finished = []\n"
        "slow = threading.Thread(target=lambda: finished.append(\n"
        "    tool('bash', {'command': 'sleep 1; echo slow'}).text.strip()))\n"
        "slow.start(); time.sleep(0.3)\n"
        "quick = [threading.Thread(target=lambda: finished.append(\n"
        "    'quick' if 'quick' in tool('read', {'path': 'quick.txt'}).text else 'wrong')) for _ in range(4)]\n"
        "for t in quick: t.start()\n"
        "for t in [*quick, slow]: t.join()\n"
        "finished"
    )
    result = await run.call("eval", cell(code))
    assert result.ok, result.text
    assert result.text == str(["quick"] * 4 + ["slow"]), result.text


async def test_the_bridge_socket_refuses_a_connection_without_its_token(kernels_runtime):
    run = await kernels_runtime.create_run()
    code = (
        "import agent_tools, json, socket, struct\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "s.settimeout(30)\n"
        "s.connect(agent_tools._bridge.lane.path)\n"
        "frame = lambda b: struct.pack('>I', len(b)) + b\n"
        "s.sendall(frame(b'0' * 32) + frame(json.dumps({'id': 1, 'name': 'read', "
        "'args': {'path': 'x'}}).encode()))\n"
        "print(repr(s.recv(100)))\n"
        "print(tool('bash', {'command': 'echo fine'}).text.strip())"
    )
    result = await run.call("eval", cell(code))
    assert result.text.splitlines() == ["b''", "fine"], result.text


async def test_a_forked_child_of_a_cell_calls_on_a_connection_of_its_own(kernels_runtime, root):
    """A child forked after the cell's thread connected does not share (and garble) it."""
    (root / "f.txt").write_text("forked\n")
    run = await kernels_runtime.create_run()
    code = (
        "import os, agent_tools\n"
        "tool('read', {'path': 'f.txt'})\n"
        "lane = agent_tools._bridge.lane.local\n"
        "r, w = os.pipe()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    try:\n"
        "        text = tool('read', {'path': 'f.txt'}).text\n"
        "        os.write(w, b'1' if 'forked' in text and lane.pid == os.getpid() else b'0')\n"
        "    finally:\n"
        "        os._exit(0)\n"
        "os.close(w)\n"
        "os.waitpid(pid, 0)\n"
        "print(os.read(r, 1), 'forked' in tool('read', {'path': 'f.txt'}).text)"
    )
    result = await run.call("eval", cell(code))
    assert result.text == "b'1' True", result.text


async def test_input_in_a_python_cell_fails_at_once_and_the_bridge_still_works(kernels_runtime, root):
    (root / "after.txt").write_text("still here\n")
    run = await kernels_runtime.create_run()
    code = (
        "try:\n    input('name? ')\nexcept Exception as e:\n    print(type(e).__name__)\n"
        "print(tool('read', {'path': 'after.txt'}).text.strip().endswith('still here'))"
    )
    result = await run.call("eval", cell(code))
    assert result.text.splitlines() == ["StdinNotImplementedError", "True"], result.text


async def test_nested_calls_across_languages(kernels_runtime, root):
    (root / "n.txt").write_text("nested ok\n")
    run = await kernels_runtime.create_run()
    code = (
        "inner = tool('eval', {'language': 'javascript', 'description': 'read a file from the "
        "javascript side', 'code': \"tool('read', {path: 'n.txt'}).text\"})\n"
        "print(inner.text)\n"
        "try:\n    tool('eval', {'code': '1', 'description': 'python inside python is refused'})\n"
        "except ToolError as e:\n    print('refused', e.code)\n"
        "back = tool('eval', {'language': 'javascript', 'description': 'call python back from "
        "javascript, refused', 'code': \"try { tool('eval', {code: '1', description: 'a python "
        "cell inside the javascript cell'}) } catch (e) { e.code }\"})\n"
        "print('back', back.text)\n"
    )
    result = await run.call("eval", cell(code))
    assert result.ok, result.text
    assert "nested ok" in result.text and "refused invalid_arguments" in result.text
    assert 'back "invalid_arguments"' in result.text
    origins = [(entry.tool, entry.origin) for entry in run.transcript.entries()]
    # Same-language evals from a cell are refused at once (they would wait on their own cell),
    # and recorded like any other call.
    assert origins == [("eval", "api"), ("eval", "cell"), ("read", "cell"), ("eval", "cell"),
                       ("eval", "cell"), ("eval", "cell")]
    refused = [e for e in run.transcript.entries() if e.error_code == "invalid_arguments"]
    assert len(refused) == 2


async def test_a_javascript_cell_calls_tools(kernels_runtime, root):
    (root / "js.txt").write_text("from deno\n")
    run = await kernels_runtime.create_run()
    code = (
        "const r = tool('read', {path: 'js.txt'});\n"
        "let code = 'none';\n"
        "try { tool('read', {path: 'missing.txt'}); } catch (e) { code = e instanceof ToolError ? e.code : 'other'; }\n"
        "const typed = prompt('a prompt of the cell itself');\n"
        "[r.text.includes('from deno'), code, typed]"
    )
    result = await run.call("eval", cell(code, language="javascript"))
    assert result.ok, result.text
    assert result.text.replace(" ", "") == '[true,"not_found",""]'


async def test_a_slow_bridge_call_stops_the_idle_clock(make_runtime):
    run = await make_runtime(idle_timeout_seconds=1.5).create_run()
    assert (await run.call("eval", cell("'warm'"))).ok  # the kernel is up before the clock matters
    code = "r = tool('bash', {'command': 'sleep 3.5; echo slept'})\nr.text"
    result = await run.call("eval", cell(code))
    assert result.ok, result.text
    assert "slept" in result.text


async def test_an_ask_run_shows_the_permission_card_for_a_cell_call(kernels_runtime, root):
    run = await kernels_runtime.create_run(space="lab", approvals="ask")
    code = (
        "tool('write', {'path': 'allowed.txt', 'content': 'yes'})\n"
        "try:\n    tool('write', {'path': 'denied.txt', 'content': 'no'})\n"
        "except ToolError as e:\n    print('denied', e.code)\n"
    )
    async with await kernels_runtime.connect_human("lab") as human:
        call = asyncio.ensure_future(run.call("eval", cell(code)))
        card = await human.next_card(timeout=WAIT)
        assert card["tool"] == "eval"
        await human.answer(card["id"], answer="Allow once")
        card = await human.next_card(timeout=WAIT)
        assert card["kind"] == "permission" and card["tool"] == "write"
        assert card["args"]["path"] == "allowed.txt"
        await human.answer(card["id"], answer="Allow once")
        card = await human.next_card(timeout=WAIT)
        assert card["args"]["path"] == "denied.txt"
        await human.answer(card["id"], answer="Deny")
        result = await asyncio.wait_for(call, WAIT)
    assert result.ok, result.text
    assert "denied permission_denied" in result.text
    assert (root / "allowed.txt").read_text() == "yes" and not (root / "denied.txt").exists()


async def test_a_plan_run_cannot_reach_eval_or_write_tools(kernels_runtime):
    plan = await kernels_runtime.create_run(surface="plan")
    assert "eval" not in plan.tool_names() and "write" not in plan.tool_names()
    assert (await plan.call("eval", cell("tool('write', {})"))).code == "unknown_tool"


async def test_a_bridge_call_past_its_timeout_stops_the_inner_cell(make_runtime):
    run = await make_runtime(bridge_timeout_seconds=1.0).create_run()
    assert (await run.call("eval", cell("var j = 3", language="javascript"))).ok
    code = (
        "try:\n    tool('eval', {'language': 'javascript', 'code': 'while (true) {}',\n"
        "                  'description': 'spin forever in the other kernel'})\n"
        "except ToolError as e:\n    print('inner', e.code)\n"
    )
    result = await run.call("eval", cell(code))
    assert result.text == "inner timeout", result.text
    # The abandoned cell was interrupted: the JavaScript interpreter is usable, state kept.
    assert (await run.call("eval", cell("j", language="javascript"))).text == "3"


async def test_a_request_over_the_frame_bound_takes_the_stdin_lane(make_runtime, root):
    run = await make_runtime(max_bridge_frame_bytes=4096).create_run()
    code = (
        "import agent_tools, socket, struct\n"
        "lane = agent_tools._bridge.lane\n"
        "print(lane.max_bytes)\n"
        "tool('write', {'path': 'big.txt', 'content': 'x' * 10_000})\n"
        "print(open('big.txt').read() == 'x' * 10_000)\n"
        # The server closes a socket connection that announces a frame over the bound.
        "s = socket.socket(socket.AF_UNIX)\n"
        "s.settimeout(30)\n"
        "s.connect(lane.path)\n"
        "s.sendall(struct.pack('>I', len(lane.token)) + lane.token + struct.pack('>I', 5000))\n"
        "print(repr(s.recv(100)))\n"
        "print(tool('bash', {'command': 'echo fine'}).text.strip())"
    )
    result = await run.call("eval", cell(code))
    assert result.text.splitlines() == ["4096", "True", "b''", "fine"], result.text
    write = [entry for entry in run.transcript.entries() if entry.tool == "write"]
    assert len(write) == 1 and write[0].ok and write[0].origin == "cell"
