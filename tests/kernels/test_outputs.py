"""What eval answers, against real kernels: rich displays as blocks, JavaScript syntax errors
with their place, and one story in status, flags and text when a kernel is lost."""

from __future__ import annotations

import asyncio

from kernel_helpers import free_port

RICH_DISPLAYS = """
from IPython.display import HTML, JSON, SVG, Latex, Markdown, display
display(Markdown('# Stock\\n*3 items*'))
display(Latex(r'$\\sum_i v_i$'))
display(SVG('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4"/></svg>'))
display(JSON({'items': [1, 2]}))
display(HTML('<b>bold</b>'))
"""


def cell(code: str, description: str = "run a small test cell here", **more: object) -> dict:
    """The arguments of an eval call."""
    return {"code": code, "description": description, **more}


async def test_rich_displays_keep_their_content_as_blocks(kernels_runtime):
    run = await kernels_runtime.create_run()
    result = await run.call("eval", cell(RICH_DISPLAYS))
    assert result.ok, result.text
    assert [block["type"] for block in result.blocks] == ["markdown", "latex", "svg", "json", "html"]
    markdown, latex, svg, json_block, html = result.blocks
    assert markdown["markdown"] == "# Stock\n*3 items*"
    assert latex["latex"] == r"$\sum_i v_i$"
    assert svg["svg"].startswith("<svg") and "<rect" in svg["svg"]
    assert json_block["json"] == {"items": [1, 2]}
    assert html["html"] == "<b>bold</b>"
    # The agent reads the sources, never IPython's bare reprs.
    assert "# Stock" in result.text and r"\sum_i" in result.text and "<b>bold</b>" in result.text
    assert "[image/svg+xml image 1]" in result.text and result.data["images"] == 1
    assert "object>" not in result.text


async def test_an_html_display_with_a_meaningful_text_keeps_both(kernels_runtime):
    run = await kernels_runtime.create_run()
    result = await run.call("eval", cell(
        "class Table:\n"
        "    def _repr_html_(self): return '<table><tr><td>1</td></tr></table>'\n"
        "    def __repr__(self): return 'Table(1 row)'\n"
        "Table()"))
    assert [block["type"] for block in result.blocks] == ["html", "text"]
    assert result.text == "Table(1 row)" and result.data["result"] == "Table(1 row)"


async def test_a_javascript_syntax_error_names_its_place(kernels_runtime):
    run = await kernels_runtime.create_run()
    assert (await run.call("eval", cell("let kept = 3", language="javascript"))).ok
    broken = await run.call("eval", cell("function f() {\n  return 1\n}\nf(", language="javascript"))
    assert broken.code == "failed" and broken.data["status"] == "error"
    error = broken.data["error"]
    assert (error["ename"], error["line"], error["column"]) == ("SyntaxError", 4, 1), error
    assert "line 4, column 1" in broken.error["message"] and "Expression expected" in broken.text
    assert "4 | f(" in broken.text  # Deno's excerpt, with the cell's own line number
    assert "state is kept" in broken.error["message"]
    assert (await run.call("eval", cell("kept", language="javascript"))).text == "3"


async def test_a_javascript_cell_that_parses_but_fails_bare_says_what_to_check(
        kernels_runtime, monkeypatch):
    # An npm registry nobody answers: Deno's kernel then says only "Execution failed".
    monkeypatch.setenv("NPM_CONFIG_REGISTRY", f"http://127.0.0.1:{free_port()}/")
    run = await kernels_runtime.create_run()
    result = await run.call("eval", cell('import pad from "npm:left-pad@1.3.0"',
                                         language="javascript"))
    assert result.code == "failed" and result.data["status"] == "error"
    assert "the cell parses" in result.error["message"] and "import" in result.error["message"]


async def test_a_killed_kernel_tells_one_story(kernels_runtime):
    run = await kernels_runtime.create_run()
    assert (await run.call("eval", cell("z = 1"))).ok
    died = await run.call("eval", cell("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"))
    assert died.code == "kernel_died"
    assert died.data["status"] == "died" and died.data["state_lost"] is True
    after = await run.call("eval", cell("z"))
    assert after.code == "failed" and after.data["state_lost"] is True
    assert after.text.startswith("[state lost") and "state is kept" not in after.text
    assert "fresh interpreter" in after.error["message"]
    again = await run.call("eval", cell("z"))  # the same (new) interpreter as the call before
    assert again.data["state_lost"] is False and "state lost" not in again.text
    assert "state is kept" in again.error["message"]


async def test_a_kernel_shut_down_from_outside_tells_one_story(kernels_runtime):
    run = await kernels_runtime.create_run()
    assert (await run.call("eval", cell("z = 1"))).ok
    session = run.resources["kernels"].sessions["python"]

    async def shut_down_soon() -> None:  # as JupyterLab's "Shut Down Kernel" does
        await asyncio.sleep(1.0)
        await session.handle.manager.shutdown_kernel(session.kernel_id)

    shutting = asyncio.ensure_future(shut_down_soon())
    during = await run.call("eval", cell("import time\nprint('started', flush=True)\ntime.sleep(60)"))
    await shutting
    assert during.code == "kernel_died" and "started" in during.text, (during.text, during.error)
    assert during.data["status"] == "died" and during.data["state_lost"] is True
    assert "state is kept" not in during.text
    after = await run.call("eval", cell("'z' in globals()"))
    assert after.ok and after.text.endswith("False") and after.data["state_lost"] is True


async def test_a_cell_ended_by_a_shutdown_under_way_is_told_once_the_kernel_is_gone(
        kernels_runtime):
    # jupyter_client interrupts the cell before it shuts the kernel down: on a busy machine
    # the cell's KeyboardInterrupt can come while the process still runs.
    run = await kernels_runtime.create_run()
    assert (await run.call("eval", cell("import atexit, time\natexit.register(time.sleep, 2)"))).ok
    session = run.resources["kernels"].sessions["python"]
    shutting = asyncio.ensure_future(session.handle.manager.shutdown_kernel(session.kernel_id))
    await asyncio.sleep(0.5)
    assert not shutting.done()
    assert await session.handle.manager.get_kernel(session.kernel_id).is_alive()  # exiting
    assert await session.alive_once_settled(30) is False
    assert session.death_reason == "its process exited"
    await shutting


async def test_reset_is_not_a_loss_but_is_no_kept_state_either(kernels_runtime):
    run = await kernels_runtime.create_run()
    assert (await run.call("eval", cell("y = 1"))).ok
    result = await run.call("eval", cell("y", reset=True))
    assert result.code == "failed" and result.data["state_lost"] is False
    assert "[reset" in result.text and "as reset asked" in result.error["message"]
    assert "state is kept" not in result.text


async def test_an_object_with_only_a_markdown_repr_is_read_as_its_markdown(kernels_runtime):
    run = await kernels_runtime.create_run()
    result = await run.call("eval", cell(
        "class Note:\n"
        "    def _repr_markdown_(self): return '**remember** the milk'\n"
        "Note()"))
    assert result.blocks == [{"type": "markdown", "markdown": "**remember** the milk"}]
    assert result.text == "**remember** the milk" == result.data["result"]
