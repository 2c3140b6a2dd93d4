"""The package as a user gets it: sdist, then a wheel built from the sdist with no npm, installed
into a fresh virtualenv, then what the README promises of that install.

Steps (each prints a line with its time):
  1. build the sdist from the checkout (the labextension must be built: `make setup`), and
     check it holds every file git tracks plus the prebuilt labextension (check-manifest's
     rule);
  2. build the wheel from the unpacked sdist with a PATH that has no npm or node, and check
     it holds the labextension, the server config, the demo's sample project and LICENSE;
  3. install the wheel (no extras) into a fresh virtualenv;
  4. `jupyter labextension list` and `jupyter server extension list`: enabled and OK;
  5. `jupyter agent-tools demo` under a home folder whose path is long: every step ok;
  6. `jupyter lab` from that virtualenv, opened in headless chromium (Playwright, Debian's
     /usr/bin/chromium): the Agent Tools panel opens and the server answers its status.

Run with the development virtualenv's Python (it has Playwright):

    .venv/bin/python scripts/check_dist.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]
# What the wheel must hold beside the Python package (paths inside the wheel).
WHEEL_MUST_HOLD = [
    "{data}/data/share/jupyter/labextensions/jupyter-agent-tools/package.json",
    "{data}/data/share/jupyter/labextensions/jupyter-agent-tools/install.json",
    "{data}/data/share/jupyter/labextensions/jupyter-agent-tools/static/style.js",
    "{data}/data/etc/jupyter/jupyter_server_config.d/jupyter_agent_tools.json",
    "jupyter_agent_tools/demo/sample_project/main.py",
    "jupyter_agent_tools/demo/sample_project/inventory/stock.py",
    "jupyter_agent_tools/kernels/inkernel/deno_bridge.js",
    "{dist_info}/licenses/LICENSE",
]
_started = time.monotonic()


class CheckFailed(RuntimeError):
    """A check of the package failed; the message says which and what was seen."""


@contextlib.contextmanager
def step(title: str) -> Iterator[None]:
    """Print the step when it starts and its time when it ends."""
    print(f"[{time.monotonic() - _started:6.1f}s] {title} ...", flush=True)
    began = time.monotonic()
    yield
    print(f"[{time.monotonic() - _started:6.1f}s]   done in {time.monotonic() - began:.1f}s",
          flush=True)


def clean_env(path: str, **more: str) -> dict[str, str]:
    """The environment of a user's shell: no virtualenv, no PYTHONPATH onto the checkout."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "JUPYTER_PATH",
                        "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR")}
    return {**env, "PATH": path, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1", **more}


def run(argv: list[str | Path], env: dict[str, str], cwd: Path | None = None,
        timeout: float = 600) -> str:
    """Run a command; its output (stdout and stderr), or CheckFailed with its tail."""
    done = subprocess.run([str(a) for a in argv], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)
    output = done.stdout + done.stderr
    if done.returncode != 0:
        raise CheckFailed(f"{' '.join(map(str, argv))} exited {done.returncode}:\n"
                          f"{output[-4000:]}")
    return output


def make_venv(where: Path, *requirements: str | Path) -> Path:
    """A fresh virtualenv with `requirements` installed; its bin folder."""
    run([sys.executable, "-m", "venv", "--without-pip", where], clean_env(os.environ["PATH"]))
    # The development venv's pip installs into the new one: no ensurepip download, no upgrade.
    bin_dir = where / "bin"
    if requirements:
        run([sys.executable, "-m", "pip", "--python", bin_dir / "python", "install", "--quiet",
             *requirements], clean_env(f"{bin_dir}:{os.environ['PATH']}"), timeout=1200)
    return bin_dir


def tracked_files() -> set[str]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode()
    return {name for name in listed.split("\0") if name and (ROOT / name).exists()}


def build_sdist(out: Path, build_bin: Path) -> Path:
    if not (ROOT / "labextension/build/package.json").is_file():
        raise CheckFailed("labextension/build is missing: build it first (`make setup`)")
    run([build_bin / "python", "-m", "build", "--sdist", "--outdir", out, ROOT],
        clean_env(f"{build_bin}:{os.environ['PATH']}"))
    (sdist,) = out.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    missing = sorted(tracked_files() - names)
    if missing:
        raise CheckFailed(f"the sdist lacks files git tracks: {missing[:20]}")
    for needed in ("labextension/build/package.json", "labextension/build/static/style.js",
                   "LICENSE", "jupyter_agent_tools/_version.py"):
        if needed not in names:
            raise CheckFailed(f"the sdist lacks {needed}")
    untracked = sorted(n for n in names - tracked_files()
                       if not n.startswith("labextension/build/") and n != "PKG-INFO"
                       and not n.endswith("/"))
    if untracked:
        raise CheckFailed(f"the sdist holds files git does not track: {untracked[:20]}")
    return sdist


def build_wheel_from_sdist(sdist: Path, out: Path, build_bin: Path) -> Path:
    unpacked = out / "unpacked"
    with tarfile.open(sdist) as archive:
        archive.extractall(unpacked, filter="data")
    (source,) = unpacked.iterdir()
    no_node = str(build_bin)  # the build venv only: no npm, no node
    for tool in ("npm", "node", "jlpm"):
        if shutil.which(tool, path=no_node):
            raise CheckFailed(f"{tool} is on the no-node PATH {no_node}")
    run([build_bin / "python", "-m", "build", "--wheel", "--outdir", out, source],
        clean_env(no_node))
    (wheel,) = out.glob("*.whl")
    version = re.search(r'__version__ = "([^"]+)"',
                        (ROOT / "jupyter_agent_tools/_version.py").read_text())
    assert version is not None
    archive = zipfile.ZipFile(wheel)
    names = set(archive.namelist())
    stem = f"jupyter_agent_tools-{version[1]}"
    for needed in WHEEL_MUST_HOLD:
        path = needed.format(data=f"{stem}.data", dist_info=f"{stem}.dist-info")
        if path not in names:
            raise CheckFailed(f"the wheel lacks {path}")
    # npm's version of the panel is its own field: it must say the package's version too.
    panel = json.loads(archive.read(WHEEL_MUST_HOLD[0].format(data=f"{stem}.data")))
    if panel["version"] != version[1]:
        raise CheckFailed(f"labextension/package.json says version {panel['version']}, "
                          f"_version.py says {version[1]}")
    return wheel


def check_extensions(bin_dir: Path, env: dict[str, str]) -> None:
    listing = re.sub(r"\x1b\[[0-9;]*m", "", run([bin_dir / "jupyter", "labextension", "list"],
                                                 env))
    line = next((ln for ln in listing.splitlines() if "jupyter-agent-tools" in ln), "")
    if not ("enabled" in line and "OK" in line):
        raise CheckFailed(f"jupyter labextension list: not enabled and OK:\n{listing}")
    print(f"    labextension: {line.strip()}")
    check_server_extensions(bin_dir, env, "jupyter_agent_tools")


def check_server_extensions(bin_dir: Path, env: dict[str, str], *names: str) -> None:
    """`jupyter server extension list` shows each of `names` enabled and OK."""
    listing = re.sub(r"\x1b\[[0-9;]*m", "", run([bin_dir / "jupyter", "server", "extension",
                                                 "list"], env))
    for name in names:
        if not (re.search(rf"{name}\s+enabled", listing)
                and re.search(rf"{name} \S+ OK", listing)):
            raise CheckFailed(f"jupyter server extension list: {name} not enabled and OK:\n"
                              f"{listing}")
    print(f"    server extensions: {', '.join(names)} enabled, OK")


def scratch_folder(stack: contextlib.ExitStack, keep: Path | None, prefix: str) -> Path:
    """Where a check works: `keep` (made if missing, and kept), else a temporary folder removed
    when `stack` closes."""
    if keep:
        folder = keep.resolve()
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    return Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=prefix)))


