"""The Deno kernelspec: JavaScript eval runs in Deno's built-in Jupyter kernel.

The PyPI `deno` package (the `[js]` extra) ships the binary; this module writes a kernelspec
for it into the environment (`sys.prefix`), so the kernel manager of that environment finds
it. The kernel factory does so at first use (`register_at_first_use`); by hand::

    python -m jupyter_agent_tools.kernels.deno_spec --install
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from jupyter_client.kernelspec import KernelSpecManager

KERNEL_NAME = "deno"
INSTALL = "pip install 'jupyter-agent-tools[js]'"


def deno_binary() -> str | None:
    """The Deno binary shipped by the `deno` package, or None when it is not installed."""
    try:
        import deno  # type: ignore[import-untyped]  # ships no type information
    except ImportError:
        return None
    try:
        return str(deno.find_deno_bin())
    except (FileNotFoundError, OSError):
        return None


def kernel_json(binary: str) -> dict[str, Any]:
    """The kernel.json of the Deno kernel."""
    return {
        "argv": [binary, "jupyter", "--kernel", "--conn", "{connection_file}"],
        "display_name": "Deno (JavaScript)",
        "language": "typescript",
        # With signal interrupts the Deno kernel process dies; it handles interrupt_request.
        "interrupt_mode": "message",
        "env": {"DENO_NO_UPDATE_CHECK": "1", "NO_COLOR": "1"},
        "metadata": {"jupyter_agent_tools": {"language": "javascript"}},
    }


def install(prefix: str = sys.prefix, name: str = KERNEL_NAME, user: bool = False) -> str:
    """Write the kernelspec under `prefix`/share/jupyter/kernels (or, `user`, the user's Jupyter
    data folder) and return its directory."""
    binary = deno_binary()
    if binary is None:
        raise RuntimeError(
            f"The `deno` package is not installed; {INSTALL} and run this again."
        )
    with tempfile.TemporaryDirectory() as staging:
        (Path(staging) / "kernel.json").write_text(json.dumps(kernel_json(binary), indent=2))
        return KernelSpecManager().install_kernel_spec(
            staging, kernel_name=name, prefix=None if user else prefix, user=user
        )


def register_at_first_use(name: str = KERNEL_NAME) -> bool:
    """Write the kernelspec when Deno is installed: into this environment, else (a read-only
    one) the user's Jupyter data folder. False when Deno is not installed or nothing is
    writable. Blocking (disk): call it from a thread."""
    if deno_binary() is None:
        return False
    for user in (False, True):
        try:
            install(sys.prefix, name, user=user)
        except OSError:
            continue
        return True
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--install", action="store_true", help="install the kernelspec")
    parser.add_argument("--prefix", default=sys.prefix, help="environment prefix (default: this one)")
    parser.add_argument("--name", default=KERNEL_NAME, help="kernelspec name")
    options = parser.parse_args(argv)
    if not options.install:
        parser.print_help()
        return 2
    try:
        print(install(options.prefix, options.name))
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
