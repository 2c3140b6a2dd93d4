"""Resource providers: the live things (parser, language servers, kernels, ...) runs attach.

A provider is created once per runtime (lazily, on first use), attaches a per-run handle to
each run that gets its resource, releases it when the run closes, and shuts down with the
runtime. Providers know nothing about HTTP or about tools.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, cast

from traitlets.config import LoggingConfigurable

from .protocols import Resource, RuntimeView

if TYPE_CHECKING:
    from .events import EventBus
    from .run import Run, RunOptions
    from .tokens import RunTokens
    from .wrappers import Wrapper


class ProviderHost(RuntimeView, Protocol):
    """What providers use of the runtime that created them (`runtime.Runtime` is one): a
    Protocol, so that this module need not import runtime.py, which imports it."""

    kernel_manager: Any  # the server's kernel manager when hosted; None embedded
    server_url: str
    run_tokens: RunTokens

    @property
    def runs(self) -> Mapping[str, Run]: ...

    def space_bus(self, space: str) -> EventBus:
        """The event stream of a space: what human front ends connected there receive."""
        ...

    async def create_run(self, *, cwd: str = ".", surface: str | None = None,
                         approvals: str | None = None, space: str | None = None,
                         parent_id: str | None = None, origin: str = "api",
                         sandbox: str | None = None, network: bool | None = None) -> Run:
        """Create a run (a worker's child run, say) with every resource the runtime has."""
        ...

    async def close_run(self, run_id: str) -> None:
        """Release everything the run holds."""
        ...


class ResourceProvider(LoggingConfigurable):
    """Base class of a resource provider. Subclasses are traitlets-configurable."""

    resource: ClassVar[Resource]

    @property
    def runtime(self) -> ProviderHost:
        # The runtime creates every provider with itself as the parent.
        return cast("ProviderHost", self.parent)

    def attach(self, run: Run, options: RunOptions) -> Any | None:  # noqa: ARG002 - a hook
        """The per-run handle for `run`, or None when this run does not get the resource."""
        return self

    def attaches(self, options: RunOptions) -> bool:  # noqa: ARG002 - a hook
        """Whether `attach` gives a run created with `options` a handle, known before any run
        exists (the tools an MCP session lists before its first call). A provider whose
        `attach` may return None says so here, and its `attach` follows it."""
        return True

    async def release(self, run: Run, handle: Any) -> None:
        """Free what `run` holds; called when the run closes."""

    async def release_idle(self) -> None:
        """Give back what is kept only to be quick: no run is open, or every open run has sat
        idle for `c.Runtime.idle_release_seconds` with no call or job in flight (the runtime's
        idle timer calls it then). Stop warm spares and shared workers, drop caches; what a
        run still needs must start again on demand at its next use."""

    async def shutdown(self) -> None:
        """Stop every process this provider started."""

    async def status(self) -> dict[str, Any]:
        """What this resource can serve, and why not where it cannot (no argv, no env)."""
        return {}

    def wrappers(self) -> list[Wrapper]:
        """Call wrappers this resource contributes (e.g. diagnostics after writes)."""
        return []
