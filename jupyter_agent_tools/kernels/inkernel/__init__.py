"""Code that runs inside the kernels: read as source and injected, never imported there.

It must stand alone (the kernel may run where this package is not installed).
"""

from __future__ import annotations

from importlib.resources import files


def source(name: str) -> str:
    """The text of an in-kernel file of this folder (`python_bridge.py`, `deno_bridge.js`)."""
    return files(__package__).joinpath(name).read_text(encoding="utf-8")