def check_demo(bin_dir: Path, env: dict[str, str], scratch: Path) -> None:
    # Kernels' sockets and connection files under a long home once failed: "File name too long".
    home = scratch / ("a-home-folder-whose-path-is-long-" * 4)
    home.mkdir(parents=True)
    workdir = scratch / "demo-cwd"
    workdir.mkdir()
    output = run([bin_dir / "jupyter", "agent-tools", "demo"], {**env, "HOME": str(home)},
                 cwd=workdir, timeout=600)
    summary = output.strip().splitlines()[-1]
    if not summary.endswith(" 0 failed, 0 skipped."):
        raise CheckFailed(f"the demo: {summary}\n{output[-6000:]}")
    print(f"    demo (home: {len(str(home))} characters): {summary}")


@contextlib.contextmanager
def jupyter_lab(bin_dir: Path, env: dict[str, str], scratch: Path) -> Iterator[tuple[str, str]]:
    """`jupyter lab` as a user starts it (the extension enabled by the wheel's config); its
    URL and token."""
    runtime = scratch / "lab-runtime"
    runtime.mkdir()
    token = secrets.token_hex(16)
    argv = [str(bin_dir / "jupyter"), "lab", "--no-browser", "--ip=127.0.0.1", "--port=0",
            "--ServerApp.port_retries=0", "--ServerApp.allow_root=True",
            f"--ServerApp.root_dir={scratch}", f"--IdentityProvider.token={token}",
            f"--LabApp.user_settings_dir={scratch / 'lab-settings'}",
            f"--LabApp.workspaces_dir={scratch / 'lab-workspaces'}",
            "--LabApp.news_url=None", "--LabApp.expose_app_in_browser=True",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    log_path = scratch / "lab.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                   env={**env, "JUPYTER_RUNTIME_DIR": str(runtime)},
                                   start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (found := list(runtime.glob("jpserver-*.json"))):
            if process.poll() is not None or time.monotonic() > deadline:
                raise CheckFailed(f"jupyter lab did not start:\n{log_path.read_text()[-4000:]}")
            time.sleep(0.2)
        time.sleep(0.2)  # the file is written whole right after it is created
        yield json.loads(found[0].read_text())["url"], token
    finally:
        os.killpg(process.pid, 15)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait()


def open_panel(url: str, token: str, screenshot: Path) -> None:
    """Load the lab in headless chromium, open the Agent Tools panel, see the server answer."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                             headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(120_000)
            # The panel asks for the status when the lab starts or when it opens.
            statuses: list[int] = []
            page.on("response", lambda response: statuses.append(response.status)
                    if "agent-tools/api/status" in response.url else None)
            page.goto(f"{url}lab?token={token}")
            page.wait_for_function("() => window.jupyterapp && window.jupyterapp.commands"
                                   ".hasCommand('agent-tools:open-panel')")
            # Opened once the lab has restored its layout, as a person would click it. (Opened
            # during the restore, the panel once showed but never asked for the status.)
            page.evaluate("() => window.jupyterapp.restored")
            page.evaluate("() => window.jupyterapp.commands.execute('agent-tools:open-panel')")
            page.locator("#agent-tools-panel").wait_for(state="visible")
            deadline = time.monotonic() + 60
            while 200 not in statuses and time.monotonic() < deadline:
                page.wait_for_timeout(200)
            page.screenshot(path=str(screenshot))
            if 200 not in statuses:
                raise CheckFailed(f"the panel got no status from the server (answers: "
                                  f"{statuses}); see {screenshot}")
        finally:
            browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    options = parser.parse_args()
    with contextlib.ExitStack() as stack:
        scratch = scratch_folder(stack, options.keep, "dist-")
        try:
            with step("a build environment (build)"):
                build_bin = make_venv(scratch / "build-env", "build")
            with step("sdist from the checkout, checked against git's files"):
                sdist = build_sdist(scratch / "sdist", build_bin)
            with step("wheel from the sdist, with no npm or node on PATH"):
                wheel = build_wheel_from_sdist(sdist, scratch / "wheel", build_bin)
            with step(f"install {wheel.name} into a fresh virtualenv"):
                bin_dir = make_venv(scratch / "venv", wheel)
            env = clean_env(f"{bin_dir}:/usr/local/bin:/usr/bin:/bin")
            with step("jupyter labextension list, jupyter server extension list"):
                check_extensions(bin_dir, env)
            with step("jupyter agent-tools demo under a long home path"):
                check_demo(bin_dir, env, scratch)
            with step("jupyter lab with the panel open in headless chromium"):
                began = time.monotonic()
                with jupyter_lab(bin_dir, env, scratch) as (url, token):
                    open_panel(url, token, scratch / "panel.png")
                print(f"    lab start to panel open: {time.monotonic() - began:.1f}s")
        except CheckFailed as failure:
            print(f"check_dist: FAILED: {failure}", file=sys.stderr)
            return 1
    print(f"check_dist: the sdist, the wheel and a default install are as promised "
          f"({time.monotonic() - _started:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
