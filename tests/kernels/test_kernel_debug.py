"""debug attach_kernel: a real ipykernel's debugger (debugpy) through the Jupyter debug
protocol, driven by eval and notebook run; a Deno kernel has none; one debug client per kernel."""

from __future__ import annotations

import signal

import nbformat
from jupyter_client import AsyncKernelClient
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from jupyter_agent_tools.runtime.tool import Resource

DISCONNECT = ("disconnect", {"restart": False, "terminateDebuggee": False})
FUNCTION = "def double(x):\n    y = x * 2\n\n    return y\n"  # line 3 holds no code


def cell(code: str) -> dict:
    return {"code": code, "description": "run a cell for the debugger test"}


async def call(run, tool: str, **args):
    return await run.call(tool, args)


async def ok(run, tool: str, **args):
    result = await run.call(tool, args)
    assert result.ok, result.error
    return result


async def test_an_eval_stops_at_a_breakpoint_answers_at_once_and_continue_gives_its_output(
        kernels_runtime, root):
    run = await kernels_runtime.create_run(conversation_id="c")
    defined = await ok(run, "eval", **cell(FUNCTION))
    assert defined.data["cell"] == 1
    attached = await ok(run, "debug", action="attach_kernel")
    assert attached.data["state"] == "running" and attached.data["kernel_id"]

    empty = await call(run, "debug", action="breakpoints", cell=1, lines=[3])
    assert empty.code == "invalid_arguments"
    assert "No code on line(s) [3] of eval cell 1" in empty.error["message"]
    assert "Lines with code: 1-2, 4" in empty.error["message"]
    assert (await call(run, "debug", action="breakpoints", cell=9, lines=[1])).code \
        == "invalid_arguments"
    set_ = await ok(run, "debug", action="breakpoints", cell=1, lines=[2])
    assert set_.data["breakpoints"] == [{"line": 2, "verified": True}]

    stopped = await ok(run, "eval", **cell("print('before')\nz = double(21)\nprint(z)\nz"))
    assert stopped.data["status"] == "paused"
    assert stopped.data["stopped"] == {"cell": 1, "line": 2, "source_line": "y = x * 2"}
    assert "Stopped at eval cell 1, line 2" in stopped.text
    assert (await call(run, "eval", **cell("1"))).code == "busy"  # the kernel is paused

    frames = (await ok(run, "debug", action="stack")).data["frames"]
    assert [(f["name"], f.get("cell"), f["line"]) for f in frames[:2]] == [
        ("double", 1, 2), ("<module>", 2, 2)]
    scopes = (await ok(run, "debug", action="scopes", frame_id=frames[0]["id"])).data["scopes"]
    local = (await ok(run, "debug", action="variables",
                      reference=scopes[0]["reference"])).data["variables"]
    assert {"name": "x", "value": "21"}.items() <= local[0].items()
    assert (await ok(run, "debug", action="evaluate", expression="x + 1")).data["result"] == "22"

    stepped = await ok(run, "debug", action="step_over")
    assert stepped.data["stopped"]["line"] == 4
    ended = await ok(run, "debug", action="continue")
    assert ended.data["status"] == "ok" and ended.data["cell"] == 2
    assert "before\n42" in ended.text and ended.data["result"] == "42"

    # A file the kernel runs (imported from the run's folder).
    (root / "helper.py").write_text("def triple(v):\n    w = v * 3\n    return w\n")
    assert (await ok(run, "debug", action="breakpoints", file="helper.py", lines=[2])
            ).data["file"] == "helper.py"
    in_file = await ok(run, "eval", **cell("import helper\nhelper.triple(2)"))
    assert in_file.data["stopped"] == {"file": "helper.py", "line": 2, "source_line": "w = v * 3"}
    assert "6" in (await ok(run, "debug", action="continue")).text

    # Detach while paused: the cell runs on, and the kernel is free again.
    assert (await ok(run, "eval", **cell("double(5)"))).data["status"] == "paused"
    detached = await ok(run, "debug", action="terminate")
    assert "The stopped cell r" in detached.text
    assert (await ok(run, "eval", **cell("double(6)"))).text == "12"


async def test_a_notebook_run_stops_in_a_cell_and_steps(kernels_runtime, root):
    nbformat.write(new_notebook(cells=[
        new_markdown_cell("# debug"),
        new_code_cell("def grow(a):\n    b = a + 1\n    return b\n", id="define"),
        new_code_cell("print(grow(1))", id="use"),
    ]), root / "nb.ipynb")
    run = await kernels_runtime.create_run(conversation_id="c")
    await ok(run, "notebook", action="run", path="nb.ipynb", cell=2)
    await ok(run, "debug", action="attach_kernel", notebook="nb.ipynb")
    set_ = await ok(run, "debug", action="breakpoints", notebook="nb.ipynb", cell="define",
                    lines=[2])
    assert set_.data["cell"] == 2 and set_.data["id"] == "define"
    markdown = await call(run, "debug", action="breakpoints", notebook="nb.ipynb", cell=1,
                          lines=[1])
    assert markdown.code == "invalid_arguments"

    stopped = await ok(run, "notebook", action="run", path="nb.ipynb", cell="use")
    assert stopped.data["stopped"] == {"notebook": "nb.ipynb", "cell": 2, "id": "define",
                                       "line": 2, "source_line": "b = a + 1"}
    stepped = await ok(run, "debug", action="step_over")
    assert stepped.data["frame"]["where"] == "nb.ipynb [cell 2] line 3"
    ended = await ok(run, "debug", action="continue")
    assert ended.data["cells"][0]["status"] == "ok" and "2" in ended.text


