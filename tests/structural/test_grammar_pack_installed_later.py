"""A grammar pack installed while the server runs is used on the next call, in the server
and in the search workers that started without it.

The server runs in a virtual environment of its own whose site-packages hold the test
environment's packages (linked) but for tree-sitter-language-pack. It searches (its
workers start and find no pack), then the test installs the pack there (links its package
folder into that site-packages, as pip would unpack it) and the server, still running with
the same workers, is asked again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

SITE_PACKAGES = Path(sysconfig.get_paths()["purelib"])
PACK = "tree_sitter_language_pack"

SERVER = r'''
import asyncio, json, sys
from jupyter_agent_tools import Resource, Runtime

async def main(root):
    runtime = Runtime(root_dir=root, resource_providers=[
        "jupyter_agent_tools.structural.provider:ParserProvider"])
    run = await runtime.create_run()
    pool = runtime.provider(Resource.PARSER).pool

    async def calls():
        answers = {}
        for name, tool, args in [
                ("python", "ast_grep", {"pattern": "return $X", "path": "app.py"}),
                ("several", "ast_grep", {"pattern": "x = $A\nreturn $B", "path": "app.py"}),
                ("dart", "ast_grep", {"pattern": "print($X)", "path": "main.dart"}),
                ("julia", "ast_grep", {"pattern": "f($X)", "path": ".", "language": "julia"})]:
            result = await run.call(tool, args)
            answers[name] = {"ok": result.ok, "code": result.code,
                             "total": (result.data or {}).get("total"),
                             "text": result.text if not result.ok else ""}
        answers["status"] = (await runtime.provider(Resource.PARSER).status())["grammar_pack"]
        answers["workers"] = sorted(w.pid for w in pool.workers if w.alive())
        return answers

    print(json.dumps(await calls()), flush=True)
    sys.stdin.readline()  # the test installs the pack meanwhile
    print(json.dumps(await calls()), flush=True)
    await runtime.shutdown()

asyncio.run(main(sys.argv[1]))
'''


@pytest.fixture
def venv_without_pack(tmp_path: Path) -> tuple[Path, Path]:
    """A virtual environment with the test environment's packages but the grammar pack;
    its python and its site-packages."""
    if not (SITE_PACKAGES / PACK).is_dir():
        pytest.skip("tree-sitter-language-pack is not installed here")
    env = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    site = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip())
    for entry in SITE_PACKAGES.iterdir():
        if not entry.name.startswith(PACK):
            (site / entry.name).symlink_to(entry)
    return python, site


def test_a_pack_installed_while_the_server_runs_is_used_on_the_next_call(
        venv_without_pack: tuple[Path, Path], tmp_path: Path) -> None:
    python, site = venv_without_pack
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("def area(r):\n    x = r * r\n    return 3.14 * x\n")
    (root / "main.dart").write_text("void main() { print('hi'); }\n")
    (root / "f.jl").write_text("f(1)\n")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    server = subprocess.Popen([str(python), "-c", SERVER, str(root)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        assert server.stdout is not None and server.stdin is not None
        before = json.loads(server.stdout.readline())
        assert before["python"]["ok"] and before["python"]["total"] == 1, before
        # Without the pack: ast-grep's languages only, and no matcher of several statements.
        assert before["several"]["code"] == "unparseable_pattern", before
        assert "tree-sitter-language-pack" in before["several"]["text"]
        assert before["dart"]["code"] == "unavailable", before
        assert before["julia"]["code"] == "unavailable", before
        assert "not installed" in before["status"]
        assert before["workers"], "the search started the workers"
        # Installed, as pip unpacks it: the package and its metadata in site-packages.
        for entry in SITE_PACKAGES.iterdir():
            if entry.name.startswith(PACK):
                (site / entry.name).symlink_to(entry)
        server.stdin.write("installed\n")
        server.stdin.flush()
        after = json.loads(server.stdout.readline())
        assert after["workers"] == before["workers"], "the same worker processes"
        assert after["several"]["ok"] and after["several"]["total"] == 1, after
        assert after["dart"]["ok"] and after["dart"]["total"] == 1, after
        assert after["julia"]["ok"] and after["julia"]["total"] == 1, after
        assert after["status"] == "tree-sitter-language-pack: installed"
    finally:
        if server.stdin is not None:
            server.stdin.close()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
