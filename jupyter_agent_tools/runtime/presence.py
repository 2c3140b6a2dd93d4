"""The call wrapper that shows an agent in the notebook it works on (notebooks/presence.py).

Around each `notebook` call on a notebook open with real-time collaboration: the run is put in
the notebook's room at the cell it names before the call, kept there while the call runs (a
long run renews it), and moved to the cell the call touched after it. It leaves by itself
30 s after its last call (the awareness's timeout). Without RTC, or for a notebook nobody has
open, the call goes on untouched.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from ..files.paths import relative_to_root
from ..notebooks.presence import (
    AgentCollaborator,
    cell_index_of,
    open_room_document,
    show_agent,
)
from .results import ToolResult
from .tool import CallContext
from .wrappers import CallNext

log = logging.getLogger(__name__)

#: How often a call in progress renews its agent's presence (the awareness forgets at 30 s).
RENEW_SECONDS = 10.0
#: Actions that work on no cell of an open notebook.
_ELSEWHERE = frozenset({"list", "create", "restart"})


def _agent_name(ctx: CallContext) -> str:
    options = getattr(ctx.run, "options", None)
    client = getattr(options, "client", None)
    if client is not None:
        return str(client.name)
    origin = getattr(options, "origin", None)
    return f"{getattr(origin, 'value', origin) or 'api'} agent"  # e.g. "http agent"


async def agent_presence(ctx: CallContext, args: Any, call_next: CallNext) -> ToolResult:
    """Show the run as a collaborator in the open notebook a `notebook` call works on."""
    path = getattr(args, "path", None)
    if ctx.tool.name != "notebook" or not isinstance(path, str) or \
            getattr(args, "action", None) in _ELSEWHERE:
        return await call_next()
    try:
        api_path = relative_to_root(ctx.runtime.root_path, ctx.run.resolve(path))
        document = await open_room_document(ctx.runtime.parent, api_path)
    except Exception:
        log.debug("agent-tools: no presence in %s", path, exc_info=True)
        document = None
    if document is None:
        return await call_next()
    agent = AgentCollaborator.of_run(ctx.run.id, _agent_name(ctx))
    cell = getattr(args, "cell", None)
    if cell is None and getattr(args, "cells", None):
        cell = args.cells[0]
    index = _show(document, agent, cell)

    async def renew() -> None:
        while True:
            await asyncio.sleep(RENEW_SECONDS)
            _show(document, agent, index + 1 if index is not None else None)

    renewing = asyncio.ensure_future(renew())
    try:
        result = await call_next()
    finally:
        renewing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewing
    touched = result.data.get("cells") if isinstance(result.data, dict) else None
    if touched and isinstance(touched[0], dict):
        cell = touched[0].get("id") or touched[0].get("cell")
    _show(document, agent, cell)
    return result


def _show(document: Any, agent: AgentCollaborator, cell: int | str | None) -> int | None:
    """Show the agent at `cell` (a number or an id); the cell's index, if it is there."""
    try:
        index = cell_index_of(document, cell)
        show_agent(document, agent, index)
    except Exception:
        log.debug("agent-tools: presence not shown", exc_info=True)
        return None
    return index
