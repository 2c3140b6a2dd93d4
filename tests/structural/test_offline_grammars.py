"""Grammars load with the network unreachable: they ship inside the pinned wheel."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

LANGUAGES = ["python", "javascript", "typescript", "tsx", "dart", "rust", "go", "c", "cpp",
             "java"]

# Runs in a fresh interpreter: first proves the network is really unreachable, then loads
# grammars and searches a file with them.
PROBE = textwrap.dedent(f"""
    import os, socket, sys
    try:
        socket.create_connection(("pypi.org", 443), timeout=3)
    except OSError:
        pass
    else:
        sys.exit("the network is reachable: the test proves nothing")
    from jupyter_agent_tools.structural.cache import TreeCache
    from jupyter_agent_tools.structural.pattern import compile_pattern
    from jupyter_agent_tools.structural.worker import SearchEngine, SearchJob
    for language in {LANGUAGES!r}:
        compile_pattern("f($A)", language)
    engine = SearchEngine(TreeCache(2**20))
    answer = engine.run(SearchJob("print($A)", "python", [sys.argv[1]], 10, 100,
                                  root=os.path.dirname(sys.argv[1])))
    assert answer["total"] == 1, answer
    print("offline ok")
""")

BLOCK_SOCKETS = textwrap.dedent("""
    import socket

    def _refuse(*args, **kwargs):
        raise OSError(101, "Network is unreachable (blocked by the offline test)")

    socket.socket.connect = _refuse
    socket.socket.connect_ex = _refuse
    socket.create_connection = _refuse
    socket.getaddrinfo = _refuse
""")


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again once we leave the block


def _offline_env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "offline-site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCK_SOCKETS)
    proxy = f"http://127.0.0.1:{_closed_port()}"
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update(PYTHONPATH=os.pathsep.join([str(site), env.get("PYTHONPATH", "")]),
               HTTP_PROXY=proxy, HTTPS_PROXY=proxy, ALL_PROXY=proxy, NO_PROXY="")
    return env


def _target(tmp_path: Path) -> str:
    target = tmp_path / "a.py"
    target.write_text("print(1)\n")
    return str(target)


def test_grammars_load_with_sockets_blocked(tmp_path):
    done = subprocess.run([sys.executable, "-c", PROBE, _target(tmp_path)],
                          env=_offline_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "offline ok" in done.stdout


def _unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _unshare_works(), reason="no network namespaces here (needs root)")
def test_grammars_load_in_a_namespace_without_network(tmp_path):
    done = subprocess.run(["unshare", "-n", sys.executable, "-c", PROBE, _target(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "offline ok" in done.stdout
