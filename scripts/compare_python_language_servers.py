"""What the agent's `lsp` tools get from each Python language server, on one small project.

Each candidate runs alone (the other Python specs disabled) through the real runtime, on the
project of tests/lsp (shapes.py, main.py), and is asked what tests/lsp/test_python.py asks:
hover, definition, type definition, references, symbols (file and workspace), diagnostics for
a wrong argument type, an undefined name and a missing module (and that the last clears once
the module exists), rename across files, refusing to rename a builtin. It prints one row per
candidate: each check passed or not, seconds to the first answer, the server's memory.

Candidates not installed are reported as such. Usage (the candidates on PATH):

    python scripts/compare_python_language_servers.py [name ...]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
from traitlets.config import Config

from jupyter_agent_tools import Runtime
from jupyter_agent_tools.discovery import find_executable
from jupyter_agent_tools.runtime import Resource

SUPERVISOR = "jupyter_agent_tools.lsp.supervisor:LanguageServerSupervisor"
PY = {".py": "python", ".pyi": "python"}
MARKERS = ["pyproject.toml"]

# Specs for the candidates that are not built in; the built-in ones are used as they are.
CANDIDATES: dict[str, dict[str, Any]] = {
    "basedpyright": {},
    "ty": {"extensions": PY, "root_markers": MARKERS, "command": ["ty", "server"],
           "version_args": ["--version"]},
    "pyrefly": {"extensions": PY, "root_markers": MARKERS, "command": ["pyrefly", "lsp"],
                "version_args": ["--version"]},
    "jedi-language-server": {"extensions": PY, "root_markers": MARKERS,
                             "command": ["jedi-language-server"],
                             "version_args": ["--version"]},
    "pylsp": {"extensions": PY, "root_markers": MARKERS, "command": ["pylsp"],
              "version_args": ["--version"]},
}

FILES = {
    "pyproject.toml": "[project]\nname = 'demo'\nversion = '0'\n",
    "shapes.py": ("class Shape:\n    def area(self) -> float:\n        return 0.0\n\n\n"
                  "class Square(Shape):\n    def __init__(self, side: float) -> None:\n"
                  "        self.side = side\n\n    def area(self) -> float:\n"
                  "        return self.side * self.side\n"),
    "main.py": ("from shapes import Square\n\nsquare = Square(2.0)\n"
                "total = square.area() + square.area()\nprint(total)\n"),
}


async def checks(name: str, root: Path) -> tuple[dict[str, bool], float, int]:
    """Each check's outcome, seconds to the first answer, the server's RSS in MB."""
    servers: dict[str, Any] = {other: {"enabled": False} for other in CANDIDATES if other != name}
    servers["ruff"] = {"enabled": False}
    if CANDIDATES[name]:
        servers[name] = CANDIDATES[name]
    config = Config({"LanguageServerSupervisor": {
        "language_servers": servers, "diagnostics_timeout_seconds": 30.0,
        "request_timeout_seconds": 30.0}})
    runtime = Runtime(root_dir=str(root), config=config, resource_providers=[SUPERVISOR])
    outcome: dict[str, bool] = {}
    try:
        run = await runtime.create_run(cwd=".")

        async def call(tool: str, args: dict[str, Any]) -> Any:
            return await run.call(tool, args)

        started = time.monotonic()
        hover = await call("lsp", {"action": "hover", "file": "main.py", "line": 3,
                                   "symbol": "Square"})
        first_answer = time.monotonic() - started
        outcome["hover"] = hover.ok and "Square" in hover.text
        definition = await call("lsp", {"action": "definition", "file": "main.py", "line": 4,
                                        "symbol": "area"})
        outcome["definition"] = definition.ok and [
            (loc["path"], loc["line"]) for loc in definition.data["locations"]] == [
            ("shapes.py", 10)]
        typedef = await call("lsp", {"action": "type_definition", "file": "main.py", "line": 3,
                                     "symbol": "square"})
        outcome["type_definition"] = typedef.ok and bool(typedef.data["locations"]) and (
            typedef.data["locations"][0]["path"], typedef.data["locations"][0]["line"]) == (
            "shapes.py", 6)
        references = await call("lsp", {"action": "references", "file": "shapes.py",
                                        "line": 6, "symbol": "Square"})
        outcome["references"] = references.ok and references.data["total"] == 3
        outline = await call("lsp", {"action": "symbols", "file": "shapes.py"})
        names = {(s["name"], s["depth"]) for s in outline.data.get("symbols", [])}
        outcome["file_symbols"] = {("Shape", 0), ("Square", 0), ("area", 1)} <= names
        search = await call("lsp", {"action": "symbols", "query": "Squ"})
        outcome["workspace_symbols"] = search.ok and any(
            s["name"] == "Square" and s["path"] == "shapes.py" for s in search.data["symbols"])
        clean = await call("lsp", {"action": "diagnostics", "file": "main.py"})
        outcome["clean_file_is_clean"] = clean.ok and clean.data["status"] == "clean"

        wrong = await call("write", {"path": "wrong.py", "content":
                                     "from shapes import Square\n\nSquare('two')\n"})
        outcome["diag_argument_type"] = bool(wrong.data["diagnostics"]["new"])
        undefined = await call("write", {"path": "undefined.py",
                                         "content": "print(undefined_name)\n"})
        outcome["diag_undefined_name"] = bool(undefined.data["diagnostics"]["new"])
        missing = await call("write", {"path": "importer.py",
                                       "content": "from helpers import twice\n\nprint(twice(2))\n"})
        outcome["diag_missing_import"] = bool(missing.data["diagnostics"]["new"])
        await call("write", {"path": "helpers.py",
                             "content": "def twice(x: int) -> int:\n    return 2 * x\n"})
        after = await call("lsp", {"action": "diagnostics", "file": "importer.py"})
        outcome["diag_clears_when_module_appears"] = (
            outcome["diag_missing_import"] and after.data["status"] == "clean")

        renamed = await call("lsp_rename", {"file": "shapes.py", "line": 6, "symbol": "Square",
                                            "new_name": "Quad"})
        files = {f["path"]: f["edits"] for f in renamed.data.get("files", [])} if renamed.ok else {}
        outcome["rename_across_files"] = (files.get("shapes.py") == 1
                                          and files.get("main.py") == 2)
        builtin = await call("lsp_rename", {"file": "main.py", "line": 5, "symbol": "print",
                                            "new_name": "show"})
        outcome["rename_refuses_builtin"] = not builtin.ok

        rss = 0
        for server in run.resources[Resource.LSP].pool._servers.values():
            pid = server.status().get("pid")
            if pid:
                process = psutil.Process(pid)
                rss += sum(p.memory_info().rss for p in [process, *process.children(True)])
        return outcome, first_answer, rss // 2**20
    finally:
        await runtime.shutdown()


async def main(names: list[str]) -> None:
    columns: list[str] = []
    for name in names:
        binary = CANDIDATES[name].get("command", ["basedpyright-langserver"])[0]
        if find_executable([binary]) is None:
            print(f"{name}: not installed ({binary} not found)")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for file, text in FILES.items():
                (root / file).write_text(text)
            outcome, first, rss = await checks(name, root)
        if not columns:
            columns = list(outcome)
            print("server".ljust(22), *(c for c in columns), "first_answer_s", "rss_mb",
                  sep=" | ")
        print(name.ljust(22), *("yes" if outcome[c] else "NO" for c in columns),
              f"{first:.1f}", rss, f"({sum(outcome.values())}/{len(outcome)})", sep=" | ")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or list(CANDIDATES)))
