"""Projects and helpers shared by the language-server tests."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

BROKEN_SERVER = Path(__file__).with_name("broken_server.py")

PY_FILES = {
    "pyproject.toml": "[project]\nname = 'demo'\nversion = '0'\n",
    "shapes.py": (
        "class Shape:\n"
        "    def area(self) -> float:\n"
        "        return 0.0\n"
        "\n"
        "\n"
        "class Square(Shape):\n"
        "    def __init__(self, side: float) -> None:\n"
        "        self.side = side\n"
        "\n"
        "    def area(self) -> float:\n"
        "        return self.side * self.side\n"
    ),
    "main.py": (
        "from shapes import Square\n"
        "\n"
        "square = Square(2.0)\n"
        "total = square.area() + square.area()\n"
        "print(total)\n"
    ),
}

TS_FILES = {
    "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2020", '
                     '"module": "commonjs", "noEmit": true}}\n',
    "lib.ts": "export function greet(name: string): string {\n  return 'hi ' + name;\n}\n",
    "app.ts": "import { greet } from './lib';\n\nconst message: string = greet('bob');\n"
              "console.log(message);\n",
}


def broken_spec(mode: str) -> dict[str, Any]:
    """Config for a spec served by the misbehaving fixture server in `mode`."""
    return {"extensions": {".brk": "broken"}, "root_markers": ["broken.toml"],
            "command": [sys.executable, str(BROKEN_SERVER), mode]}


def pid_alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


# What a plug-in package names in its `jupyter_agent_tools.lsp_specs` entry point.
PLUGIN_SPECS = [{"name": "zig", "extensions": {".zig": "zig"}, "root_markers": ["build.zig"],
                 "command": ["zls"]}]
