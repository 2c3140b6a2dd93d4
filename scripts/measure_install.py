"""How big each install is, and how long from an empty virtualenv to JupyterLab with the panel.

Each install goes into a fresh virtualenv (no pip inside, so none is counted): a bare
`pip install jupyterlab` for reference, then the wheel with no extra and with each extra. For
each: the folder's size on disk, the packages installed (dist-info folders), and the difference
from the bare JupyterLab. Then the time to a working lab: a new virtualenv, `pip install` of the
wheel (pip's cache is warm by then: the installs above filled it), and `jupyter lab` until the
Agent Tools panel is open in headless chromium. Prints a Markdown table (the README's).

    .venv/bin/python scripts/measure_install.py [--wheel dist/….whl]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

# check_dist.py beside this script (the script's folder is first on sys.path).
from check_dist import (
    build_sdist,
    build_wheel_from_sdist,
    clean_env,
    jupyter_lab,
    make_venv,
    open_panel,
)

EXTRAS = ["", "lsp", "basedpyright", "debug", "js", "grammars", "all"]


def size_and_count(venv: Path) -> tuple[int, int]:
    """Bytes of the files under `venv` (links not followed) and the packages installed."""
    total = 0
    for folder, _, files in os.walk(venv):
        for name in files:
            total += os.lstat(os.path.join(folder, name)).st_size
    packages = len(list(venv.glob("lib/python*/site-packages/*.dist-info")))
    return total, packages


def measure(scratch: Path, name: str, requirement: str | Path) -> tuple[int, int, float]:
    began = time.monotonic()
    make_venv(scratch / name, requirement)
    seconds = time.monotonic() - began
    size, count = size_and_count(scratch / name)
    print(f"  {name}: {size / 1e6:.0f} MB, {count} packages, installed in {seconds:.0f}s",
          flush=True)
    return size, count, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="the wheel to measure (default: build one)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="measure-") as tmp:
        scratch = Path(tmp)
        wheel = options.wheel
        if wheel is None:
            print("building the wheel (sdist, then a wheel from it)", flush=True)
            build_bin = make_venv(scratch / "build-env", "build")
            wheel = build_wheel_from_sdist(build_sdist(scratch / "sdist", build_bin),
                                           scratch / "wheel", build_bin)
        wheel = wheel.resolve()
        print("installing into fresh virtualenvs:", flush=True)
        base_size, base_count, _ = measure(scratch, "jupyterlab", "jupyterlab")
        rows = []
        for extra in EXTRAS:
            label = f"jupyter-agent-tools[{extra}]" if extra else "jupyter-agent-tools"
            requirement = f"{wheel}[{extra}]" if extra else wheel
            size, count, _ = measure(scratch, f"venv-{extra or 'default'}", requirement)
            rows.append((label, size, count))

        print("time to JupyterLab with the panel, from an empty virtualenv:", flush=True)
        began = time.monotonic()
        bin_dir = make_venv(scratch / "venv-lab", wheel)
        installed = time.monotonic() - began
        env = clean_env(f"{bin_dir}:/usr/local/bin:/usr/bin:/bin")
        started = time.monotonic()
        with jupyter_lab(bin_dir, env, scratch) as (url, token):
            open_panel(url, token, scratch / "panel.png")
        to_panel = time.monotonic() - started

    print("\n| install | size | packages | over `pip install jupyterlab` |")
    print("|---|---:|---:|---:|")
    print(f"| `pip install jupyterlab` (reference) | {base_size / 1e6:.0f} MB | {base_count} | |")
    for label, size, count in rows:
        print(f"| `pip install '{label}'` | {size / 1e6:.0f} MB | {count} | "
              f"+{(size - base_size) / 1e6:.0f} MB, +{count - base_count} packages |")
    print(f"\nFrom an empty virtualenv: `pip install` {installed:.0f}s (pip's cache warm), "
          f"`jupyter lab` to the panel open {to_panel:.0f}s; Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} cores. Measured by scripts/measure_install.py.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
