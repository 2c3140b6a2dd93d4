"""Eval in the user's kernel: a run borrows a notebook's kernel of a real Jupyter server.

The "user" is a second client of the kernel connected as JupyterLab's notebook is: through
the server's kernel websocket. It runs its own cells there and sees every message the
kernel sends it.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import nbformat
import pytest
from jupyter_client.jsonutil import json_default
from jupyter_client.session import Session

from jupyter_agent_tools.kernels.protocol import STDIN_PREFIX
from jupyter_agent_tools.runtime import Resource, ToolError

WAIT = 60  # seconds: a bound on waits that should end soon, never an assertion


def cell(code: str, **more: object) -> dict:
    return {"code": code, "description": "work on the user's data frame", **more}


class NotebookClient:
    """The notebook's own connection to its kernel, as JupyterLab opens it (a websocket)."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket
        self.session = Session()
        self.received: list[dict[str, Any]] = []
        self._replies: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._started: dict[str, asyncio.Event] = {}
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        while (text := await self.socket.read_message()) is not None:
            msg = json.loads(text)
            self.received.append(msg)
            parent = msg["parent_header"].get("msg_id", "")
            if msg["msg_type"] == "execute_input" and parent in self._started:
                self._started[parent].set()
            future = self._replies.get(parent)
            if msg["channel"] == "shell" and future is not None and not future.done():
                future.set_result(msg)

    def execute(self, code: str) -> asyncio.Future[dict[str, Any]]:
        """Send a cell as the notebook does; the future is its execute_reply (`started`
        tells when the kernel began running it)."""
        msg = self.session.msg("execute_request", {
            "code": code, "silent": False, "store_history": True, "user_expressions": {},
            "allow_stdin": True, "stop_on_error": True,
        })
        msg_id = msg["header"]["msg_id"]
        future = self._replies[msg_id] = asyncio.get_running_loop().create_future()
        self._started[msg_id] = asyncio.Event()
        self.socket.write_message(json.dumps({**msg, "channel": "shell"}, default=json_default))
        return future

    async def running(self, code: str) -> asyncio.Future[dict[str, Any]]:
        """Send a cell and return once the kernel is running it."""
        future = self.execute(code)
        started = next(msg_id for msg_id, f in self._replies.items() if f is future)
        await asyncio.wait_for(self._started[started].wait(), WAIT)
        return future

    async def run(self, code: str) -> dict[str, Any]:
        return (await asyncio.wait_for(self.execute(code), WAIT))["content"]

    async def close(self) -> None:
        self._reader.cancel()
        self.socket.close()


@pytest.fixture
def runtime(jp_serverapp):
    """The hosted runtime of the server under test."""
    return jp_serverapp.web_app.settings["agent_tools_runtime"]


@pytest.fixture
def connect(jp_ws_fetch, jp_asyncio_loop):
    """`await connect(kernel_id)` → a NotebookClient: a connection to the kernel as
    JupyterLab opens one for a notebook or console (the server's kernel websocket)."""
    clients: list[NotebookClient] = []

    async def connect_(kernel_id: str) -> NotebookClient:
        client = NotebookClient(await jp_ws_fetch("api", "kernels", kernel_id, "channels"))
        clients.append(client)
        return client

    yield connect_
    for client in clients:
        jp_asyncio_loop.run_until_complete(client.close())


@pytest.fixture
def open_notebook(jp_fetch, jp_root_dir, connect):
    """`await open_notebook("analysis.ipynb")` → (kernel id, its NotebookClient): the
    notebook written with nbformat, its session started and its kernel connected as
    JupyterLab does when the user opens it."""

    async def open_(path: str) -> tuple[str, NotebookClient]:
        notebook = nbformat.v4.new_notebook()
        notebook.cells.append(nbformat.v4.new_code_cell("rows = [3, 1, 2]"))
        (jp_root_dir / path).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, jp_root_dir / path)
        response = await jp_fetch("api", "sessions", method="POST", body=json.dumps(
            {"path": path, "name": path, "type": "notebook", "kernel": {"name": "python3"}}))
        kernel_id = json.loads(response.body)["kernel"]["id"]
        return kernel_id, await connect(kernel_id)

    return open_


