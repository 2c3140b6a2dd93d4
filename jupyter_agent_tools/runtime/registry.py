"""The catalogue of tools a runtime knows: the built-ins plus the entry-point group.

Loading is contained: a tool that fails to import is logged and reported by `status`,
and every other tool still works.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterator
from importlib.metadata import entry_points

from .tool import Tool

ENTRY_POINT_GROUP = "jupyter_agent_tools.tools"


def _load_tool_class(spec: str) -> type[Tool]:
    module_name, _, attr = spec.partition(":")
    module = importlib.import_module(module_name)
    tool_class = getattr(module, attr)
    if not (isinstance(tool_class, type) and issubclass(tool_class, Tool)):
        raise TypeError(f"{spec} is not a Tool subclass")
    return tool_class


class ToolRegistry:
    """Tool instances by name, in load order."""

    def __init__(self, log: logging.Logger | None = None) -> None:
        self.log = log or logging.getLogger(__name__)
        self.tools: dict[str, Tool] = {}
        self.load_errors: dict[str, str] = {}

    def add(self, tool: Tool) -> None:
        self.tools[tool.name] = tool

    def load(self, specs: list[str], disabled: set[str] | None = None) -> None:
        """Load tool classes from "module:Class" specs and from the entry-point group."""
        disabled = disabled or set()
        candidates = [(spec, spec) for spec in specs]
        candidates += [(ep.name, ep.value) for ep in entry_points(group=ENTRY_POINT_GROUP)]
        for origin, spec in candidates:
            try:
                tool_class = _load_tool_class(spec)
                tool = tool_class()
            except Exception as exc:  # contained: one bad plug-in never takes the others down
                self.log.exception("could not load tool %s", origin)
                self.load_errors[origin] = f"{type(exc).__name__}: {exc}"
                continue
            if tool.name not in disabled:
                self.add(tool)

    def get(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools.values())
