"""A sandboxed run: bash, its own kernels, debug launches and worker commands run under real
Landlock (and a network namespace), the user's notebook kernel never does.

Real processes on this machine's kernel; skipped where it has no Landlock (there the last test
shows a confined run is refused instead).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import psutil
import pytest
from jupyter_core.paths import jupyter_runtime_dir

from jupyter_agent_tools.files.denied import denied_folders, deny_folders
from jupyter_agent_tools.mcp_endpoint.options import run_request_from_query
from jupyter_agent_tools.runtime import ErrorCode, Resource, ToolError
from jupyter_agent_tools.runtime.sandbox import support

LANDLOCK = support()["landlock_abi"] > 0
needs_landlock = pytest.mark.skipif(not LANDLOCK, reason="the kernel has no Landlock")
needs_network_confinement = pytest.mark.skipif(
    support()["landlock_abi"] < 4 and not support()["network_namespace"],
    reason="neither Landlock ABI 4 nor network namespaces here")


def bash(run, command: str):
    return run.call("bash", {"command": command, "timeout_seconds": 60})


@pytest.fixture
def secret() -> Path:
    """A file in Jupyter's runtime directory (as a kernel's connection file is)."""
    runtime_dir = os.path.realpath(jupyter_runtime_dir())
    folder = Path(runtime_dir if runtime_dir in denied_folders() else denied_folders()[0])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "kernel-sandbox-test.json"
    path.write_text('{"key": "s3cret"}')
    yield path
    path.unlink(missing_ok=True)


@pytest.fixture
def listener():
    """A TCP listener on loopback, accepting in a thread: its port."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(10)
    accepted: list[bool] = []

    def accept() -> None:
        try:
            server.accept()[0].close()
            accepted.append(True)
        except OSError:
            pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    server.close()


@needs_landlock
async def test_workspace_write_bash_writes_only_in_its_folder_and_temp(runtime, root, tmp_path,
                                                                        secret):
    (root / "work").mkdir()
    other = tmp_path / "other"
    other.mkdir()
    run = await runtime.create_run(cwd="work", sandbox="workspace-write")
    assert run.describe()["sandbox"] == {
        "modes": dict.fromkeys(("bash", "eval", "debug", "workers"), "workspace-write"),
        "network": True}
    result = await bash(run, "echo made > here.txt && cat here.txt && echo t > $TMPDIR/t && "
                             "cat $TMPDIR/t && echo gone > /dev/null && echo $TMPDIR $TMP $TEMP")
    assert result.ok, result.text
    made, temp_line, temp, tmp, temp_too = result.text.split()
    assert (made, temp_line) == ("made", "t") and temp == tmp == temp_too
    assert (root / "work" / "here.txt").read_text() == "made\n"
    assert Path(temp).parent == Path(tempfile.gettempdir()) and run.id not in temp
    assert Path(temp).stat().st_mode & 0o777 == 0o700

    for target in (root / "outside.txt", other / "x.txt",
                   Path(tempfile.gettempdir()) / f"{run.id}.txt"):
        refused = await bash(run, f"echo no > {target}")
        assert "Permission denied" in refused.text, refused.text
        assert not target.exists()
    # Reading elsewhere works; the runtime directory's files are not readable.
    (other / "readable.txt").write_text("fine")
    assert (await bash(run, f"cat {other / 'readable.txt'}")).text.strip() == "fine"
    denied = await bash(run, f"cat {secret}")
    assert "Permission denied" in denied.text and "s3cret" not in denied.text
    # Its private temp folder goes with the run.
    await runtime.close_run(run.id)
    assert not Path(temp).exists()


@needs_landlock
async def test_read_only_bash_cannot_write_its_folder(runtime, root):
    run = await runtime.create_run(sandbox="read-only")
    refused = await bash(run, "echo no > here.txt")
    assert "Permission denied" in refused.text and not (root / "here.txt").exists()
    assert (await bash(run, "echo yes > $TMPDIR/t && cat $TMPDIR/t")).text.strip() == "yes"
    # Its keeper, confined with it, still ends what the command left behind.
    mark = f"{os.getpid()}.{id(run) % 1000}"
    assert (await bash(run, f"setsid sleep {mark} & (sleep {mark} &); echo left")).ok
    await asyncio.sleep(1)
    assert [p for p in psutil.process_iter(["cmdline"])
            if mark in " ".join(p.info["cmdline"] or ())] == []


