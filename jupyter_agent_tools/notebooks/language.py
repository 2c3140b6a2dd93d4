"""Which language a notebook, and each of its cells, is written in.

The notebook's language is its kernel's (kernelspec, else language_info). In an IPython
notebook a cell magic on the first line (`%%bash`, `%%javascript`) makes the cell another
language, run outside the kernel's namespace, or something to skip (`%%writefile`, an
unknown magic); magics such as `%%time` keep the body in the kernel's language.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_LANGUAGE = "python"

# Spellings kernels use for the same language, as the parsers and language servers name it.
_ALIASES = {
    "python3": "python", "python2": "python", "ipython": "python", "ipython3": "python",
    "js": "javascript", "node": "javascript", "nodejs": "javascript",
    "ts": "typescript", "deno": "typescript",
    "sh": "bash", "shell": "bash",
}

# IPython's cell magics whose body is a program in another language, run by another process.
_SCRIPT_MAGICS = {
    "bash": "bash", "sh": "bash", "javascript": "javascript", "js": "javascript",
    "html": "html", "latex": "latex", "markdown": "markdown", "svg": "svg",
    "perl": "perl", "ruby": "ruby", "python": "python", "python2": "python",
    "python3": "python", "pypy": "python", "sql": "sql", "R": "r",
}
# IPython's cell magics that run their body as ordinary kernel code.
_KERNEL_MAGICS = {"time", "timeit", "capture", "prun", "debug", "px", "autopx"}

_CELL_MAGIC = re.compile(r"\A[ \t]*%%([A-Za-z_][\w.]*)[ \t]*(.*)")


def language_name(name: str) -> str:
    """A language name as the tools spell it (lower case, common aliases folded)."""
    lowered = name.strip().lower()
    return _ALIASES.get(lowered, lowered)


def notebook_language(metadata: Mapping[str, Any]) -> str:
    """The language of a notebook's kernel, from its metadata; python when it says nothing."""
    for section, key in (("kernelspec", "language"), ("language_info", "name")):
        value = (metadata.get(section) or {}).get(key)
        if isinstance(value, str) and value.strip():
            return language_name(value)
    return DEFAULT_LANGUAGE


@dataclass(frozen=True)
class CellLanguage:
    """What a cell's code is: its language, and whether the notebook's kernel runs it."""

    name: str | None  # None: markdown or raw, or a cell magic whose body is not code we know
    runs_in_kernel: bool  # part of the kernel's program (and of the virtual document)
    magic: str | None = None  # the cell magic on the first line, e.g. "bash" or "time"


def cell_language(cell_type: str, source: str, kernel_language: str) -> CellLanguage:
    """The language of one cell of a notebook whose kernel speaks `kernel_language`."""
    if cell_type != "code":
        return CellLanguage(None, runs_in_kernel=False)
    match = _CELL_MAGIC.match(source) if kernel_language == "python" else None
    if match is None:
        return CellLanguage(kernel_language, runs_in_kernel=True)
    magic, argument = match.group(1), match.group(2).split()
    if magic in _KERNEL_MAGICS:
        return CellLanguage(kernel_language, runs_in_kernel=True, magic=magic)
    if magic == "script" and argument:  # `%%script bash`, `%%script /usr/bin/python3`
        return CellLanguage(language_name(argument[0].rsplit("/", 1)[-1]),
                            runs_in_kernel=False, magic=magic)
    return CellLanguage(_SCRIPT_MAGICS.get(magic), runs_in_kernel=False, magic=magic)