async def test_a_run_works_on_the_notebooks_variables(runtime, open_notebook, jp_root_dir,
                                                      jp_serverapp):
    (jp_root_dir / "data.csv").write_text("a,b\n1,2\n")
    kernel_id, notebook = await open_notebook("analysis.ipynb")
    assert (await notebook.run("rows = [3, 1, 2]\nimport os\nhome = os.getcwd()"))["status"] == "ok"

    run = await runtime.create_run(notebook="analysis.ipynb")
    described = run.describe()
    assert (described["kernel_id"], described["notebook"]) == (kernel_id, "analysis.ipynb")
    status = await runtime.status()
    assert status["resources"]["kernels"]["user_kernels"] == [
        {"kernel_id": kernel_id, "notebook": "analysis.ipynb", "run_id": run.id}]

    seen = await run.call("eval", cell("sorted(rows)"))
    assert seen.ok and seen.text == "[1, 2, 3]", seen.text
    assert seen.data["kernel_id"] == kernel_id and seen.data["user_kernel"] is True
    assert seen.data["notebook"] == "analysis.ipynb"

    # tool() from a cell in the user's kernel: the run's tools, in the user's working directory.
    bridged = await run.call("eval", cell(
        "import os\nsummary = {'rows': len(rows), 'csv': tool('read', {'path': 'data.csv'}).text}\n"
        "print(os.getcwd() == home, '1,2' in summary['csv'])"))
    assert bridged.ok and bridged.text.strip() == "True True", bridged.text
    assert [(e.tool, e.origin) for e in run.transcript.entries()][-1] == ("read", "cell")

    # The notebook shares the agent's results, but not its bridge: stdin traffic reached only
    # the run's own connection, and tool() in a notebook cell is refused, not routed.
    assert (await notebook.run("assert summary['rows'] == 3"))["status"] == "ok"
    assert not [m for m in notebook.received if m["channel"] == "stdin"]
    assert STDIN_PREFIX not in json.dumps([m["content"] for m in notebook.received])
    refused = await notebook.run("tool('read', {'path': 'data.csv'})")
    assert refused["ename"] == "ToolError" and "eval" in refused["evalue"], refused
    assert [e.tool for e in run.transcript.entries()].count("read") == 1

    reset = await run.call("eval", cell("1", reset=True))
    assert reset.code == "invalid_arguments" and "reset is refused" in reset.error["message"]

    await runtime.close_run(run.id)
    kernel = jp_serverapp.kernel_manager.get_kernel(kernel_id)
    assert await kernel.is_alive()
    after = await notebook.run("assert sorted(rows) == [1, 2, 3] and 'tool' not in dir()")
    assert after["status"] == "ok", after
    assert runtime.provider("kernels")._borrowed == {}


async def test_a_cell_waits_for_the_users_running_cell(runtime, connect, jp_fetch):
    # A kernel started from JupyterLab's launcher (no notebook), used from its console.
    response = await jp_fetch("api", "kernels", method="POST", body=json.dumps({"name": "python3"}))
    kernel_id = json.loads(response.body)["id"]
    user = await connect(kernel_id)
    run = await runtime.create_run(kernel_id=kernel_id)
    assert run.describe()["notebook"] is None
    assert (await run.call("eval", cell("import time"))).ok

    # The user's cell runs first; the agent's waits for it, then sees what it made.
    users_cell = await user.running("import time\ntime.sleep(2)\nmade = 'by the user'")
    queued = await run.call("eval", cell("made"))
    assert queued.ok and queued.text == "'by the user'", queued.text
    assert (await asyncio.wait_for(users_cell, WAIT))["content"]["status"] == "ok"

    # Busy longer than the eval's budget: the agent's cell never runs, and the user's is not
    # interrupted. (A run's limits are fixed when it is created: this one gets new ones.)
    interpreters = run.resources[Resource.KERNELS]
    interpreters.limits = replace(interpreters.limits, idle_timeout_seconds=1.0)
    users_cell = await user.running("time.sleep(6)\nfinished = True")
    busy = await run.call("eval", cell("agent_ran = True"))
    assert busy.code == "timeout" and "busy running another cell" in busy.error["message"], busy
    assert (await asyncio.wait_for(users_cell, WAIT))["content"]["status"] == "ok"
    interpreters.limits = replace(interpreters.limits, idle_timeout_seconds=30.0)
    check = await run.call("eval", cell("print(finished, 'agent_ran' in dir())"))
    assert check.text.strip() == "True False", check.text


async def test_the_permission_card_names_the_kernel_and_notebook(runtime, open_notebook):
    kernel_id, _ = await open_notebook("work/analysis.ipynb")
    run = await runtime.create_run(cwd="work", notebook="analysis.ipynb", approvals="ask",
                                   space="lab")
    assert run.describe()["notebook"] == "work/analysis.ipynb"
    human = await runtime.connect_human("lab")
    try:
        call = asyncio.ensure_future(run.call("eval", cell("rows.append(4)")))
        card = await human.next_card(timeout=WAIT)
        assert kernel_id in card["context"] and "work/analysis.ipynb" in card["context"], card
        assert card["tool"] == "eval" and card["tier"] == "exec"
        await human.answer(card["id"], answer="Deny")
        assert (await call).code == "permission_denied"
    finally:
        await human.close()


