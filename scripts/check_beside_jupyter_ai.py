"""jupyter-agent-tools installed beside jupyter-ai, as `pip install jupyter-ai jupyter-agent-tools`
gives it, and on the oldest `mcp` SDK this package allows (the newest is the development
venv's, which the test suite runs on).

Steps (each prints a line with its time):
  1. `pip install jupyter-ai <this checkout>` into a fresh virtualenv (the newest jupyter-ai;
     its fastmcp 3 pins mcp<2), then `pip check`;
  2. `jupyter server extension list`: jupyter_agent_tools and jupyter-ai's jupyter_server_mcp
     enabled and OK;
  3. a real `jupyter server` (a free port, a token, a scratch root and home): both
     extensions answer (our agent-tools/api/status; jupyter_server_mcp's MCP server on the
     port it publishes), an agent token is minted, and the jupyter-ai entry of
     docs/getting-started.md is written to the root's `.jupyter/mcp_settings.json` with this
     server's URL and that token;
  4. scripts/beside_jupyter_ai_client.py in that virtualenv: jupyter-ai's PersonaManager and
     a persona read the entry, and the installed mcp SDK's client does initialize, tools/list,
     read and eval with state across calls over it (and lists jupyter_server_mcp's tools);
  5. the same on the oldest mcp of pyproject.toml's range (`pip install mcp==<floor>`, then
     `pip check` again and a new server).

Run with the development virtualenv's Python (its pip fills the new virtualenv):

    .venv/bin/python scripts/check_beside_jupyter_ai.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from check_dist import (
    CheckFailed,
    check_server_extensions,
    clean_env,
    make_venv,
    run,
    scratch_folder,
    step,
)

ROOT = Path(__file__).resolve().parents[1]
CLIENT = Path(__file__).resolve().with_name("beside_jupyter_ai_client.py")
_started = time.monotonic()


def mcp_floor() -> str:
    """The oldest mcp release pyproject.toml allows (`mcp>=X,...`)."""
    found = re.search(r'"mcp>=([0-9.]+)[,"]', (ROOT / "pyproject.toml").read_text())
    if found is None:
        raise CheckFailed('pyproject.toml has no "mcp>=X,..." dependency')
    return found[1]


def documented_entry() -> dict[str, object]:
    """The `.jupyter/mcp_settings.json` of docs/getting-started.md's jupyter-ai section."""
    text = (ROOT / "docs/getting-started.md").read_text()
    section = text.split("### jupyter-ai\n", 1)[1]
    return json.loads(section.split("```json\n", 1)[1].split("```", 1)[0])


def pip_check(bin_dir: Path) -> None:
    output = run([sys.executable, "-m", "pip", "--python", bin_dir / "python", "check"],
                 clean_env(f"{bin_dir}:/usr/bin:/bin"))
    print(f"    pip check: {output.strip()}")


def versions(bin_dir: Path, env: dict[str, str]) -> dict[str, str]:
    code = ("import json; from importlib.metadata import version as v; print(json.dumps("
            "{p: v(p) for p in ('mcp', 'fastmcp', 'jupyter_ai', 'jupyter_server_mcp', "
            "'jupyter-agent-tools')}))")
    return json.loads(run([bin_dir / "python", "-c", code], env))


