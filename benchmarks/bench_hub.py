"""A real JupyterHub, its users' agents at work at once: memory per user and latency per tool.

    python -m benchmarks.bench_hub [--users 8] [--rounds 2] [--files 100] [--release-seconds 10]

The hub is tests/hub's (hub_helpers.Hub, imported, not copied): JupyterHub with its
configurable-http-proxy (.tools/node: put .tools/node/node_modules/.bin on PATH or run
scripts/setup.sh), SimpleLocalProcessSpawner, DummyAuthenticator; users user1..userN, each
with a running `jupyterhub-singleuser` server that loads this checkout's extension. The
single-user servers' config sets `c.Runtime.idle_release_seconds` to --release-seconds (10;
the default is 60), so the release is seen within the benchmark.

Each user's home holds a small Python project (pyproject.toml, app.py, --files modules of
200 functions, an empty notebook). Then:

1. idle: every server up, its agent-tools API answered once through the hub's proxy; each
   server's process tree (the server and all its descendants) measured: RSS, and PSS from
   /proc/<pid>/smaps_rollup (shared pages split among the processes sharing them, so 8
   servers' common libraries are not counted 8 times);
2. work: one scripted agent per user (the model is the only fake), all at once, over the
   hub's proxy with a hub API token of that user (`access:servers!user=<name>`), through the
   HTTP API (`POST /user/<name>/agent-tools/api/runs/{id}/calls`): it opens a run and does
   --rounds times write, read, edit, grep, ast_grep (over the modules), lsp hover, eval of a
   small pandas snippet, notebook insert+run, bash; then closes its run. Every answer is
   checked (ok, and the value expected); a call that answers `running` is waited for with
   `job wait` (its time counted in the call's). Meanwhile every tree is sampled every 0.5 s:
   each user's peak, and the peak of the sum over all users at one instant;
3. after: every tree 5 s after the last run closed, and once the idle release has given
   back what the server kept only to be quick (no child process left: kernels, language
   servers, search workers), with the time that took.

Prints a table per user (MiB), the per-tool p50 / p99 / max over all users' calls (client
side, through the proxy), the errors (every non-ok or unexpected answer, HTTP error or
exception: the target is 0), and the machine's load average before and after (this
benchmark is usually run on 2 shared cores).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.metadata
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

REPO = Path(__file__).resolve().parent.parent
# tests/hub's helpers are a plain module (not a package): the hub the tests run, as a library.
sys.path.insert(0, str(REPO / "tests" / "hub"))
hub_helpers: Any = importlib.import_module("hub_helpers")

MIB = 2**20
SAMPLE_SECONDS = 0.5
AFTER_CLOSE_SECONDS = 5.0
RELEASE_BOUND_SECONDS = 90.0
CALL_TIMEOUT_SECONDS = 300.0
EMPTY_NOTEBOOK = (
    '{"cells": [], "metadata": {"kernelspec": {"name": "python3", "language": "python",'
    ' "display_name": "Python 3"}, "language_info": {"name": "python"}}, "nbformat": 4,'
    ' "nbformat_minor": 5}')
PANDAS = ("import pandas as pd\n"
          "df = pd.DataFrame({'w': range(100), 'h': 2})\n"
          "int((df.w * df.h).sum())")
TOOLS = ["write", "read", "edit", "grep", "ast_grep", "lsp hover", "eval (pandas)",
         "notebook insert+run", "bash"]


# -- memory of a process tree ------------------------------------------------------------------

def rss_pss(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of one process in bytes; PSS is RSS where smaps_rollup cannot be read."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        try:
            rss = psutil.Process(pid).memory_info().rss
        except psutil.Error:
            return 0, 0
        return rss, rss
    values = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in ("Rss", "Pss"):
            values[key] = int(rest.split()[0]) * 1024
    return values.get("Rss", 0), values.get("Pss", values.get("Rss", 0))


def descendants(roots: list[int]) -> dict[int, list[int]]:
    """Each root's pid and its descendants' (one scan of /proc for all roots)."""
    parent_of: dict[int, int] = {}
    for process in psutil.process_iter(["ppid", "status"]):
        if process.info["status"] != psutil.STATUS_ZOMBIE:
            parent_of[process.pid] = process.info["ppid"]
    children: dict[int, list[int]] = defaultdict(list)
    for pid, ppid in parent_of.items():
        children[ppid].append(pid)
    trees = {}
    for root in roots:
        found, stack = [], [root]
        while stack:
            pid = stack.pop()
            found.append(pid)
            stack.extend(children.get(pid, []))
        trees[root] = found
    return trees


def measure(pids: dict[str, int]) -> dict[str, tuple[int, int, int]]:
    """user -> (tree RSS, tree PSS, child processes)."""
    trees = descendants(list(pids.values()))
    out = {}
    for user, pid in pids.items():
        rss = pss = 0
        for member in trees[pid]:
            one_rss, one_pss = rss_pss(member)
            rss, pss = rss + one_rss, pss + one_pss
        out[user] = (rss, pss, len(trees[pid]) - 1)
    return out


def label(command: str) -> str:
    """What a child process of a server is, in a few words."""
    if "jupyter_agent_tools.structural.worker" in command:
        return "search worker (structural)"
    if "ipykernel" in command:
        return "kernel (ipykernel)"
    return " ".join(command.split())[:100]


def child_commands(pid: int) -> list[str]:
    lines = []
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process(pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                lines.append(label(" ".join(child.cmdline())))
    return lines


class Sampler(threading.Thread):
    """Every SAMPLE_SECONDS: each user's tree; keeps each user's peak and the peak total."""

    def __init__(self, pids: dict[str, int]) -> None:
        super().__init__(daemon=True)
        self.pids = pids
        self.peak_rss = dict.fromkeys(pids, 0)
        self.peak_pss = dict.fromkeys(pids, 0)
        self.peak_total_rss = self.peak_total_pss = 0
        self.samples = 0
        self.sample_seconds: list[float] = []
        self.cpu_seconds = 0.0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            started = time.perf_counter()
            now = measure(self.pids)
            self.sample_seconds.append(time.perf_counter() - started)
            for user, (rss, pss, _) in now.items():
                self.peak_rss[user] = max(self.peak_rss[user], rss)
                self.peak_pss[user] = max(self.peak_pss[user], pss)
            self.peak_total_rss = max(self.peak_total_rss, sum(v[0] for v in now.values()))
            self.peak_total_pss = max(self.peak_total_pss, sum(v[1] for v in now.values()))
            self.samples += 1
            self._halt.wait(max(0.0, SAMPLE_SECONDS - (time.perf_counter() - started)))
        self.cpu_seconds = time.thread_time()

    def stop(self) -> None:
        self._halt.set()
        self.join()


# -- the users' projects and agents -----------------------------------------------------------

def project(home: Path, files: int) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n")
    (home / "app.py").write_text("total = 0\nfor i in range(3):\n    total += i\nprint(total)\n")
    (home / "n.ipynb").write_text(EMPTY_NOTEBOOK)
    package = home / "pkg"
    package.mkdir(exist_ok=True)
    body = "".join(f"def f{i}(x: int) -> int:\n    y = x + {i}\n    return y * 2\n\n"
                   for i in range(200))
    for index in range(files):
        (package / f"m{index}.py").write_text(body)


@dataclass
class Agent:
    """One user's scripted agent: a run over the hub's proxy, its calls timed and checked."""

    user: str
    client: httpx.Client
    files: int
    #: (tool, round) -> seconds of each call
    latencies: dict[tuple[str, int], list[float]] = field(
        default_factory=lambda: defaultdict(list))
    round_: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    calls: int = 0

    @property
    def api(self) -> str:
        return f"/user/{self.user}/agent-tools/api/"

    def call(self, run_id: str, label: str, tool: str, args: dict[str, Any],
             expect: str | None = None) -> None:
        started = time.perf_counter()
        self.calls += 1
        try:
            result = self._call(run_id, tool, args)
            while result.get("ok") and (result.get("data") or {}).get("status") == "running":
                result = self._call(run_id, "job", {
                    "action": "wait", "job_id": result["data"]["job_id"]})
        except (httpx.HTTPError, ValueError, KeyError) as error:
            self.errors.append(f"{self.user} {label}: {type(error).__name__}: {error}")
            return
        finally:
            self.latencies[label, self.round_].append(time.perf_counter() - started)
        if not result.get("ok"):
            self.errors.append(f"{self.user} {label}: {str(result)[:300]}")
        elif expect is not None and expect not in result.get("text", ""):
            self.errors.append(f"{self.user} {label}: {expect!r} not in "
                               f"{result.get('text', '')[:300]!r}")

    def _call(self, run_id: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        response = self.client.post(f"{self.api}runs/{run_id}/calls",
                                    json={"tool": tool, "args": args})
        if response.status_code != 200:
            return {"ok": False, "text": f"HTTP {response.status_code}: {response.text[:200]}"}
        return response.json()

    def work(self, rounds: int, start: threading.Barrier) -> None:
        start.wait()
        began = time.perf_counter()
        try:
            created = self.client.post(f"{self.api}runs", json={"cwd": "."})
            if created.status_code != 201:
                self.errors.append(f"{self.user} create run: HTTP {created.status_code}")
                return
            run_id = created.json()["id"]
            for round_ in range(rounds):
                self.round_ = round_
                self.task(run_id, round_)
            closed = self.client.delete(f"{self.api}runs/{run_id}")
            if closed.status_code != 204:
                self.errors.append(f"{self.user} close run: HTTP {closed.status_code}")
        except httpx.HTTPError as error:
            self.errors.append(f"{self.user}: {type(error).__name__}: {error}")
        finally:
            self.seconds = time.perf_counter() - began

    def task(self, run_id: str, round_: int) -> None:
        path = f"work/area{round_}.py"
        self.call(run_id, "write", "write", {"path": path, "content": (
            "def area(w: int, h: int) -> int:\n    return w * h\n\nprint(area(3, 4))\n")})
        self.call(run_id, "read", "read", {"path": path}, expect="return w * h")
        self.call(run_id, "edit", "edit", {"path": path, "old_string": "return w * h",
                                           "new_string": "return max(w, 0) * h"})
        self.call(run_id, "grep", "grep", {"pattern": r"def area\(", "path": "work"},
                  expect=f"area{round_}.py")
        self.call(run_id, "ast_grep", "ast_grep", {
            "pattern": "return $A * 2", "language": "python", "path": "pkg", "max_results": 5})
        self.call(run_id, "lsp hover", "lsp", {"action": "hover", "file": "app.py", "line": 4,
                                               "symbol": "total"}, expect="int")
        self.call(run_id, "eval (pandas)", "eval", {
            "code": PANDAS, "description": "sum a small pandas frame of widths and heights"}, expect="9900")
        self.call(run_id, "notebook insert+run", "notebook", {
            "action": "insert", "path": "n.ipynb", "run": True,
            "source": f"print(6 * 7 + {round_})"}, expect=str(42 + round_))
        self.call(run_id, "bash", "bash", {"command": "ls pkg | wc -l && grep -c area work/*.py"},
                  expect=str(self.files))


# -- the benchmark -----------------------------------------------------------------------------

def mib(value: float) -> str:
    return f"{value / MIB:7.0f}"


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2,
                        help="times each agent does the mixed task (default 2)")
    parser.add_argument("--files", type=int, default=100,
                        help="modules of 200 functions in each user's project (default 100)")
    parser.add_argument("--release-seconds", type=float, default=10.0,
                        help="c.Runtime.idle_release_seconds of the servers (default 10)")
    parser.add_argument("--keep", action="store_true", help="keep the hub's state directory")
    options = parser.parse_args()

    proxy = shutil.which("configurable-http-proxy") or str(
        REPO / ".tools/node/node_modules/.bin/configurable-http-proxy")
    if not os.access(proxy, os.X_OK):
        print("configurable-http-proxy is absent: run scripts/setup.sh, or put "
              ".tools/node/node_modules/.bin on PATH")
        return 2
    users = [f"user{index}" for index in range(1, options.users + 1)]
    state = Path(tempfile.mkdtemp(prefix="bench-hub-"))
    for user in users:
        project(state / "home" / user, options.files)
    load_before = os.getloadavg()
    print(f"JupyterHub {importlib.metadata.version('jupyterhub')}; {len(users)} users, {options.rounds} round(s) of the mixed task each, "
          f"{options.files} modules per project, idle_release_seconds "
          f"{options.release_seconds:g}; {os.cpu_count()} CPUs, load average "
          f"{load_before[0]:.2f} / {load_before[1]:.2f} / {load_before[2]:.2f}", flush=True)

    hub = hub_helpers.Hub(state, users=users, server_config={
        "Runtime": {"idle_release_seconds": options.release_seconds}})
    started = time.perf_counter()
    try:
        hub.start()
        # Two at a time: eight servers importing JupyterLab at once on 2 cores would take
        # longer than the helpers' spawn timeout.
        for index in range(0, len(users), 2):
            batch = users[index:index + 2]
            for user in batch:
                hub.request_spawn(user)
            for user in batch:
                hub.wait_ready(user)
        print(f"hub and {len(users)} servers up in {time.perf_counter() - started:.0f} s",
              flush=True)
        pids = {user: int(hub.server(user)["state"]["pid"]) for user in users}
        clients = {user: httpx.Client(
            base_url=hub.url, timeout=CALL_TIMEOUT_SECONDS,
            headers={"Authorization": "token " + hub.token(
                user, [f"access:servers!user={user}"])}) for user in users}
        for user, client in clients.items():
            status = client.get(f"/user/{user}/agent-tools/api/status")
            assert status.status_code == 200, (user, status.status_code, status.text[:300])
        time.sleep(5)
        idle = measure(pids)
        for user, (_, _, children) in idle.items():
            if children:
                print(f"note: {user}'s idle server has {children} child process(es): "
                      f"{child_commands(pids[user])}")

        agents = {user: Agent(user, clients[user], options.files) for user in users}
        sampler = Sampler(pids)
        sampler.start()
        barrier = threading.Barrier(len(users))
        threads = [threading.Thread(target=agent.work, args=(options.rounds, barrier))
                   for agent in agents.values()]
        work_started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        work_seconds = time.perf_counter() - work_started
        closed_at = time.perf_counter()
        sampler.stop()
        time.sleep(AFTER_CLOSE_SECONDS)
        after_close = measure(pids)
        held = child_commands(pids[users[0]])

        # The release: every server's tree back to the server alone (or the bound).
        released_in: dict[str, float | None] = dict.fromkeys(users)
        while time.perf_counter() - closed_at < RELEASE_BOUND_SECONDS:
            now = measure(pids)
            for user, (_, _, children) in now.items():
                if not children and released_in[user] is None:
                    released_in[user] = time.perf_counter() - closed_at
            if all(value is not None for value in released_in.values()):
                break
            time.sleep(0.5)
        time.sleep(1)
        after_release = measure(pids)
        load_after = os.getloadavg()

        for client in clients.values():
            client.close()
    finally:
        hub.stop()
        if options.keep:
            print(f"state kept in {state}")
        else:
            shutil.rmtree(state, ignore_errors=True)

    # -- the figures ---------------------------------------------------------------------------
    print(f"\nall {len(users)} agents at once: {work_seconds:.1f} s wall "
          f"(each agent {min(a.seconds for a in agents.values()):.1f}-"
          f"{max(a.seconds for a in agents.values()):.1f} s); {sampler.samples} samples every "
          f"{SAMPLE_SECONDS} s (a sample took {statistics.median(sampler.sample_seconds) * 1000:.0f}"
          f" ms, p50; the sampler's CPU {sampler.cpu_seconds:.1f} s: reading smaps_rollup)")
    print("\nper-user process tree (server + descendants), MiB: RSS / PSS")
    print(f"{'user':<8} {'idle':>17} {'peak':>17} {'after +5 s':>17} {'after release':>17}"
          f"  {'released in':>11}")

    def pair(rss: float, pss: float) -> str:
        return f"{mib(rss)} /{mib(pss)}"

    for user in users:
        released = released_in[user]
        took = (f"{released:.0f} s" if released is not None
                else f"> {RELEASE_BOUND_SECONDS:.0f} s")
        print(f"{user:<8} {pair(*idle[user][:2])} "
              f"{pair(sampler.peak_rss[user], sampler.peak_pss[user])}"
              f" {pair(*after_close[user][:2])} {pair(*after_release[user][:2])}  {took:>11}")

    def med(values: list[float]) -> float:
        return statistics.median(values)

    print(f"{'median':<8} {pair(med([idle[u][0] for u in users]), med([idle[u][1] for u in users]))}"
          f" {pair(med(list(sampler.peak_rss.values())), med(list(sampler.peak_pss.values())))}"
          f" {pair(med([after_close[u][0] for u in users]), med([after_close[u][1] for u in users]))}"
          f" {pair(med([after_release[u][0] for u in users]), med([after_release[u][1] for u in users]))}")
    print(f"{'max':<8} {pair(max(idle[u][0] for u in users), max(idle[u][1] for u in users))}"
          f" {pair(max(sampler.peak_rss.values()), max(sampler.peak_pss.values()))}"
          f" {pair(max(after_close[u][0] for u in users), max(after_close[u][1] for u in users))}"
          f" {pair(max(after_release[u][0] for u in users), max(after_release[u][1] for u in users))}")
    print(f"all {len(users)} users at one instant, peak: RSS {sampler.peak_total_rss / MIB:.0f} MiB,"
          f" PSS {sampler.peak_total_pss / MIB:.0f} MiB (idle: RSS "
          f"{sum(v[0] for v in idle.values()) / MIB:.0f}, PSS "
          f"{sum(v[1] for v in idle.values()) / MIB:.0f})")
    print(f"held by {users[0]}'s server {AFTER_CLOSE_SECONDS:g} s after its run closed "
          f"({len(held)} processes):")
    for line in held:
        print(f"  {line}")
    for user in users:
        if released_in[user] is None:
            print(f"  {user} still runs: {after_release[user][2]} child process(es)")

    print("\nper tool, over all users' calls (through the hub's proxy), ms; the first round"
          " starts what the tool needs (kernel, language server, search workers)")
    print(f"{'tool':<22} {'calls':>5} {'p50':>8} {'p99':>8} {'max':>8} {'1st round p50':>14}"
          f" {'later p50':>10}")
    for tool in TOOLS:
        by_round = [[s for agent in agents.values() for s in agent.latencies.get((tool, r), [])]
                    for r in range(options.rounds)]
        samples = [s for one in by_round for s in one]
        later = [s for one in by_round[1:] for s in one]
        if samples:
            print(f"{tool:<22} {len(samples):>5} {percentile(samples, 0.5) * 1000:8.0f} "
                  f"{percentile(samples, 0.99) * 1000:8.0f} {max(samples) * 1000:8.0f} "
                  f"{percentile(by_round[0], 0.5) * 1000:14.0f} "
                  f"{(percentile(later, 0.5) * 1000 if later else float('nan')):10.0f}")
    errors = [error for agent in agents.values() for error in agent.errors]
    calls = sum(agent.calls for agent in agents.values())
    print(f"\nerrors: {len(errors)} of {calls} calls (target 0)")
    for error in errors[:20]:
        print("  " + error)
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} "
          f"(1 min; {os.cpu_count()} CPUs)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
