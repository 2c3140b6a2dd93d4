"""The Deno kernelspec: JavaScript eval runs in Deno's built-in Jupyter kernel.

The PyPI `deno` package ships the binary; this module writes a kernelspec for it into the
environment (`sys.prefix`), so the kernel manager of that environment finds it::

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


def install(prefix: str = sys.prefix, name: str = KERNEL_NAME) -> str:
    """Write the kernelspec under `prefix`/share/jupyter/kernels and return its directory."""
    binary = deno_binary()
    if binary is None:
        raise RuntimeError(
            "The `deno` package is not installed; `pip install deno` and run this again."
        )
    with tempfile.TemporaryDirectory() as staging:
        (Path(staging) / "kernel.json").write_text(json.dumps(kernel_json(binary), indent=2))
        return KernelSpecManager().install_kernel_spec(
            staging, kernel_name=name, prefix=prefix
        )


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
