"""Hosted in a Jupyter server: kernels come from the server's kernel manager, over HTTP."""

from __future__ import annotations

import json

from jupyter_agent_tools.kernels.deno_spec import deno_binary, kernel_json


def cell(code: str) -> dict:
    return {"tool": "eval", "args": {"code": code, "description": "check where this kernel really runs"}}


async def kernel_ids(jp_fetch) -> set[str]:
    response = await jp_fetch("api", "kernels")
    return {kernel["id"] for kernel in json.loads(response.body)}


async def test_kernels_are_the_servers_and_go_with_the_run(api, jp_fetch, jp_root_dir):
    (jp_root_dir / "sub").mkdir()
    (jp_root_dir / "sub" / "data.txt").write_text("hosted\n")
    _, first = await api("POST", "runs", {"cwd": "."})
    _, second = await api("POST", "runs", {"cwd": "sub"})
    assert "eval" in first["tools"]

    code, a = await api("POST", f"runs/{first['id']}/calls", cell("1 + 1"))
    assert code == 200 and a["ok"] and a["text"] == "2", a
    # The second run's kernel comes from the warm pool the first eval filled; it still runs
    # in the second run's directory and serves the second run's tools.
    code, b = await api("POST", f"runs/{second['id']}/calls",
                        cell("import os\nprint(os.path.basename(os.getcwd()))\n"
                             "tool('read', {'path': 'data.txt'}).text"))
    assert code == 200 and b["ok"], b
    assert b["text"].startswith("sub") and "hosted" in b["text"]
    assert b["data"]["where"] == "host"

    ours = {a["data"]["kernel_id"], b["data"]["kernel_id"]}
    assert len(ours) == 2 and ours <= await kernel_ids(jp_fetch)  # JupyterLab lists them
    _, transcript = await api("GET", f"runs/{second['id']}/transcript")
    assert [(e["tool"], e["origin"]) for e in transcript] == [("eval", "http"), ("read", "cell")]

    for run in (first, second):
        assert (await api("DELETE", f"runs/{run['id']}"))[0] == 204
    assert not ours & await kernel_ids(jp_fetch)


async def test_status_reports_the_kernels(api, jp_data_dir):
    # The test server sees only its own Jupyter paths: give it the Deno kernelspec there.
    spec_dir = jp_data_dir / "kernels" / "deno"
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(json.dumps(kernel_json(deno_binary())))
    code, status = await api("GET", "status")
    assert code == 200
    kernels = status["resources"]["kernels"]
    assert kernels["hosted"] is True, status
    assert kernels["languages"]["python"] == {"available": True, "kernel_name": "python3",
                                              "where": "host"}
    assert kernels["languages"]["javascript"]["kernel_name"] == "deno"


async def test_a_killed_hosted_kernel_is_kernel_died_even_if_the_server_restarts_it(api):
    _, run = await api("POST", "runs", {"cwd": "."})
    calls = f"runs/{run['id']}/calls"
    assert (await api("POST", calls, cell("kept = 1")))[1]["ok"]
    kill = "import os, signal\nprint('going', flush=True)\nos.kill(os.getpid(), signal.SIGKILL)"
    _, died = await api("POST", calls, cell(kill))
    assert died["error"]["code"] == "kernel_died", died
    _, after = await api("POST", calls, cell("kept"))
    assert after["error"]["code"] == "failed" and "state lost" in after["text"]