async def test_the_options_are_checked_when_the_run_is_created(runtime, open_notebook,
                                                               jp_root_dir):
    kernel_id, _ = await open_notebook("analysis.ipynb")
    nbformat.write(nbformat.v4.new_notebook(), jp_root_dir / "closed.ipynb")
    with pytest.raises(ToolError) as unknown:
        await runtime.create_run(kernel_id="no-such-kernel")
    assert unknown.value.code.value == "not_found" and "api/kernels" in unknown.value.message
    with pytest.raises(ToolError) as closed:
        await runtime.create_run(notebook="closed.ipynb")
    assert closed.value.code.value == "not_found" and "Open it" in closed.value.message
    with pytest.raises(ToolError) as both:
        await runtime.create_run(kernel_id=kernel_id, notebook="analysis.ipynb")
    assert both.value.code.value == "invalid_arguments"
    with pytest.raises(ToolError) as outside:
        await runtime.create_run(notebook="../elsewhere.ipynb")
    assert outside.value.code.value == "path_outside_root"

    first = await runtime.create_run(kernel_id=kernel_id)
    with pytest.raises(ToolError) as taken:
        await runtime.create_run(notebook="analysis.ipynb")
    assert taken.value.code.value == "session_exists" and first.id in taken.value.message
    await runtime.close_run(first.id)
    again = await runtime.create_run(notebook="analysis.ipynb")
    assert again.describe()["kernel_id"] == kernel_id
    assert len(runtime.runs) == 1


async def test_an_embedded_runtime_has_no_users_kernels(kernels_runtime):
    for option in ({"kernel_id": "abc"}, {"notebook": "analysis.ipynb"}):
        with pytest.raises(ToolError) as refused:
            await kernels_runtime.create_run(**option)
        assert refused.value.code.value == "unavailable"
        assert "embedded" in refused.value.message


async def test_a_restarted_or_killed_user_kernel_is_reported_never_replaced(
        runtime, open_notebook, jp_fetch, jp_root_dir):
    (jp_root_dir / "data.csv").write_text("a,b\n1,2\n")
    kernel_id, notebook = await open_notebook("analysis.ipynb")
    assert (await notebook.run("rows = [3, 1, 2]"))["status"] == "ok"
    run = await runtime.create_run(notebook="analysis.ipynb")
    assert (await run.call("eval", cell("agent_value = len(rows)"))).ok
    kernels_before = {k["id"] for k in json.loads((await jp_fetch("api", "kernels")).body)}

    # The user restarts the notebook's kernel from JupyterLab: the next eval reconnects to
    # it (the bridge reinstalled) and says that state was lost.
    await jp_fetch("api", "kernels", kernel_id, "restart", method="POST", body="{}")
    after_restart = await run.call("eval", cell(
        "print('rows' in dir(), 'agent_value' in dir())\n"
        "'1,2' in tool('read', {'path': 'data.csv'}).text"))
    assert after_restart.ok, after_restart.text
    assert after_restart.text.splitlines()[1:] == ["False False", "True"], after_restart.text
    assert "[state lost: the user's kernel" in after_restart.text
    assert after_restart.data["state_lost"] is True and after_restart.data["kernel_id"] == kernel_id

    # A cell kills it: kernel_died, and the run starts no kernel of its own; the server's
    # restarter brings the user's kernel back and the next eval reconnects.
    died = await run.call("eval", cell("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"))
    assert died.code == "kernel_died" and "never starts a replacement" in died.error["message"]
    back = await run.call("eval", cell("print('back')"))
    assert back.ok and back.text.endswith("back"), back.text
    assert back.data["kernel_id"] == kernel_id and back.data["state_lost"] is True
    kernels_after = {k["id"] for k in json.loads((await jp_fetch("api", "kernels")).body)}
    assert kernels_after == kernels_before == {kernel_id}
    assert (await notebook.run("x = 1"))["status"] == "ok"  # the notebook's connection too


async def test_a_stuck_cell_leaves_the_user_kernel_running(runtime, open_notebook, jp_serverapp):
    kernel_id, _ = await open_notebook("analysis.ipynb")
    run = await runtime.create_run(notebook="analysis.ipynb")
    assert (await run.call("eval", cell("kept = 'the user data'"))).ok
    interpreters = run.resources[Resource.KERNELS]
    interpreters.limits = replace(interpreters.limits, idle_timeout_seconds=1.0)
    stuck = await run.call("eval", cell(
        "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(15)"))
    assert stuck.code == "timeout" and "ask the user to interrupt" in stuck.error["message"]
    assert stuck.data["state_lost"] is False
    # An own kernel would have been shut down here; the user's keeps running its cell.
    assert kernel_id in jp_serverapp.kernel_manager.list_kernel_ids()
    assert await jp_serverapp.kernel_manager.get_kernel(kernel_id).is_alive()
