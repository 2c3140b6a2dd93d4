"""Resource providers: the live things (parser, language servers, kernels, ...) runs attach.

A provider is created once per runtime (lazily, on first use), attaches a per-run handle to
each run that gets its resource, releases it when the run closes, and shuts down with the
runtime. Providers know nothing about HTTP or about tools.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, cast

from traitlets.config import LoggingConfigurable

from .tool import Resource

if TYPE_CHECKING:
    from .run import Run, RunOptions
    from .runtime import Runtime
    from .wrappers import Wrapper


class ResourceProvider(LoggingConfigurable):
    """Base class of a resource provider. Subclasses are traitlets-configurable."""

    resource: ClassVar[Resource]

    @property
    def runtime(self) -> Runtime:
        # The runtime creates every provider with itself as the parent.
        return cast("Runtime", self.parent)

    def attach(self, run: Run, options: RunOptions) -> Any | None:  # noqa: ARG002 - a hook
        """The per-run handle for `run`, or None when this run does not get the resource."""
        return self

    async def release(self, run: Run, handle: Any) -> None:
        """Free what `run` holds; called when the run closes."""

    async def shutdown(self) -> None:
        """Stop every process this provider started."""

    async def status(self) -> dict[str, Any]:
        """What this resource can serve, and why not where it cannot (no argv, no env)."""
        return {}

    def wrappers(self) -> list[Wrapper]:
        """Call wrappers this resource contributes (e.g. diagnostics after writes)."""
        return []