@needs_landlock
async def test_an_unsandboxed_run_is_not_confined(runtime, root, secret):
    run = await runtime.create_run()
    assert run.describe()["sandbox"]["modes"]["bash"] == "off"
    assert (await bash(run, f"cat {secret}")).text.strip() == '{"key": "s3cret"}'


@needs_landlock
def test_config_gives_the_default_per_surface(runtime_factory):
    runtime = runtime_factory(sandbox={"bash": "read-only"}, sandbox_network=False)
    plan = runtime.plan_run()
    assert plan.sandbox is not None
    assert plan.sandbox.describe() == {"modes": {"bash": "read-only", "eval": "off",
                                                 "debug": "off", "workers": "off"},
                                       "network": False}
    with pytest.raises(ToolError) as refused:
        runtime.plan_run(sandbox="everything")
    assert refused.value.code is ErrorCode.INVALID_ARGUMENTS


@needs_network_confinement
async def test_network_off_alone_cuts_only_the_network(runtime, listener, tmp_path):
    port, accepted = listener
    run = await runtime.create_run(network=False)
    assert run.describe()["sandbox"]["modes"]["bash"] == "off"
    result = await bash(run, f"echo out > {tmp_path / 'out.txt'} && python3 -c 'import socket; "
                             f"socket.create_connection((\"127.0.0.1\", {port}), timeout=5)'")
    assert (tmp_path / "out.txt").read_text() == "out\n"
    assert "Error" in result.text and accepted == []


@needs_network_confinement
async def test_network_off_bash_cannot_connect(runtime, listener):
    port, accepted = listener
    connect = (f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), "
               "timeout=5); print(\"connected\")'")
    run = await runtime.create_run(sandbox="workspace-write", network=False)
    refused = await bash(run, connect)
    assert "connected" not in refused.text and "Error" in refused.text, refused.text
    assert accepted == []
    free = await runtime.create_run(sandbox="workspace-write")
    assert (await bash(free, connect)).text.strip() == "connected"
    if support()["network_namespace"]:  # a namespace of its own: nothing leaves, UDP neither
        udp = await bash(run, "python3 -c 'import socket; socket.socket(socket.AF_INET, "
                              "socket.SOCK_DGRAM).sendto(b\"x\", (\"192.0.2.1\", 9))'")
        assert "Network is unreachable" in udp.text, udp.text


async def test_debug_needs_a_namespace_to_cut_the_network(runtime, monkeypatch):
    from jupyter_agent_tools.runtime import runtime as runtime_module
    monkeypatch.setattr(runtime_module, "support",
                        lambda: {"landlock_abi": 7, "network_namespace": False})
    with pytest.raises(ToolError) as refused:
        await runtime.create_run(sandbox="workspace-write", network=False)
    message = refused.value.message
    assert refused.value.code is ErrorCode.UNAVAILABLE and "cannot cut it for debug" in message
    assert "network true" in message and runtime.runs == {}


def test_status_reports_sandbox_support(runtime, jp_asyncio_loop):
    status = jp_asyncio_loop.run_until_complete(runtime.status())
    found = support()
    assert status["sandbox"]["available"] is (found["landlock_abi"] > 0)
    assert status["sandbox"]["landlock_abi"] == found["landlock_abi"]
    assert set(status["sandbox"]["network"]) == {"bash", "eval", "debug", "workers"}


