"""Sized to the pod (issue 46): the limit the server runs under sizes its caches, a run fits
in it, and a child killed for memory is said to be.

The server runs inside a real memory cgroup made for the test (v2 `memory.max`, or v1's
`memory.limit_in_bytes` where the machine has the v1 memory controller), entered by a shell
that then execs the server. Where no cgroup can be made (not root, no memory controller),
those tests skip, and the limit is read from JupyterHub's MEM_LIMIT instead.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from memory_helpers import DESCRIPTION, EMPTY_NOTEBOOK, project, server_pid, tree, tree_rss

from jupyter_agent_tools.runtime import memory
from jupyter_agent_tools.structural.provider import ParserProvider
from jupyter_agent_tools.testing.server import JupyterServerProcess

MIB = 2**20
GIB = 2**30


def test_mem_limit_sizes_the_tree_cache(monkeypatch):
    monkeypatch.setenv("MEM_LIMIT", "1073741824")  # as KubeSpawner sets it: bytes
    limit = memory.memory_limit()
    assert limit is not None and limit.bytes <= GIB
    assert ParserProvider().max_tree_cache_mb == min(1024, limit.mib // 8)
    monkeypatch.setenv("MEM_LIMIT", "16G")
    assert ParserProvider().max_tree_cache_mb == min(1024, memory.memory_limit().mib // 8)
    configured = ParserProvider(max_tree_cache_mb=300)  # config still overrides
    assert configured.max_tree_cache_mb == 300
    monkeypatch.setenv("MEM_LIMIT", "600M")  # one search worker per 512 MiB of the limit
    if memory.memory_limit().mib == 600:
        assert len(ParserProvider().pool.workers) == 1
        assert len(ParserProvider(workers=2).pool.workers) == 2


def test_sizes_are_read_as_spawners_write_them():
    assert memory.parse_size("1073741824") == GIB
    assert memory.parse_size("1G") == GIB
    assert memory.parse_size("512M") == 512 * MIB
    assert memory.parse_size("1.5Gi") == 3 * GIB // 2
    assert memory.parse_size("") is None
    assert memory.parse_size("lots") is None


def test_no_limit_keeps_the_configured_size(monkeypatch):
    monkeypatch.delenv("MEM_LIMIT", raising=False)
    if memory.memory_limit() is not None:
        pytest.skip("this machine runs the tests under a memory limit")
    assert ParserProvider().max_tree_cache_mb == 1024


@contextlib.contextmanager
def memory_cgroup(limit: int) -> Iterator[Path]:
    """A memory cgroup below the test's own, limited to `limit` bytes; skips where none can
    be made."""
    found = memory.cgroup_memory_dir()
    if found is None:
        pytest.skip("no memory cgroup to nest one in (neither v2 memory.max nor v1 memory)")
    parent, _, version = found
    group = parent / f"agent-tools-test-{uuid.uuid4().hex[:8]}"
    try:
        group.mkdir()
        (group / ("memory.max" if version == 2 else "memory.limit_in_bytes")).write_text(
            str(limit))
        if version == 2:
            (group / "memory.swap.max").write_text("0")
        else:
            with contextlib.suppress(OSError):  # without swap accounting there is no swap
                (group / "memory.memsw.limit_in_bytes").write_text(str(limit))
    except OSError as exc:
        with contextlib.suppress(OSError):
            group.rmdir()
        pytest.skip(f"cannot make a memory cgroup here: {exc}")
    try:
        yield group
    finally:
        for _ in range(100):  # its processes are gone once the server stopped
            with contextlib.suppress(OSError):
                group.rmdir()
                break
            time.sleep(0.1)


def in_cgroup(group: Path) -> list[str]:
    """A launcher that moves itself into `group`, then execs the server (same pid)."""
    return ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(group)]


def tree_pss(pid: int) -> int:
    total = 0
    for process in tree(pid):
        with contextlib.suppress(psutil.Error):
            total += process.memory_full_info().pss
    return total


def oom_kills_in(group: Path) -> int:
    for name in ("memory.events", "memory.oom_control"):
        with contextlib.suppress(OSError):
            for line in (group / name).read_text().splitlines():
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
    return 0


def breakdown(pid: int) -> list[tuple[int, str]]:
    """(RSS in MiB, what) of each process of the tree, largest first."""
    found = []
    for process in tree(pid):
        with contextlib.suppress(psutil.Error):
            found.append((process.memory_info().rss // MIB,
                          " ".join(process.cmdline())[:60].replace("\n", " ")))
    return sorted(found, reverse=True)


class PeakSampler:
    """The largest process-tree PSS (and RSS) seen, sampled every 0.2 s in a thread."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0  # PSS: shared pages split among the processes sharing them
        self.peak_rss = 0
        self.at_peak: list[tuple[int, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(psutil.Error):
                self.peak_rss = max(self.peak_rss, tree_rss(self.pid))
                total = tree_pss(self.pid)
                if total > self.peak:
                    self.peak = total
                    self.at_peak = breakdown(self.pid)
            self._stop.wait(0.2)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def test_a_mixed_run_fits_in_a_1_gib_cgroup(tmp_path):
    project(tmp_path, files=2000)
    with memory_cgroup(GIB) as group, JupyterServerProcess(
            tmp_path, launcher=in_cgroup(group)) as server:
        pid = server_pid(server)
        assert str(group.name) in Path(f"/proc/{pid}/cgroup").read_text()
        client = server.client()
        parser = client.status()["resources"]["parser"]
        assert parser["tree_cache_mb"] == 128, parser  # an eighth of the limit
        assert "1024 MiB (the cgroup's memory limit)" in parser["memory_limit"], parser
        with PeakSampler(pid) as sampler:
            run = client.create_run(conversation_id="pod")
            wrote = run.call("write", {"path": "bad.py", "content": "x: int = 'no'\n"})
            assert wrote.ok and wrote.data["diagnostics"]["new"], wrote.text
            hover = run.call("lsp", {"action": "hover", "file": "app.py", "line": 4,
                                     "symbol": "total"})
            assert hover.ok, hover.text
            evaluated = run.call("eval", {"code": "sum(range(10))", "description": DESCRIPTION})
            assert evaluated.ok and "45" in evaluated.text, evaluated.text
            for _ in range(2):  # the second is served from the caches
                found = run.call("ast_grep", {"pattern": "return $A * 2", "language": "python",
                                              "max_results": 5})
                assert found.ok and found.data["total"] == 2000 * 200, found.text
            launched = run.call("debug", {"action": "launch", "program": "app.py"})
            assert launched.ok, launched.text
            run.call("debug", {"action": "terminate"})
            (tmp_path / "n.ipynb").write_text(EMPTY_NOTEBOOK)
            ran = run.call("notebook", {"action": "insert", "path": "n.ipynb", "run": True,
                                        "source": "print(6 * 7)"})
            assert ran.ok and "42" in ran.text, ran.text
            run.close()
        print(f"\nin a 1 GiB cgroup: peak tree PSS {sampler.peak // MIB} MiB (RSS "
              f"{sampler.peak_rss // MIB} MiB); at the peak, RSS MiB by process: "
              f"{sampler.at_peak}")
        assert oom_kills_in(group) == 0  # nothing was killed for memory
        assert sampler.peak < GIB
        assert psutil.pid_exists(pid) and server.client().status()


def test_a_search_worker_killed_for_memory_says_so(tmp_path):
    """A tree cache configured far past the limit: the kernel's OOM killer ends the worker,
    and the search says it was killed for memory, and what to do."""
    project(tmp_path, files=3000)
    with memory_cgroup(450 * MIB) as group, JupyterServerProcess(
            tmp_path, launcher=in_cgroup(group), extra_args=[
                "--ParserProvider.max_tree_cache_mb=16384",
                "--ParserProvider.workers=1"]) as server:
        run = server.client().create_run()
        found = run.call("ast_grep", {"pattern": "return $A * 2", "language": "python",
                                      "max_results": 5})
        assert not found.ok, found.text
        message = found.error["message"]
        assert "killed for memory" in message and "450 MiB" in message, message
        assert "max_tree_cache_mb" in message and "narrow `path`" in message, message
        narrowed = run.call("ast_grep", {"pattern": "return $A * 2", "language": "python",
                                         "path": "pkg/m1.py"})
        assert narrowed.ok and narrowed.data["total"] == 200, narrowed.text  # a new worker


def test_a_kernel_killed_for_memory_says_so(tmp_path):
    """A cell that takes more than the cgroup allows: the OOM killer ends its kernel, and the
    eval says the kernel was killed for memory; the next eval gets a fresh kernel."""
    project(tmp_path, files=1)
    with memory_cgroup(600 * MIB) as group, JupyterServerProcess(
            tmp_path, launcher=in_cgroup(group),
            extra_args=["--KernelFactory.warm_pool={}"]) as server:
        run = server.client().create_run()
        greedy = run.call("eval", {"code": "hog = b'x' * (2 * 1024**3)",
                                   "description": DESCRIPTION})
        assert not greedy.ok, greedy.text
        message = greedy.error["message"]
        assert "killed for memory" in message and "600 MiB" in message, message
        assert oom_kills_in(group) >= 1
        again = run.call("eval", {"code": "sum(range(10))", "description": DESCRIPTION})
        assert again.ok and "45" in again.text, again.text
