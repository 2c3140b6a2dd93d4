"""The kernel factory: the warm pool, missing kernelspecs, the Deno kernelspec installer."""

from __future__ import annotations

import json

from jupyter_agent_tools.kernels import deno_spec


def cell(code: str, **more: object) -> dict:
    return {"code": code, "description": "look at the kernel from inside", **more}


async def test_a_new_run_takes_a_warm_kernel_in_its_own_directory(make_runtime, root):
    (root / "b").mkdir()
    runtime = make_runtime(warm_pool={"python": 1})
    factory = runtime.provider("kernels")
    first = await runtime.create_run()
    assert (await first.call("eval", cell("1"))).ok
    await factory.prewarm()
    assert (await factory.status())["warm"] == {"python": 1}
    second = await runtime.create_run(cwd="b")
    result = await second.call("eval", cell("import os; os.getcwd()"))
    assert result.text.strip("'") == str(root / "b")
    await factory.prewarm()
    assert (await factory.status())["kernels"] == 3  # two runs' kernels and the refilled pool


async def test_the_pool_can_fill_at_the_first_run(make_runtime):
    runtime = make_runtime(warm_pool={"python": 1}, warm_at_first_run=True)
    factory = runtime.provider("kernels")
    assert (await factory.status())["warm"] == {}
    run = await runtime.create_run()
    assert (await factory.status())["warming"] == {"python": 1}  # started by create_run
    await factory.prewarm()
    assert (await factory.status())["warm"] == {"python": 1}
    result = await run.call("eval", cell("1 + 1"))
    assert result.text == "2"


async def test_a_missing_kernelspec_is_unavailable_with_the_fix(make_runtime):
    runtime = make_runtime(kernel_names={"python": "python3", "javascript": "no-such-spec"})
    run = await runtime.create_run()
    result = await run.call("eval", cell("1", language="javascript"))
    assert result.code == "unavailable" and "jupyter-agent-tools[js]" in result.text
    status = await runtime.provider("kernels").status()
    assert status["languages"]["javascript"]["available"] is False


async def test_the_deno_kernelspec_is_registered_at_first_use(runtime_factory, tmp_path,
                                                              monkeypatch):
    # A fresh environment with the [js] extra: deno installed, no kernelspec yet.
    monkeypatch.setattr("sys.prefix", str(tmp_path))
    monkeypatch.setattr("jupyter_core.paths.ENV_JUPYTER_PATH", [str(tmp_path / "share/jupyter")])
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "user"))
    kernels = tmp_path / "share" / "jupyter" / "kernels"
    runtime = runtime_factory({"KernelFactory": {"warm_pool": {}}})
    assert (await runtime.provider("kernels").status())["languages"]["javascript"][
        "available"]  # status is a first use too
    assert (kernels / "deno" / "kernel.json").is_file()
    run = await runtime.create_run()
    result = await run.call("eval", cell("1 + 2", language="javascript"))
    assert result.ok and result.text == "3", result.text


async def test_python_kernels_start_under_a_long_runtime_path(make_runtime, tmp_path,
                                                               monkeypatch):
    # IPC sockets beside connection files under ~/.local/share/jupyter/runtime once failed
    # with "File name too long" (a socket path is limited to about 107 bytes).
    long_runtime = tmp_path / ("a-long-home-folder-" * 6) / "runtime"
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(long_runtime))
    run = await make_runtime(embedded_python_transport="ipc").create_run()
    result = await run.call("eval", cell("6 * 7"))
    assert result.ok and result.text == "42", result.text


async def test_kernels_are_bounded(make_runtime):
    run = await make_runtime(max_kernels=1, warm_pool={"python": 1}).create_run()
    assert (await run.call("eval", cell("1"))).ok
    refused = await run.call("eval", cell("1", language="javascript"))
    assert refused.code == "unavailable" and "1 kernels are running" in refused.text


def test_the_deno_kernelspec_installs_into_a_prefix(tmp_path):
    assert deno_spec.main(["--install", "--prefix", str(tmp_path)]) == 0
    spec = json.loads((tmp_path / "share/jupyter/kernels/deno/kernel.json").read_text())
    assert spec["argv"][0] == deno_spec.deno_binary()
    assert spec["argv"][1:] == ["jupyter", "--kernel", "--conn", "{connection_file}"]
    assert spec["interrupt_mode"] == "message"


async def test_runtime_shutdown_leaves_no_kernel_process(make_runtime):
    runtime = make_runtime(warm_pool={"python": 1})
    factory = runtime.provider("kernels")
    run = await runtime.create_run()
    assert (await run.call("eval", cell("console.log(1)", language="javascript"))).ok
    await factory.prewarm()
    processes = [
        session.handle.manager.get_kernel(session.kernel_id).provisioner.process
        for session in factory._sessions
    ]
    assert len(processes) == 2  # the run's Deno kernel and a warm Python kernel
    await runtime.shutdown()
    assert all(process.poll() is not None for process in processes)


async def test_where_a_cell_runs_is_reported(make_runtime):
    # A kernelspec named as the sandbox's is used (and said) when installed; here python3
    # stands in for one, as a provisioner attaching to a running sandbox would be.
    sandboxed = await make_runtime(sandbox_kernel_names={"python": "python3"}).create_run()
    assert (await sandboxed.call("eval", cell("1"))).data["where"] == "sandbox"
    # A sandbox spec that is not installed is never booted: the host kernel runs the cell.
    runtime = make_runtime(sandbox_kernel_names={"python": "no-such-sandbox"})
    status = await runtime.provider("kernels").status()
    assert status["languages"]["python"]["where"] == "host"
