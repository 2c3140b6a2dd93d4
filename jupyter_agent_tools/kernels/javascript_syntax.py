"""Why a JavaScript cell failed when Deno's kernel only says "Execution failed".

Deno's kernel answers a cell it cannot transpile with a bare `Execution failed` (no
traceback, no position). Deno's own parser (`deno fmt`, the same swc front end, reading the
cell as TSX the way the kernel does) finds the syntax error with its message and location.
The check runs as a bounded child process, only after such a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from dataclasses import dataclass

from .deno_spec import deno_binary

# `    at file:///tmp/_stdin.tsx:4:1`: where deno reports the error.
_LOCATION = re.compile(r"^\s*at file://\S+?:(\d+):(\d+)\s*$", re.MULTILINE)
_MAX_REPORT_CHARS = 2_000


@dataclass
class SyntaxProblem:
    """A syntax error of a cell: Deno's message, its 1-based position, and the excerpt."""

    message: str
    line: int
    column: int
    excerpt: str

    def report(self) -> str:
        """Deno's report, naming the cell instead of a temporary file."""
        return (f"SyntaxError: {self.message}\n{self.excerpt}\n"
                f"    at cell line {self.line}, column {self.column}")


async def find_syntax_error(code: str, timeout: float) -> SyntaxProblem | None:
    """The cell's syntax error, or None when it parses (or Deno cannot tell in time)."""
    binary = deno_binary()
    if binary is None:
        return None
    process = await asyncio.create_subprocess_exec(
        binary, "fmt", "--no-config", "--ext=tsx", "-",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1", "RUST_BACKTRACE": "0"},
    )
    try:
        _, stderr = await asyncio.wait_for(process.communicate(code.encode()), timeout)
    except asyncio.TimeoutError:
        return None
    finally:
        if process.returncode is None:  # timed out, or the call was cancelled
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    if process.returncode == 0:
        return None
    return parse_report(stderr.decode(errors="replace")[:_MAX_REPORT_CHARS])


def parse_report(report: str) -> SyntaxProblem | None:
    """Deno's `error: SyntaxError: <message>` report, with its excerpt and position."""
    location = _LOCATION.search(report)
    first, _, rest = report.partition("\n")
    message = first.removeprefix("error: ").removeprefix("SyntaxError: ").strip()
    if location is None or not message:
        return None
    excerpt = rest[: location.start() - len(first) - 1].rstrip("\n")
    return SyntaxProblem(message, int(location.group(1)), int(location.group(2)), excerpt)
