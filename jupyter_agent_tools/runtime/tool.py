"""The `Tool` declaration every built-in (and plug-in) tool follows.

A tool module reads like its row in the design table::

    class Read(Tool):
        name = "read"
        tier = Tier.READ
        requires = frozenset({Resource.WORKDIR})
        description = "..."
        Args = ReadArgs

        async def call(self, ctx: CallContext, args: ReadArgs) -> ToolResult: ...
"""

from __future__ import annotations

import copy
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

# Origin and Resource are defined beside the Protocols (which name them); still importable here.
from .protocols import Origin, Resource, RuntimeView, RunView
from .results import ToolResult
from .tiers import Tier


class ToolArgs(BaseModel):
    """Base of every argument model: unknown fields are an error, not silently dropped."""

    model_config = ConfigDict(extra="forbid")


@dataclass
class CallContext:
    """What a tool sees of the call in progress."""

    run: RunView
    tool: Tool
    origin: Origin = Origin.API
    call_id: str = ""
    # Files changed by this call (absolute paths), deleted ones included, and those of them it
    # created; the diagnostics wrapper reads them.
    written: list[Path] = field(default_factory=list)
    created: set[Path] = field(default_factory=set)
    # Extra text a wrapper appends to the result (diagnostics, notes).
    notes: list[str] = field(default_factory=list)

    @property
    def runtime(self) -> RuntimeView:
        return self.run.runtime

    def wrote(self, *paths: Path, created: Iterable[Path] = ()) -> None:
        """Tell the wrappers this call changed (or deleted) these files, and which it created."""
        self.written.extend(paths)
        self.created.update(created)


class Tool:
    """A tool: its name, tier, argument model, the resources it needs, and `call`."""

    name: ClassVar[str]
    tier: ClassVar[Tier]
    description: ClassVar[str]
    Args: ClassVar[type[ToolArgs]]
    requires: ClassVar[frozenset[Resource]] = frozenset({Resource.WORKDIR})
    # Tools whose session is state between calls (eval, debug) are serialized per scope.
    parallel_safe: ClassVar[bool] = True
    # Argument fields holding a path (relative to the run's cwd). Before the approval gate,
    # the run refuses a call whose path leaves the root, so no human approves what must fail.
    path_fields: ClassVar[tuple[str, ...]] = ()
    # A tool whose result `data` is small and acted on by front ends (a notebook change's
    # cells and change_id, which the panel opens and reverts): the transcript keeps it.
    transcript_keeps_data: ClassVar[bool] = False

    async def prepare(self, ctx: CallContext, args: Any) -> None:
        """Work the checks below need from a big argument (parsing a patch, say), done off
        the event loop; raise ToolError when it shows the call cannot run. First step of a
        call, before `paths`, `precheck` and the approval gate. Most tools need none."""

    def paths(self, args: Any) -> list[str]:
        """The paths a call names, as given; by default the values of `path_fields`."""
        values = (getattr(args, name, None) for name in self.path_fields)
        return [value for value in values if isinstance(value, str)]

    def precheck(self, ctx: CallContext, args: Any) -> None:
        """Raise ToolError for a valid call that can never run here; checked before approval
        and queueing, so it is refused at once instead of waiting. Most tools accept all
        (the run checks `paths` on its own before this)."""

    def call_tier(self, args: Any) -> Tier:  # noqa: ARG002 - a hook
        """The tier of this call, which the approval gate acts on: the tool's own, or lower
        for a tool whose actions differ (`notebook`: changing cells is write, running exec).
        Visibility always follows the tool's `tier`."""
        return self.tier

    def serial_scope(self, ctx: CallContext, args: Any) -> Hashable:  # noqa: ARG002 - a hook
        """The scope within which calls of a non-parallel tool are serialized."""
        return (self.name, ctx.run.id)

    def label(self, args: Any) -> str:  # noqa: ARG002 - a hook
        """A short human label for the transcript and event stream."""
        return self.name

    def approval_context(self, run: RunView, args: Any) -> str:  # noqa: ARG002 - a hook
        """What a permission card says about the call (e.g. where it will act): its label."""
        return self.label(args)

    async def call(self, ctx: CallContext, args: Any) -> ToolResult:
        raise NotImplementedError

    def json_schema(self) -> dict[str, Any]:
        """The arguments' JSON Schema (a copy: the caller may change it)."""
        return copy.deepcopy(_args_schema(self.Args))


@cache
def _args_schema(args: type[ToolArgs]) -> dict[str, Any]:
    # pydantic builds a schema anew each time it is asked, about a millisecond for a tool with
    # actions: a listing of every tool (MCP tools/list, the HTTP tools route) held the event
    # loop 15-30 ms.
    schema = args.model_json_schema()
    schema.pop("title", None)
    return schema
