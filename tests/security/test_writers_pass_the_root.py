"""Every writer (write, edit, apply_patch, lsp_rename, resolve, notebooks) goes through the
atomic writer with the server's root, so each target is re-opened from the root without
following links at the moment of writing. Read from the package's own source with `ast`."""

from __future__ import annotations

import ast
from pathlib import Path

import jupyter_agent_tools

PACKAGE_DIR = Path(jupyter_agent_tools.__file__).resolve().parent
WRITER = "write_files_atomically"


def _writer_calls() -> list[tuple[str, ast.Call]]:
    calls = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            # A direct call, or the writer handed to asyncio.to_thread with its arguments.
            if isinstance(node, ast.Call) and any(
                    isinstance(part, ast.Name) and part.id == WRITER
                    for part in (node.func, *node.args[:1])):
                calls.append((f"{path.relative_to(PACKAGE_DIR)}:{node.lineno}", node))
    return calls


def test_every_write_names_the_root():
    calls = _writer_calls()
    writers = {place.split(":")[0] for place, _ in calls}
    assert {"tools/files.py", "tools/patch.py", "tools/lsp/rename.py", "structural/edits.py",
            "notebooks/disk.py"} <= writers, writers
    unrooted = [place for place, call in calls
                if not any(keyword.arg == "root" for keyword in call.keywords)]
    assert unrooted == [], f"writes not opened from the server's root: {unrooted}"


def test_nothing_writes_files_around_the_atomic_writer():
    """Tool and resource code never opens a file for writing by path (open/write_text)."""
    layers = ("tools", "lsp", "dap", "structural", "notebooks")
    found = []
    for layer in layers:
        for path in sorted((PACKAGE_DIR / layer).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Call):
                    continue
                name = getattr(node.func, "attr", getattr(node.func, "id", ""))
                mode = next((a.value for a in node.args[1:2] if isinstance(a, ast.Constant)),
                            None)
                if name in {"write_text", "write_bytes"} or (
                        name == "open" and isinstance(mode, str) and set(mode) & set("wax+")):
                    found.append(f"{path.relative_to(PACKAGE_DIR)}:{node.lineno}")
    assert found == []
