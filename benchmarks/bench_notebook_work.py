"""The agent working in a notebook the human has open (issue 26), against the real alternatives.

One Jupyter server with jupyter-collaboration; `bench.ipynb` has a kernel session (as
JupyterLab starts one on opening it) and is open in a Y client of its room in this process,
synced over the room's WebSocket as JupyterLab syncs it (the human).

1. Insert-and-run `1+1` at the end of the notebook, from the call to its output ("2") in the
   human's copy of the shared document (taken when the Y update that brings it is applied):
   our `notebook` tool through `agent-tools/mcp` and through `POST runs/{id}/calls`;
   jupyter-mcp-server 2.2's `insert_execute_code_cell` against the same server, notebook and
   kernel; and a bare jupyter_client execute of the same code on the same kernel (to its
   execute_result; it writes nothing into the notebook). Interleaved, so load on the machine
   weighs on all alike. Targets: ours <= 1.0x jupyter-mcp-server, <= 50 ms above bare.
2. The human types 20 characters a second into the first cell while the agent inserts and
   runs 20 cells: characters lost (target 0), in the human's view, in the server's document
   (a second Y client that joins afterwards) and in the saved file; for our tool and, when it
   is there, for jupyter-mcp-server.
3. Where each call's time goes: the p50 of each stage between the milestones the human's view
   shows (the new cell, the kernel beginning it, the "2", the answer). With --profile FILE,
   our HTTP calls run once more with the server's loop thread under cProfile
   (benchmarks/loop_probe.py): its CPU per call and the top of the profile.

jupyter-mcp-server lives in a venv of its own under `.tools/bench-peers/`, made on first use
with the machine's `python3 -m venv` and pip: it pulls jupyter_server_nbmodel, datalayer
packages and other server and lab extensions, which, installed beside this package, would
load into every Jupyter server the tests start and change what they test. It runs as its own
process (streamable HTTP MCP on a loopback port) and talks to the benchmark's server over its
URL and token, as it does to any remote Jupyter server.

Run: python -m benchmarks.bench_notebook_work [--iterations N] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import difflib
import os
import pstats
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import httpx2
import nbformat
from httpx_ws import aconnect_ws
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_ydoc import YNotebook
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from nbformat.v4 import new_code_cell, new_notebook
from pycrdt import Provider
from pycrdt.websocket.websocket import HttpxWebsocket

from jupyter_agent_tools.processes import signal_process_group
from jupyter_agent_tools.testing.server import JupyterServerProcess

NOTEBOOK = "bench.ipynb"
CODE = "1+1"
FIRST_CELL = "# the human's notes"
SENTENCE = "the agent fills cells while I type here; "
TYPING_INTERVAL_S = 0.05  # 20 characters a second
WAIT_S = 60.0  # a bound on each wait, not a timing assertion
PEER_REQUIREMENT = "jupyter-mcp-server>=2.2,<2.3"
PEER_VENV = Path(__file__).resolve().parent.parent / ".tools" / "bench-peers" / "jupyter-mcp-server"
TARGET_RATIO, TARGET_OVER_BARE_MS = 1.0, 50.0


# -- the human: a Y client of the notebook's room ---------------------------------------------

class Human:
    """The human's copy of the notebook, synced as JupyterLab syncs it. `seen` resolves when a
    condition on the copy first holds, with the time the update that made it hold arrived."""

    def __init__(self) -> None:
        self.notebook = YNotebook()
        self._waiting: list[tuple[Callable[[], bool], asyncio.Future[float]]] = []
        self.notebook.ydoc.observe(self._updated)

    def _updated(self, _event: Any) -> None:
        # Checked just after the update is applied (reading the document inside its own
        # transaction's callback is not allowed), with the time it arrived.
        asyncio.get_running_loop().call_soon(self._check, time.perf_counter())

    def _check(self, arrived: float) -> None:
        for entry in list(self._waiting):
            condition, seen = entry
            if seen.done():
                self._waiting.remove(entry)
            elif condition():
                seen.set_result(arrived)
                self._waiting.remove(entry)

    def watch(self, condition: Callable[[], bool]) -> asyncio.Future[float]:
        """When `condition` first holds (now, or with the update that makes it hold)."""
        seen: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        if condition():
            seen.set_result(time.perf_counter())
        else:
            self._waiting.append((condition, seen))
        return seen

    async def seen(self, condition: Callable[[], bool], what: str) -> float:
        try:
            return await asyncio.wait_for(self.watch(condition), WAIT_S)
        except asyncio.TimeoutError:  # not yet the builtin one on Python 3.10
            raise RuntimeError(f"the human's view did not show {what} within {WAIT_S:.0f} s") \
                from None

    def cells(self) -> int:
        return len(self.notebook.ycells)

    def source(self, index: int) -> str:
        return str(self.notebook.ycells[index]["source"])

    def has_cell(self, index: int) -> bool:
        return len(self.notebook.ycells) > index

    def running(self, index: int) -> bool:
        """Cell `index` shows that the kernel began it (or already has its result)."""
        cells = self.notebook.ycells
        return len(cells) > index and (cells[index].get("execution_state") == "running"
                                       or cells[index].get("execution_count") is not None
                                       or len(cells[index]["outputs"]) > 0)

    def shows_two(self, index: int) -> bool:
        """Cell `index` holds the execute_result "2"."""
        cells = self.notebook.ycells
        if len(cells) <= index:
            return False
        return any(output.get("output_type") == "execute_result" and _text(output) == "2"
                   for output in cells[index]["outputs"].to_py())


def _text(output: dict[str, Any]) -> str:
    text = output.get("data", {}).get("text/plain", "")
    return "".join(text) if isinstance(text, list) else str(text)


@contextlib.asynccontextmanager
async def open_in_lab(http: httpx.AsyncClient, ws_base: str, token: str) -> AsyncIterator[Human]:
    """Open the notebook as JupyterLab does (a collaboration session, then the room)."""
    session = (await http.put(f"api/collaboration/session/{NOTEBOOK}",
                              json={"format": "json", "type": "notebook"})).json()
    room = f"json:notebook:{session['fileId']}"
    url = f"{ws_base}api/collaboration/room/{room}?sessionId={session['sessionId']}&token={token}"
    human = Human()
    websocket: Any  # httpx_ws has no types
    async with aconnect_ws(url, max_message_size_bytes=16 * 1024 * 1024) as websocket, \
            Provider(human.notebook.ydoc, HttpxWebsocket(websocket, room)):
        await human.seen(lambda: human.cells() >= 1, "the synced notebook")
        yield human


# -- the contenders ---------------------------------------------------------------------------

Call = Callable[[], Awaitable[None]]


# Where a call's time goes, as the human's view shows it: the milestones of each call.
STAGES = (("the new cell shows (request, notebook open, insert, sync)", "cell"),
          ("the kernel began it (kernel session, shell free, execute_input)", "running"),
          ("\"2\" shows (execute, output written, sync)", "seen"),
          ("the call answers (idle, reply, result, response)", "answered"))


@dataclass
class Samples:
    """Seconds from each call to each milestone."""

    cell: list[float] = field(default_factory=list)
    running: list[float] = field(default_factory=list)
    seen: list[float] = field(default_factory=list)  # "2" in the human's view: the figure
    answered: list[float] = field(default_factory=list)


async def _insert_and_run(human: Human, call: Call, samples: Samples) -> None:
    index = human.cells()  # every contender appends at the end
    start = time.perf_counter()
    cell = human.watch(lambda: human.has_cell(index))
    running = human.watch(lambda: human.running(index))
    answer = asyncio.ensure_future(call())
    try:
        seen = await human.seen(lambda: human.shows_two(index), f"cell {index + 1}'s output")
        await answer
    finally:
        for pending in (cell, running, answer):
            pending.cancel()
    samples.answered.append(time.perf_counter() - start)
    samples.seen.append(seen - start)
    samples.running.append(running.result() - start)
    samples.cell.append(cell.result() - start)


def _ours_over_mcp(session: ClientSession) -> Call:
    async def call() -> None:
        result = await session.call_tool("notebook", {"action": "insert", "path": NOTEBOOK,
                                                      "source": CODE, "run": True})
        if result.is_error:
            raise RuntimeError(f"notebook insert over MCP failed: {result.content}")
    return call


def _ours_over_http(api: httpx.AsyncClient, run_id: str) -> Call:
    async def call() -> None:
        answer = (await api.post(f"runs/{run_id}/calls", json={"tool": "notebook", "args": {
            "action": "insert", "path": NOTEBOOK, "source": CODE, "run": True}})).json()
        if not answer.get("ok"):
            raise RuntimeError(f"notebook insert over HTTP failed: {answer}")
    return call


def _peer_call(session: ClientSession) -> Call:
    async def call() -> None:
        # Called as an agent calls it. Its answer waits for a poll of the cell once a second
        # (with stream true or false): the figure is the output in the document.
        result = await session.call_tool("insert_execute_code_cell", {
            "cell_index": -1, "cell_source": CODE})
        if result.is_error:
            raise RuntimeError(f"insert_execute_code_cell failed: {result.content}")
    return call


async def _bare_execute(client: AsyncKernelClient) -> float:
    """A bare execute of CODE on the notebook's kernel: seconds to its execute_result. Then
    waits for the kernel to go idle and the reply, untimed, as any client must."""
    start = time.perf_counter()
    msg_id = client.execute(CODE)
    took = None
    while True:
        msg = await client.get_iopub_msg(timeout=WAIT_S)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "execute_result" and took is None:
            took = time.perf_counter() - start
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    while (await client.get_shell_msg(timeout=WAIT_S))["parent_header"].get("msg_id") != msg_id:
        pass
    if took is None:
        raise RuntimeError("the bare execute gave no execute_result")
    return took


# -- jupyter-mcp-server, in its own venv and process ------------------------------------------

def peer_executable() -> Path:
    """jupyter-mcp-server's command in its venv, made (and installed into) on first use."""
    command = PEER_VENV / "bin" / "jupyter-mcp-server"
    if command.exists():
        return command
    python3 = shutil.which("python3")
    if python3 is None:
        raise RuntimeError("no python3 on PATH to make the peer's venv with")
    print(f"(first use: installing {PEER_REQUIREMENT} into {PEER_VENV})", flush=True)
    for argv in ([python3, "-m", "venv", "--clear", str(PEER_VENV)],
                 [str(PEER_VENV / "bin" / "python"), "-m", "pip", "install", "--quiet",
                  "--disable-pip-version-check", PEER_REQUIREMENT]):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=900, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[-3:])} failed ({done.returncode}): "
                               f"{(done.stderr or done.stdout)[-1500:]}")
    return command