def http_json(url: str, token: str, body: dict[str, object] | None = None) -> object:
    request = urllib.request.Request(
        url, data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


@contextlib.contextmanager
def jupyter_server(bin_dir: Path, env: dict[str, str], scratch: Path, root: Path
                   ) -> Iterator[tuple[str, str, str]]:
    """`jupyter server` with both extensions; its URL, token, and jupyter_server_mcp's URL."""
    runtime = Path(tempfile.mkdtemp(prefix="runtime-", dir=scratch))
    token = secrets.token_hex(16)
    argv = [str(bin_dir / "jupyter"), "server", "--no-browser", "--ip=127.0.0.1", "--port=0",
            "--ServerApp.port_retries=0", "--ServerApp.allow_root=True",
            f"--ServerApp.root_dir={root}", f"--IdentityProvider.token={token}",
            # jupyter-ai's MCP server on a port the OS picks (its default is 3001).
            "--MCPExtensionApp.mcp_port=0",
            # Other servers of this user's may run beside (tests): leave their processes be.
            "--AgentToolsApp.sweep_orphans_at_start=False"]
    log_path = runtime / "server.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                   env={**env, "JUPYTER_RUNTIME_DIR": str(runtime)},
                                   start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (list(runtime.glob("jpserver-[0-9]*.json"))
                   and list(runtime.glob("jpserver-mcp-*.json"))):
            if process.poll() is not None or time.monotonic() > deadline:
                raise CheckFailed(f"jupyter server did not start both extensions:\n"
                                  f"{log_path.read_text()[-6000:]}")
            time.sleep(0.2)
        time.sleep(0.2)  # each file is written whole right after it appears
        url = json.loads(next(runtime.glob("jpserver-[0-9]*.json")).read_text())["url"]
        mcp_url = json.loads(next(runtime.glob("jpserver-mcp-*.json")).read_text())["url"]
        yield url, token, mcp_url
    except CheckFailed as failure:
        raise CheckFailed(f"{failure}\n--- server log ---\n{log_path.read_text()[-6000:]}"
                          ) from None
    finally:
        os.killpg(process.pid, 15)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait()


def round_trip(bin_dir: Path, env: dict[str, str], scratch: Path) -> None:
    """Step 3 and 4 on the mcp installed now."""
    root = Path(tempfile.mkdtemp(prefix="root-", dir=scratch))
    (root / "hello.py").write_text("print('hello')\n")
    with jupyter_server(bin_dir, env, scratch, root) as (url, token, server_mcp_url):
        status = http_json(f"{url}agent-tools/api/status", token)
        assert isinstance(status, dict)
        if "eval" not in status.get("tools", []):
            raise CheckFailed(f"agent-tools/api/status: {status}")
        # An agent token, as Getting started has the user mint one; auto approvals so that
        # eval runs with nobody at the panel.
        minted = http_json(f"{url}agent-tools/api/tokens", token,
                           {"label": "jupyter-ai", "surface": "full", "approvals": "auto"})
        assert isinstance(minted, dict)
        settings = documented_entry()
        text = json.dumps(settings).replace("http://127.0.0.1:8888/", url)
        text = text.replace("<your agent token>", minted["token"])
        (root / ".jupyter").mkdir()
        (root / ".jupyter" / "mcp_settings.json").write_text(text)
        output = run([bin_dir / "python", CLIENT, root, server_mcp_url], env, cwd=root,
                     timeout=300)
        print(f"    {output.strip().splitlines()[-1]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    options = parser.parse_args()
    with contextlib.ExitStack() as stack:
        scratch = scratch_folder(stack, options.keep, "beside-ai-")
        try:
            with step("pip install jupyter-ai and this checkout into a fresh virtualenv"):
                bin_dir = make_venv(scratch / "venv", "jupyter-ai", ROOT)
            home = scratch / "home"
            home.mkdir(exist_ok=True)
            env = clean_env(f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", HOME=str(home))
            print(f"    {versions(bin_dir, env)}")
            with step("pip check"):
                pip_check(bin_dir)
            with step("jupyter server extension list"):
                check_server_extensions(bin_dir, env, "jupyter_agent_tools", "jupyter_server_mcp")
            with step("a server with both; jupyter-ai's personas read the documented entry; "
                      "an MCP round trip over it"):
                round_trip(bin_dir, env, scratch)
            floor = mcp_floor()
            with step(f"the oldest mcp allowed ({floor}): pip check, the round trip again"):
                run([sys.executable, "-m", "pip", "--python", bin_dir / "python", "install",
                     "--quiet", f"mcp=={floor}"], clean_env(f"{bin_dir}:/usr/bin:/bin"))
                pip_check(bin_dir)
                round_trip(bin_dir, env, scratch)
        except CheckFailed as failure:
            print(f"check_beside_jupyter_ai: FAILED: {failure}", file=sys.stderr)
            return 1
    print(f"check_beside_jupyter_ai: both install, load and serve together "
          f"({time.monotonic() - _started:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
