"""Call wrappers: the layers between the approval gate and the tool.

A wrapper is `async (ctx, args, call_next) -> ToolResult`. The runtime composes them,
outermost first: output limits, then whatever resources contribute (diagnostics on write).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .limits import bound_text
from .results import ToolResult
from .tool import CallContext

CallNext = Callable[[], Awaitable[ToolResult]]
Wrapper = Callable[[CallContext, Any, CallNext], Awaitable[ToolResult]]


def output_limit(max_chars: int) -> Wrapper:
    """Bound what an agent reads, whatever the tool produced."""

    async def wrapper(_ctx: CallContext, _args: Any, call_next: CallNext) -> ToolResult:
        result = await call_next()
        result.text, cut = bound_text(result.text, max_chars)
        if cut:
            result.data.setdefault("truncated", True)
        return result

    return wrapper


async def notes(ctx: CallContext, _args: Any, call_next: CallNext) -> ToolResult:
    """Append what inner wrappers noted on the context to the result's text."""
    result = await call_next()
    if ctx.notes:
        result.text = "\n\n".join(text for text in [result.text, *ctx.notes] if text)
    return result