def peer_version() -> str:
    return subprocess.run(
        [str(PEER_VENV / "bin" / "python"), "-c",
         "import importlib.metadata as m; print(m.version('jupyter-mcp-server'))"],
        capture_output=True, text=True, timeout=60, check=True).stdout.strip()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def peer_server(command: Path, jupyter_url: str, jupyter_token: str,
                log: Path) -> Iterator[tuple[str, str]]:
    """jupyter-mcp-server on a loopback port, pointed at the benchmark's Jupyter server;
    yields its MCP URL and bearer token and stops it (and everything it started) after."""
    port, mcp_token = _free_port(), secrets.token_hex(16)
    argv = [str(command), "start", "--transport", "streamable-http", "--host", "127.0.0.1",
            "--port", str(port), "--jupyter-url", jupyter_url.rstrip("/"),
            "--jupyter-token", jupyter_token, "--mcp-token", mcp_token,
            "--start-new-code-sandbox", "false"]
    # Nothing of this project's environment leaks into the peer's interpreter.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    with open(log, "wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + WAIT_S
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"jupyter-mcp-server exited with {process.returncode}: "
                                   f"{log.read_text(errors='replace')[-1500:]}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"jupyter-mcp-server did not listen within {WAIT_S:.0f} s: "
                                   f"{log.read_text(errors='replace')[-1500:]}")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp", mcp_token
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(10)
        signal_process_group(process.pid)
        process.wait()


