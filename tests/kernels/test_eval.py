"""eval against real kernels: state, reset, rich outputs, idioms, budgets, death."""

from __future__ import annotations

import asyncio
import base64
import os

import pytest


def cell(code: str, description: str = "run a small test cell here", **more: object) -> dict:
    """The arguments of an eval call."""
    return {"code": code, "description": description, **more}


async def test_state_persists_and_the_last_value_comes_back(kernels_runtime):
    run = await kernels_runtime.create_run()
    first = await run.call("eval", cell("x = 41\nprint('set')"))
    assert first.ok, first.text
    second = await run.call("eval", cell("x + 1", "add one to the stored value"))
    assert second.ok and second.text == "42" and second.data["result"] == "42"
    assert second.data["where"] == "host" and second.data["language"] == "python"
    entry = run.transcript.entries()[-1]
    assert entry.label == "add one to the stored value" and entry.origin == "api"
    mixed = await run.call("eval", cell(
        "import sys\nprint('out')\nprint('err', file=sys.stderr)\ndisplay({'shown': 1})\n'last'"))
    lines = mixed.text.splitlines()
    assert sorted(lines[:2]) == ["err", "out"] and lines[2:] == ["{'shown': 1}", "'last'"], lines


@pytest.mark.parametrize("description", ["too short", "one two three four five six seven eight nine ten eleven"])
async def test_description_must_be_five_to_ten_words(kernels_runtime, description):
    run = await kernels_runtime.create_run()
    result = await run.call("eval", cell("1", description))
    assert result.code == "invalid_arguments" and "5 to 10 words" in result.text
    assert kernels_runtime.provider("kernels")._sessions == set()  # no kernel was started


async def test_reset_discards_the_interpreter(kernels_runtime):
    run = await kernels_runtime.create_run()
    assert (await run.call("eval", cell("y = 1"))).ok
    result = await run.call("eval", cell("y", reset=True))
    assert result.code == "failed" and "NameError" in result.text and "[reset" in result.text


async def test_errors_carry_the_traceback_without_colour(kernels_runtime):
    run = await kernels_runtime.create_run()
    result = await run.call("eval", cell("def f():\n    return 1/0\nf()"))
    assert result.code == "failed" and result.data["error"]["ename"] == "ZeroDivisionError"
    assert "return 1/0" in result.text and "\x1b[" not in result.text
    assert (await run.call("eval", cell("f.__name__"))).text == "'f'"  # state is kept


async def test_a_dataframe_is_html_plus_text(kernels_runtime):
    run = await kernels_runtime.create_run()
    result = await run.call("eval", cell(
        "import pandas as pd\npd.DataFrame({'name': ['a', 'b'], 'n': [1, 2]})"))
    assert result.ok, result.text
    kinds = [block["type"] for block in result.blocks]
    assert kinds == ["html", "text"]
    assert "<table" in result.blocks[0]["html"] and "name" in result.blocks[1]["text"]


async def test_a_figure_is_an_image_block(kernels_runtime):
    run = await kernels_runtime.create_run()
    result = await run.call("eval", cell(
        "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.show()"))
    assert result.ok, result.text
    images = [block for block in result.blocks if block["type"] == "image"]
    assert len(images) == 1 and images[0]["mime_type"] == "image/png"
    assert base64.b64decode(images[0]["data"]).startswith(b"\x89PNG")
    assert result.data["images"] == 1


async def test_ipython_idioms(kernels_runtime, root):
    (root / "sub").mkdir()
    run = await kernels_runtime.create_run()
    assert (await run.call("eval", cell("%cd sub"))).ok
    here = await run.call("eval", cell("import os; os.getcwd()"))
    assert here.text.strip("'") == str(root / "sub")
    shell = await run.call("eval", cell("!echo from-shell"))
    assert "from-shell" in shell.text
    bash = await run.call("eval", cell("%%bash\necho from-bash $((1 + 2))"))
    assert "from-bash 3" in bash.text
    timeit = await run.call("eval", cell("%%timeit -n1 -r1\nsum(range(10))"))
    assert timeit.ok and "per loop" in timeit.text


async def test_output_is_bounded_with_a_note(make_runtime):
    runtime = make_runtime()
    runtime.max_output_chars = 2_000
    run = await runtime.create_run()
    result = await run.call("eval", cell("for i in range(5000): print('line', i)"))
    assert result.ok and len(result.text) < 2_500
    assert "cut" in result.text and result.data["truncated"]


def _wheel(directory, version: str):
    """A tiny pure-Python wheel of package `tinypkg` at `version`, made by hand."""
    import zipfile

    name = f"tinypkg-{version}"
    path = directory / f"tinypkg-{version}-py3-none-any.whl"
    files = {
        "tinypkg/__init__.py": f"VERSION = {version!r}\n",
        f"{name}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: tinypkg\nVersion: {version}\n",
        f"{name}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{name}.dist-info/top_level.txt": "tinypkg\n",
    }
    record = "".join(f"{file},,\n" for file in files) + f"{name}.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as archive:
        for file, text in files.items():
            archive.writestr(file, text)
        archive.writestr(f"{name}.dist-info/RECORD", record)
    return path