def test_the_cli_status_says_what_can_be_confined(tmp_path):
    jupyter = Path(sys.executable).parent / "jupyter"
    shown = subprocess.run([str(jupyter), "agent-tools", "status"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120, check=True).stdout
    line = next(line for line in shown.splitlines() if line.startswith("sandbox: "))
    found = support()
    if found["landlock_abi"]:
        assert line.startswith(f"sandbox: Landlock ABI {found['landlock_abi']}; network off:")
        assert "eval " + ("landlock" if found["landlock_abi"] >= 4 else "cannot") in line
    else:
        assert "unavailable" in line


async def test_a_run_that_cannot_be_confined_is_refused(runtime, monkeypatch):
    from jupyter_agent_tools.runtime import runtime as runtime_module
    monkeypatch.setattr(runtime_module, "support",
                        lambda: {"landlock_abi": 0, "network_namespace": False})
    with pytest.raises(ToolError) as refused:
        await runtime.create_run(sandbox="workspace-write")
    assert refused.value.code is ErrorCode.UNAVAILABLE
    assert "Landlock" in refused.value.message and "sandbox 'off'" in refused.value.message
    assert runtime.runs == {}
    await runtime.create_run()  # an unconfined run still starts


# -- the server: kernels, HTTP ------------------------------------------------------------------


@pytest.fixture
def server_runtime(jp_serverapp):
    return jp_serverapp.web_app.settings["agent_tools_runtime"]


def cell(code: str) -> dict:
    return {"code": code, "description": "check what a confined kernel may do", "language": "python"}


@needs_landlock
@needs_network_confinement
async def test_the_runs_own_kernel_is_confined_and_still_works(server_runtime, jp_root_dir,
                                                                secret, listener):
    port, accepted = listener
    run = await server_runtime.create_run(sandbox="workspace-write", network=False)
    assert (await run.call("eval", cell("1 + 1"))).text == "2"
    bridged = await run.call("eval", cell("tool('bash', command='echo bridged')['text']"))
    assert "bridged" in bridged.text, bridged.text
    wrote = await run.call("eval", cell("open('k.txt', 'w').write('k')"))
    assert wrote.ok and (jp_root_dir / "k.txt").read_text() == "k"
    for code in (f"open({str(jp_root_dir.parent / 'kout.txt')!r}, 'w')",
                 f"open({str(secret)!r}).read()",
                 f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)"):
        refused = await run.call("eval", cell(code))
        assert not refused.ok and "PermissionError" in refused.text, (code, refused.text)
    assert accepted == []
    assert not (jp_root_dir.parent / "kout.txt").exists()
    # Restarted (a reset), or restarted by the server, it is confined again.
    kernel_id = run.resources[Resource.KERNELS].sessions["python"].kernel_id
    manager = server_runtime.kernel_manager
    await manager.restart_kernel(kernel_id)
    await asyncio.sleep(1)
    again = await run.call("eval", cell(f"open({str(secret)!r}).read()"))
    assert not again.ok and "PermissionError" in again.text, again.text


@needs_landlock
async def test_the_users_notebook_kernel_is_never_confined(server_runtime, jp_fetch, secret):
    response = await jp_fetch("api", "kernels", method="POST", body=json.dumps({"name": "python3"}))
    kernel_id = json.loads(response.body)["id"]
    run = await server_runtime.create_run(kernel_id=kernel_id, sandbox="read-only")
    seen = await run.call("eval", cell(f"open({str(secret)!r}).read()"))
    assert seen.ok and "s3cret" in seen.text, seen.text


@needs_landlock
async def test_http_create_run_takes_and_shows_the_sandbox(api):
    status, created = await api("POST", "runs", {"sandbox": "read-only", "network": True})
    assert status == 201, created
    assert created["sandbox"]["modes"]["bash"] == "read-only"
    assert created["sandbox"]["network"] is True


# -- debug launches and worker commands ---------------------------------------------------------

ESCAPE = """\
import sys
try:
    open(sys.argv[1], "w").write("escaped")
    print("WROTE")
except PermissionError:
    print("REFUSED")
open("inside.txt", "w").write("fine")
"""


@needs_landlock
async def test_a_debug_launch_cannot_write_outside_its_folder(runtime, root, tmp_path):
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (root / "escape.py").write_text(ESCAPE)
    outside = tmp_path / "escaped.txt"
    run = await runtime.create_run(conversation_id="sandboxed", sandbox="workspace-write")
    launched = await run.call("debug", {"action": "launch", "program": "escape.py",
                                        "args": [str(outside)]})
    assert launched.ok and launched.data["state"] == "exited", launched.text
    output = (await run.call("debug", {"action": "output"})).text
    assert "REFUSED" in output and "WROTE" not in output, output
    assert not outside.exists()
    assert (root / "inside.txt").read_text() == "fine"


WORKER = Path(__file__).parents[1] / "workers" / "scripted_agent.py"


@pytest.fixture
def jp_server_config(jp_server_config):
    """The server's workers run the scripted agent of tests/workers (a real command)."""
    return {**jp_server_config, "WorkerPool": {"backend": "command"}, "CommandBackend": {
        "argv": {"fast": [sys.executable, str(WORKER)], "good": [sys.executable, str(WORKER)]},
        "kill_grace_seconds": 1.0}}


@needs_landlock
@needs_network_confinement
async def test_a_worker_command_is_confined_but_reaches_its_server(api, jp_root_dir, tmp_path):
    outside = tmp_path / "outside.pid"
    status, parent = await api("POST", "runs", {"vibe": True, "sandbox": "workspace-write",
                                                "network": False})
    assert status == 201, parent

    async def call(name: str, args: dict) -> dict:
        code, result = await api("POST", f"runs/{parent['id']}/calls", {"tool": name, "args": args})
        assert code == 200, result
        return result

    brief = "\n".join(["get runs", "pidfile inside.pid", "echo wrote inside",
                       f"pidfile {outside}", "echo wrote outside"])
    assert (await call("vibe_spawn", {"label": "escape", "brief": brief}))["ok"]
    waited = await call("vibe_wait", {"worker_id": "w1", "timeout_seconds": 120})
    result = waited["data"]["result"]
    assert "get runs: 403" in result, result  # the server's port is still reachable
    assert "wrote inside" in result and "wrote outside" not in result, result
    assert (jp_root_dir / "inside.pid").exists() and not outside.exists()
    _, child = await api("GET", f"runs/{waited['data']['child_run_id']}")
    assert child["sandbox"] == {"modes": dict.fromkeys(("bash", "eval", "debug", "workers"),
                                                       "workspace-write"), "network": False}


def test_mcp_takes_the_sandbox_from_its_query():
    options = run_request_from_query({"sandbox": [b"read-only"], "network": [b"false"]})
    assert options.create_run_options()["sandbox"] == "read-only"
    assert options.create_run_options()["network"] is False
    with pytest.raises(ToolError) as refused:
        run_request_from_query({"sandbox": [b"none"]})
    assert refused.value.code is ErrorCode.INVALID_ARGUMENTS


@needs_landlock
async def test_an_embedded_runs_own_kernel_is_confined_too(runtime, root, tmp_path):
    free = await runtime.create_run()
    assert (await free.call("eval", cell("1 + 1"))).text == "2"  # an unconfined kernel
    connection_dir = runtime.providers[Resource.KERNELS]._ipc_dir
    connection_file = next(Path(connection_dir).glob("kernel-*.json"))
    run = await runtime.create_run(sandbox="read-only")
    assert (await run.call("eval", cell("1 + 1"))).text == "2"
    refused = await run.call("eval", cell("open('here.txt', 'w')"))
    assert not refused.ok and "PermissionError" in refused.text, refused.text
    assert not (root / "here.txt").exists()
    ipython = await run.call("eval", cell("import IPython; IPython.paths.get_ipython_dir()"))
    assert ipython.text.strip("'") == str(Path(run.sandbox.temp) / "ipython"), ipython.text
    # Another kernel's connection file (its key) is not readable, by bash nor by this kernel.
    assert "Permission denied" in (await bash(run, f"cat {connection_file}")).text
    other = await run.call("eval", cell(f"open({str(connection_file)!r}).read()"))
    assert not other.ok and "PermissionError" in other.text


@needs_landlock
async def test_a_folder_holding_the_runtime_directory(runtime, root):
    """The run's folder holds Jupyter's runtime directory (a server rooted at home)."""
    runtime_dir = root / ".local" / "share" / "jupyter" / "runtime"
    runtime_dir.mkdir(parents=True)
    (runtime_dir / "jpserver-1.json").write_text('{"token": "s3cret"}')
    deny_folders(runtime_dir)
    (root / "project").mkdir()
    run = await runtime.create_run(sandbox="workspace-write")
    denied = await bash(run, "cat .local/share/jupyter/runtime/jpserver-1.json")
    assert "Permission denied" in denied.text and "s3cret" not in denied.text
    # Beneath a folder that does not hold it, a file made is readable at once; directly in a
    # folder that holds it, by the commands that start after it was made.
    made = await bash(run, "echo a > project/a && cat project/a && echo b > b.txt && cat b.txt")
    assert made.text.splitlines()[0] == "a" and "b.txt: Permission denied" in made.text
    assert (await bash(run, "cat b.txt")).text.strip() == "b"
    assert (await bash(run, "ls .local/share/jupyter/runtime")).text.strip() == "jpserver-1.json"
    # Not hidden: other processes' /proc entries, as readable as to the server's user.
    seen = await bash(run, f"tr '\\0' '\\n' < /proc/{os.getpid()}/environ | grep -c =")
    assert int(seen.text.strip()) > 0, seen.text


async def test_http_refuses_a_sandbox_it_cannot_apply_with_409(api, monkeypatch):
    from jupyter_agent_tools.runtime import runtime as runtime_module
    monkeypatch.setattr(runtime_module, "support",
                        lambda: {"landlock_abi": 0, "network_namespace": False})
    status, refused = await api("POST", "runs", {"sandbox": "workspace-write"})
    assert status == 409 and refused["error"]["code"] == "unavailable"
    assert "no Landlock" in refused["error"]["message"]
    status, _ = await api("POST", "runs", {})
    assert status == 201