@contextlib.asynccontextmanager
async def mcp_session(url: str, headers: dict[str, str]) -> AsyncIterator[ClientSession]:
    async with httpx2.AsyncClient(headers=headers, timeout=WAIT_S) as http, \
            streamable_http_client(url, http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


# -- the figures ------------------------------------------------------------------------------

def _p50_p90_ms(samples_s: list[float]) -> tuple[float, float]:
    ordered = sorted(samples_s)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p90 * 1000


def _lost(expected: str, actual: str) -> int:
    """Characters of `expected` missing from `actual`."""
    matcher = difflib.SequenceMatcher(None, expected, actual, autojunk=False)
    return len(expected) - sum(block.size for block in matcher.get_matching_blocks())


@dataclass
class Typing:
    typed: int
    lost_view: int
    lost_server: int
    lost_saved: int
    cells_run: int


async def _type_while(human: Human, index: int, busy: asyncio.Future[Any]) -> str:
    """Type into cell `index` at 20 characters a second until `busy` is done; what was typed."""
    typed = ""
    while not busy.done():
        character = SENTENCE[len(typed) % len(SENTENCE)]
        source = human.notebook.ycells[index]["source"]
        source += character
        typed += character
        await asyncio.sleep(TYPING_INTERVAL_S)
    return typed


async def typing_figure(human: Human, call: Call, cells: int, http: httpx.AsyncClient,
                        ws_base: str, token: str, root: Path) -> Typing:
    """The human types into the first cell while `call` inserts and runs `cells` cells."""
    before = human.source(0)
    first = human.cells()

    async def agent() -> None:
        for _ in range(cells):
            await call()
    work = asyncio.ensure_future(agent())
    typed = await _type_while(human, 0, work)
    await work
    expected = before + typed
    await human.seen(lambda: all(human.shows_two(i) for i in range(first, first + cells)),
                     "every agent cell's output")
    # The server's document: what a client that joins now gets.
    async with open_in_lab(http, ws_base, token) as late:
        with contextlib.suppress(RuntimeError):
            await late.seen(lambda: late.source(0) == expected, "the typing in a new client")
        server_source = late.source(0)
    saved = ""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:  # the collaboration server saves after its delay
        with contextlib.suppress(ValueError, nbformat.reader.NotJSONError):
            saved = nbformat.read(root / NOTEBOOK, 4).cells[0].source
            if saved == expected:
                break
        await asyncio.sleep(0.2)
    run = sum(human.shows_two(i) for i in range(first, human.cells()))
    return Typing(len(typed), _lost(expected, human.source(0)), _lost(expected, server_source),
                  _lost(expected, saved), run)


async def _figures(server: JupyterServerProcess, root: Path, iterations: int, warmup: int,
                   typing_cells: int, scratch: Path, profile: Path | None) -> None:
    url, token = server.url.rstrip("/") + "/", server.token
    ws_base = "ws" + url.removeprefix("http")
    headers = {"Authorization": f"token {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=WAIT_S) as http:
        # The notebook's kernel session, as JupyterLab starts it on opening the notebook.
        kernel_id = (await http.post("api/sessions", json={
            "path": NOTEBOOK, "name": NOTEBOOK, "type": "notebook",
            "kernel": {"name": "python3"}})).json()["kernel"]["id"]
        assert server.runtime_dir is not None
        bare = AsyncKernelClient()
        bare.load_connection_file(str(server.runtime_dir / f"kernel-{kernel_id}.json"))
        bare.start_channels(hb=False)  # a missed heartbeat on a loaded machine is no death
        await bare.wait_for_ready(timeout=WAIT_S)
        api = httpx.AsyncClient(base_url=url + "agent-tools/api/", headers=headers,
                                timeout=WAIT_S)
        run_id = (await api.post("runs", json={"approvals": "auto"})).json()["id"]
        async with contextlib.AsyncExitStack() as stack:
            stack.push_async_callback(api.aclose)
            stack.callback(bare.stop_channels)
            human = await stack.enter_async_context(open_in_lab(http, ws_base, token))
            ours = await stack.enter_async_context(
                mcp_session(f"{url}agent-tools/mcp?approvals=auto", headers))
            contenders: dict[str, Call] = {
                "ours, notebook insert over MCP": _ours_over_mcp(ours),
                "ours, notebook insert over HTTP": _ours_over_http(api, run_id)}
            peer_name = "jupyter-mcp-server insert_execute_code_cell"
            peer_failure = ""
            try:
                command = await asyncio.to_thread(peer_executable)
                version = await asyncio.to_thread(peer_version)
                peer_name = f"jupyter-mcp-server {version} insert_execute_code_cell"
                peer_url, peer_token = stack.enter_context(
                    peer_server(command, url, token, scratch / "jupyter-mcp-server.log"))
                peer = await stack.enter_async_context(
                    mcp_session(peer_url, {"Authorization": f"Bearer {peer_token}"}))
                chosen = await peer.call_tool("use_notebook", {
                    "notebook_name": "bench", "notebook_path": NOTEBOOK, "mode": "connect",
                    "kernel_id": kernel_id})
                if chosen.is_error:
                    raise RuntimeError(f"use_notebook failed: {chosen.content}")
                contenders[peer_name] = _peer_call(peer)
            except Exception as exc:  # noqa: BLE001 - the peer's failure is reported, ours still measured
                peer_failure = f"{type(exc).__name__}: {exc}"

            samples = {name: Samples() for name in contenders}
            bare_s: list[float] = []
            for i in range(warmup + iterations):
                took = await _bare_execute(bare)
                if i >= warmup:
                    bare_s.append(took)
                for name, call in contenders.items():
                    await _insert_and_run(human, call, samples[name] if i >= warmup else Samples())
            over_target = _print_latency(iterations, bare_s, samples, peer_name, peer_failure)
            if over_target:
                print(f"   over a target: {', '.join(over_target)}; see 3. for where the time goes")

            print(f"\n2. the human types 20 characters/s into cell 1 while the agent inserts and "
                  f"runs {typing_cells} cells")
            typing_runs = {"ours (notebook over MCP)": contenders["ours, notebook insert over MCP"]}
            if peer_name in contenders:
                typing_runs[peer_name.removesuffix(" insert_execute_code_cell")] = \
                    contenders[peer_name]
            for name, call in typing_runs.items():
                typing = await typing_figure(human, call, typing_cells, http, ws_base, token, root)
                print(f"   {name:<34} typed {typing.typed:>3}, lost: human's view "
                      f"{typing.lost_view}, server's document {typing.lost_server}, saved file "
                      f"{typing.lost_saved} (target 0); {typing.cells_run}/{typing_cells} cells "
                      "show their output")
            print()
            _print_stages(samples, bare_s)
            if profile:
                await _profile_ours(http, human, contenders["ours, notebook insert over HTTP"],
                                    iterations, profile)


def _print_latency(iterations: int, bare_s: list[float], samples: dict[str, Samples],
                   peer_name: str, peer_failure: str) -> list[str]:
    """The figures of part 1; the names of our contenders that miss a target."""
    print(f"1. insert-and-run `{CODE}` into the open notebook, {iterations} iterations each, "
          "interleaved: from the call to \"2\" in the human's view (and to the call's answer)")
    bare50, bare90 = _p50_p90_ms(bare_s)
    print(f"   {'bare jupyter_client execute (to execute_result)':<50} p50 {bare50:7.1f} ms   "
          f"p90 {bare90:7.1f} ms")
    for name, sample in samples.items():
        seen50, seen90 = _p50_p90_ms(sample.seen)
        answer50, answer90 = _p50_p90_ms(sample.answered)
        print(f"   {name:<50} p50 {seen50:7.1f} ms   p90 {seen90:7.1f} ms   "
              f"(answer p50 {answer50:7.1f}, p90 {answer90:7.1f})")
    peer = samples.get(peer_name)
    over_target = []
    for name, sample in samples.items():
        if sample is peer:
            continue
        seen50, seen90 = _p50_p90_ms(sample.seen)
        over = seen50 - bare50
        missed = over > TARGET_OVER_BARE_MS
        text = (f"   {name}: {over:+.1f} ms over bare at p50 ({seen90 - bare90:+.1f} at p90; "
                f"target <= {TARGET_OVER_BARE_MS:.0f}: {'OVER' if missed else 'ok'})")
        if peer is not None:
            peer50, peer90 = _p50_p90_ms(peer.seen)
            ratio = seen50 / peer50
            missed = missed or ratio > TARGET_RATIO
            text += (f"; / jupyter-mcp-server p50 {ratio:.2f}x, p90 {seen90 / peer90:.2f}x "
                     f"(target <= {TARGET_RATIO:.1f}x: {'ok' if ratio <= TARGET_RATIO else 'OVER'})")
        print(text)
        if missed:
            over_target.append(name)
    if peer_failure:
        print(f"   jupyter-mcp-server not measured: {peer_failure}")
    return over_target


def _print_stages(samples: dict[str, Samples], bare_s: list[float]) -> None:
    """Part 3: the p50 of each stage of a call, between the milestones the human's view shows
    (each stage's p50 is taken on its own, so they need not add up to the total's)."""
    print("3. where the time goes: p50 ms of each stage, from the milestones in the human's view")
    names = list(samples)
    print(f"   {'stage':<66}" + "".join(
        f"{'jupyter-mcp-server' if name.startswith('jupyter') else name.replace(', notebook insert over', ''):>20}"
        for name in names))
    for label, milestone in STAGES:
        cells = []
        for name in names:
            sample = samples[name]
            ends = getattr(sample, milestone)
            begins = ([0.0] * len(ends) if milestone == "cell" else
                      getattr(sample, STAGES[[m for _, m in STAGES].index(milestone) - 1][1]))
            cells.append(statistics.median(e - b for e, b in zip(ends, begins, strict=True)) * 1000)
        print(f"   {label:<66}" + "".join(f"{ms:20.1f}" for ms in cells))
    print(f"   (bare jupyter_client: execute_request to execute_result p50 "
          f"{statistics.median(bare_s) * 1000:.1f} ms)")


async def _profile_ours(http: httpx.AsyncClient, human: Human, call: Call, calls: int,
                        profile: Path) -> None:
    """Our insert-and-run over HTTP, `calls` times with the server's loop thread under
    cProfile (benchmarks/loop_probe.py); its CPU per call and where it goes."""
    await http.post("bench-loop-probe")
    for _ in range(calls):
        await _insert_and_run(human, call, Samples())
    report = (await http.get("bench-loop-probe")).json()
    stats = pstats.Stats(str(profile))
    total_s = sum(row[2] for row in stats.stats.values())  # type: ignore[attr-defined]
    print(f"   server loop thread under cProfile, {calls} inserts-and-runs over HTTP: "
          f"{total_s / calls * 1000:.1f} ms of its CPU per call (profiler included), "
          f"longest loop stall {report['max_lag_ms']:.0f} ms; statistics in {profile}; "
          "the top of it by cumulative time:")
    stats.sort_stats("cumulative").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--typing-cells", type=int, default=20)
    parser.add_argument("--profile", metavar="FILE", type=Path,
                        help="also run our HTTP inserts with the server's loop thread under "
                             "cProfile, into FILE")
    options = parser.parse_args()
    profile: Path | None = options.profile.resolve() if options.profile else None
    probe: list[str] = []
    if profile is not None:
        # The probe extension (this package) profiles the server's loop thread on request.
        os.environ["BENCH_PROFILE"] = str(profile)
        os.environ["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(Path(__file__).resolve().parent.parent),
                          os.environ.get("PYTHONPATH")]))
        probe = ["--ServerApp.jpserver_extensions=benchmarks.loop_probe=True"]
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        root = scratch / "root"
        root.mkdir()
        nbformat.write(new_notebook(cells=[new_code_cell(FIRST_CELL)], metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3",
                           "language": "python"}}), root / NOTEBOOK)
        server = JupyterServerProcess(root, extra_args=[
            f"--SQLiteYStore.db_path={scratch / 'ystore.db'}",
            f"--BaseFileIdManager.db_path={scratch / 'file_id.db'}",
            "--BaseFileIdManager.db_journal_mode=OFF",
            "--YDocExtension.document_save_delay=0.5", *probe]).start()
        try:
            asyncio.run(_figures(server, root, options.iterations, options.warmup,
                                 options.typing_cells, scratch, profile))
        finally:
            server.stop()


if __name__ == "__main__":
    main()