async def test_pip_install_evicts_the_modules_it_touched(kernels_runtime, tmp_path):
    target = tmp_path / "site"
    one, two = _wheel(tmp_path, "1.0"), _wheel(tmp_path, "2.0")
    run = await kernels_runtime.create_run()
    pip = "%pip install --quiet --no-index --no-deps --upgrade --target {target} {wheel}"
    setup = f"import sys; sys.path.insert(0, {str(target)!r})\n" + pip.format(target=target, wheel=one)
    assert (await run.call("eval", cell(setup))).ok
    assert (await run.call("eval", cell("import tinypkg; tinypkg.VERSION"))).text == "'1.0'"
    upgrade = await run.call("eval", cell(pip.format(target=target, wheel=two)))
    assert upgrade.ok and "unloaded tinypkg" in upgrade.text, upgrade.text
    again = await run.call("eval", cell("import tinypkg; tinypkg.VERSION"))
    assert again.text == "'2.0'"


async def test_the_call_after_a_cancelled_eval_runs_normally(kernels_runtime):
    # The cancelled cell is interrupted; a cell sent while it was still stopping was aborted
    # by the kernel (stop_on_error) and answered "The cell raised Error" with no traceback.
    run = await kernels_runtime.create_run()
    assert (await run.call("eval", cell("x = 5"))).ok
    started = asyncio.ensure_future(run.call("eval", cell(
        "import time\nprint('sleeping', flush=True)\ntime.sleep(60)")))
    await asyncio.sleep(2)
    started.cancel()
    with pytest.raises(asyncio.CancelledError):
        await started
    after = await run.call("eval", cell("x + 1", "add one to the stored value"))
    assert after.ok and after.text == "6", after.text


async def test_a_quiet_cell_is_interrupted_after_the_idle_budget(make_runtime):
    run = await make_runtime(idle_timeout_seconds=1.0).create_run()
    assert (await run.call("eval", cell("kept = 1"))).ok  # the kernel is up before the clock matters
    result = await run.call("eval", cell("print('started', flush=True)\nimport time; time.sleep(60)"))
    assert result.code == "timeout" and "started" in result.text
    assert "KeyboardInterrupt" in result.text
    assert (await run.call("eval", cell("kept"))).text == "1"  # interrupted, not restarted


async def test_a_busy_javascript_cell_is_interrupted(make_runtime):
    run = await make_runtime(idle_timeout_seconds=1.0).create_run()
    assert (await run.call("eval", cell("var kept = 7", language="javascript"))).ok
    result = await run.call("eval", cell("console.log('spinning'); while (true) {}",
                                         language="javascript"))
    assert result.code == "timeout" and "spinning" in result.text
    assert (await run.call("eval", cell("kept", language="javascript"))).text == "7"


async def test_a_killed_kernel_is_kernel_died_then_a_fresh_interpreter(kernels_runtime):
    run = await kernels_runtime.create_run()
    assert (await run.call("eval", cell("z = 1"))).ok
    code = "import os, signal, time\nprint('before', flush=True)\ntime.sleep(0.5)\nos.kill(os.getpid(), signal.SIGKILL)"
    died = await run.call("eval", cell(code))
    assert died.code == "kernel_died" and "before" in died.text
    after = await run.call("eval", cell("z"))
    assert after.code == "failed" and "NameError" in after.text and "state lost" in after.text
    assert after.data["state_lost"]


async def test_a_kernel_that_died_between_calls_is_replaced_before_the_cell(kernels_runtime):
    run = await kernels_runtime.create_run()
    assert (await run.call("eval", cell("w = 1"))).ok
    session = run.resources["kernels"].sessions["python"]
    process = session.handle.manager.get_kernel(session.kernel_id).provisioner.process
    process.kill()
    await asyncio.to_thread(process.wait, 30)
    after = await run.call("eval", cell("'w' in globals()"))
    assert after.ok and after.text.endswith("False") and after.data["state_lost"], after.text


async def test_eval_is_not_visible_to_a_plan_run(kernels_runtime):
    run = await kernels_runtime.create_run(surface="plan")
    assert "eval" not in run.tool_names()
    result = await run.call("eval", cell("1"))
    assert result.code == "unknown_tool"


async def test_javascript_keeps_state(kernels_runtime):
    run = await kernels_runtime.create_run()
    define = await run.call("eval", cell("let n = 20; console.log('js says hi')", language="javascript"))
    assert define.ok and "js says hi" in define.text
    value = await run.call("eval", cell("n * 2 + 2", language="javascript"))
    assert value.ok and value.text == "42" and value.data["language"] == "javascript"
    error = await run.call("eval", cell("throw new Error('nope')", language="javascript"))
    assert error.code == "failed" and "nope" in error.text


async def test_closing_the_run_stops_its_kernels(kernels_runtime):
    run = await kernels_runtime.create_run()
    result = await run.call("eval", cell("import os; os.getpid()"))
    pid = int(result.text)
    os.kill(pid, 0)  # alive
    await kernels_runtime.close_run(run.id)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
