"""The whole-project check behind `lsp diagnostics file="*"`: each language's own checker
(basedpyright --outputjson, ty check --output-format gitlab, ruff check --output-format json,
tsc --noEmit), summarized."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path

from ..discovery import find_executable, missing_binary
from ..processes import ManagedProcess
from .errors import ProjectCheckError
from .journal import FileDiagnostic
from .specs import ServerSpec

_PYRIGHT_SEVERITY = {"error": "error", "warning": "warning", "information": "info"}
_TSC_LINE = re.compile(r"^(?P<file>.+?)\((?P<line>\d+),(?P<col>\d+)\): (?P<sev>error|warning) "
                       r"(?P<code>TS\d+): (?P<message>.*)$")


def _pyright(output: str, relpath: Callable[[Path], str]) -> list[FileDiagnostic]:
    data = json.loads(output)
    return [
        FileDiagnostic(
            path=relpath(Path(item["file"])),
            line=item.get("range", {}).get("start", {}).get("line", 0) + 1,
            column=item.get("range", {}).get("start", {}).get("character", 0) + 1,
            severity=_PYRIGHT_SEVERITY.get(item.get("severity", "error"), "info"),
            code=item.get("rule", ""),
            message=item.get("message", ""),
            source="basedpyright",
        )
        for item in data.get("generalDiagnostics", [])
    ]


_GITLAB_SEVERITY = {"blocker": "error", "critical": "error", "major": "error",
                    "minor": "warning", "info": "info"}


def _gitlab(output: str, relpath: Callable[[Path], str], cwd: Path,
            source: str) -> list[FileDiagnostic]:
    """GitLab Code Quality JSON (ty check --output-format gitlab): paths relative to `cwd`."""
    found = []
    for item in json.loads(output or "[]"):
        begin = item.get("location", {}).get("positions", {}).get("begin", {})
        code = item.get("check_name", "")
        message = item.get("description", "")
        found.append(FileDiagnostic(
            path=relpath(cwd / item["location"]["path"]), line=begin.get("line", 1),
            column=begin.get("column", 1),
            severity=_GITLAB_SEVERITY.get(item.get("severity", "major"), "error"), code=code,
            message=message.removeprefix(f"{code}: "), source=source,
        ))
    return found


def _ruff(output: str, relpath: Callable[[Path], str]) -> list[FileDiagnostic]:
    return [
        FileDiagnostic(
            path=relpath(Path(item["filename"])),
            line=(item.get("location") or {}).get("row", 1),
            column=(item.get("location") or {}).get("column", 1),
            severity="error" if item.get("code") is None else "warning",
            code=item.get("code") or "syntax",
            message=item.get("message", ""),
            source="ruff",
        )
        for item in json.loads(output or "[]")
    ]


def _tsc(output: str, relpath: Callable[[Path], str], cwd: Path) -> list[FileDiagnostic]:
    found = []
    for line in output.splitlines():
        match = _TSC_LINE.match(line.strip())
        if match:
            found.append(FileDiagnostic(
                path=relpath(cwd / match["file"]), line=int(match["line"]),
                column=int(match["col"]), severity=match["sev"], code=match["code"],
                message=match["message"], source="tsc",
            ))
    return found


async def run_project_check(spec: ServerSpec, root: Path, relpath: Callable[[Path], str],
                            timeout: float, max_output_bytes: int = 20_000_000
                            ) -> list[FileDiagnostic]:
    """Run `spec`'s project checker in `root`; ProjectCheckError when it cannot."""
    binary = find_executable(spec.project_check[:1])
    if binary is None:
        raise ProjectCheckError(missing_binary(spec.project_check[:1], spec.install))
    process = await ManagedProcess.start([binary, *spec.project_check[1:]], cwd=root,
                                         limit=2**20)
    done = await process.collect(timeout, max_output_bytes)
    if done.timed_out:
        raise ProjectCheckError(f"{spec.project_check[0]} ran past {timeout:g}s and was "
                                "stopped")
    # Tens of megabytes of JSON to parse: off the event loop.
    return await asyncio.to_thread(_parse, spec, bytes(done.stdout.data),
                                   bytes(done.stderr.data), root, relpath)


def _parse(spec: ServerSpec, stdout: bytes, stderr: bytes, root: Path,
           relpath: Callable[[Path], str]) -> list[FileDiagnostic]:
    output = stdout.decode("utf-8", errors="replace")
    try:
        if spec.project_check_format == "pyright":
            return _pyright(output, relpath)
        if spec.project_check_format == "ruff":
            return _ruff(output, relpath)
        if spec.project_check_format == "tsc":
            return _tsc(output, relpath, root)
        if spec.project_check_format == "gitlab":
            return _gitlab(output, relpath, root, spec.name)
    except (ValueError, KeyError, TypeError) as exc:
        detail = stderr.decode("utf-8", errors="replace").strip().splitlines()[-1:] or [str(exc)]
        raise ProjectCheckError(f"{spec.project_check[0]} output was not readable "
                                f"({detail[0]})") from None
    raise ProjectCheckError(f"unknown project check format {spec.project_check_format!r}")
