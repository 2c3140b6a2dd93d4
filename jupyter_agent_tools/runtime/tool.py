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
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from .outputs import ToolOutput

# Origin and Resource are defined beside the Protocols (which name them); still importable here.
from .protocols import Origin, Resource, RuntimeView, RunView
from .results import ToolResult
from .tiers import Tier

if TYPE_CHECKING:
    from .jobs import Job


class ToolArgs(BaseModel):
    """Base of every argument model: unknown fields are an error, not silently dropped, and
    values are taken at their JSON type (strict): `"yes"` or `1` is no boolean and `1.0` or
    `"1"` no integer, so a client's sloppy argument never runs a cell it did not mean to."""

    model_config = ConfigDict(extra="forbid", strict=True)


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
    # The job a long call runs as (`Tool.runs_long`): what `say` writes is its output so far.
    job: Job | None = None

    @property
    def runtime(self) -> RuntimeView:
        return self.run.runtime

    def say(self, text: str) -> None:
        """Add to the output so far of a call that may go on as a job (what the `running`
        answer and `job output` show); nothing for a call that cannot."""
        if self.job is not None and text:
            self.job.output.add(text.encode("utf-8", errors="replace"))

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
    # What the result's `data` carries (MCP's outputSchema): keys beyond those declared are
    # allowed, so a tool without its own model declares just the error shape.
    Output: ClassVar[type[ToolOutput]] = ToolOutput
    requires: ClassVar[frozenset[Resource]] = frozenset({Resource.WORKDIR})
    # Tools whose session is state between calls (eval, debug) are serialized per scope.
    parallel_safe: ClassVar[bool] = True
    # A tool whose calls may run long (eval, bash, ...): past c.Runtime.max_call_seconds the
    # call answers `running` and goes on as a job of the run (`runs_long` per call).
    long_running: ClassVar[bool] = False
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

    def runs_long(self, args: Any) -> bool:  # noqa: ARG002 - a hook
        """Whether this call runs as a job of the run, answering `running` (with the job's id
        and what it said so far, `CallContext.say`) once it passes max_call_seconds: the
        tool's `long_running`, or per action (`notebook` run, not insert)."""
        return self.long_running

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