async def test_closing_the_run_while_paused_detaches(kernels_runtime):
    run = await kernels_runtime.create_run(conversation_id="c")
    await ok(run, "eval", **cell(FUNCTION))
    cells = await call(run, "debug", action="breakpoints", cell=1, lines=[2])
    assert cells.code == "no_session" and "attach_kernel" in cells.error["message"]
    await ok(run, "debug", action="attach_kernel")
    await ok(run, "debug", action="breakpoints", cell=1, lines=[2])
    await ok(run, "eval", **cell("double(1)"))
    await kernels_runtime.close_run(run.id)
    assert kernels_runtime.provider("debug").conversations == {}


async def test_a_kernel_that_dies_while_paused_is_a_kernel_died_error(kernels_runtime):
    run = await kernels_runtime.create_run(conversation_id="c")
    await ok(run, "eval", **cell(FUNCTION))
    await ok(run, "debug", action="attach_kernel")
    await ok(run, "debug", action="breakpoints", cell=1, lines=[2])
    await ok(run, "eval", **cell("double(1)"))
    kernel = run.resources[Resource.KERNELS].sessions["python"]
    await kernel.handle.manager.get_kernel(kernel.kernel_id).signal_kernel(signal.SIGKILL)
    died = await call(run, "debug", action="continue")
    assert died.code == "kernel_died", died.error
    assert (await ok(run, "eval", **cell("3"))).data["state_lost"]


async def test_deno_has_no_debugger_and_a_second_debug_client_is_refused(kernels_runtime):
    run = await kernels_runtime.create_run(conversation_id="c")
    await ok(run, "eval", code="1", language="javascript",
             description="start the javascript kernel for the test")
    deno = run.resources[Resource.KERNELS].sessions["javascript"]
    refused = await call(run, "debug", action="attach_kernel", kernel_id=deno.kernel_id)
    assert refused.code == "unavailable"
    assert "has no debugger" in refused.error["message"]

    # JupyterLab's debugger, as it starts, from a client of its own (a browser's session).
    await ok(run, "eval", **cell("0"))
    python = run.resources[Resource.KERNELS].sessions["python"]
    lab = AsyncKernelClient()
    lab.load_connection_info(python.handle.manager.get_kernel(python.kernel_id)
                             .get_connection_info())
    lab.start_channels()
    try:
        await lab_requests(lab, ("initialize", {"clientID": "jupyterlab", "adapterID": "python",
                                                "pathFormat": "path", "linesStartAt1": True}),
                           ("attach", {}), ("configurationDone", {}))
        busy = await call(run, "debug", action="attach_kernel")
        assert busy.code == "busy", busy.error
        assert "JupyterLab's debugger" in busy.error["message"]

        # Switched off in JupyterLab (the refusal left its debugger alone), the agent attaches;
        # switched on and off again in JupyterLab, it stops the agent's debugger too.
        await lab_requests(lab, DISCONNECT)
        await ok(run, "debug", action="attach_kernel")
        await lab_requests(lab, ("debugInfo", {}), DISCONNECT)
        stopped = await call(run, "debug", action="threads")
        assert stopped.code == "failed" and "attach_kernel again" in stopped.error["message"]
        await ok(run, "debug", action="attach_kernel")
    finally:
        lab.stop_channels()


async def lab_requests(lab: AsyncKernelClient, *requests: tuple[str, dict]) -> None:
    """Send DAP requests as JupyterLab's debugger does, each answered before the next."""
    for command, arguments in requests:
        lab_requests.seq += 1  # type: ignore[attr-defined]
        msg = lab.session.msg("debug_request", {"type": "request", "seq": lab_requests.seq,
                                                "command": command, "arguments": arguments})
        lab.control_channel.send(msg)
        while (await lab.get_control_msg(timeout=30))["parent_header"]["msg_id"] \
                != msg["header"]["msg_id"]:
            pass

async def test_a_hosted_notebook_kernel_over_http(api, jp_root_dir):
    """The server's own kernel of a notebook (borrowed, as JupyterLab's view shows it)."""
    nbformat.write(new_notebook(cells=[
        new_code_cell("def grow(a):\n    b = a + 1\n    return b\n", id="define"),
        new_code_cell("print(grow(41))", id="use"),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                "language": "python"}}), jp_root_dir / "nb.ipynb")
    code, run = await api("POST", "runs", {"cwd": ".", "conversation_id": "http"})
    assert code == 201

    async def tool(name: str, **args):
        code, result = await api("POST", f"runs/{run['id']}/calls", {"tool": name, "args": args})
        assert code == 200
        assert result["ok"], result["error"]
        return result

    await tool("notebook", action="run", path="nb.ipynb", cell=1)
    await tool("debug", action="attach_kernel", notebook="nb.ipynb")
    await tool("debug", action="breakpoints", notebook="nb.ipynb", cell=1, lines=[2])
    stopped = await tool("notebook", action="run", path="nb.ipynb", cell="use")
    assert stopped["data"]["stopped"]["line"] == 2
    local = await tool("debug", action="evaluate", expression="a")
    assert local["data"]["result"] == "41"
    ended = await tool("debug", action="continue")
    assert "42" in ended["text"]
    code, _ = await api("DELETE", f"runs/{run['id']}")
    assert code == 204


lab_requests.seq = 0  # type: ignore[attr-defined]
