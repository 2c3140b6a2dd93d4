"""The route table: handler modules loaded by name, and the JSON 404 behind them."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterable
from typing import Any

from .base import RouteNotFoundHandler

#: The modules served by default (the app's `handler_modules`), and documented by openapi.py.
HANDLER_MODULES = [
    "jupyter_agent_tools.http.handlers",
    "jupyter_agent_tools.http.structural",
    "jupyter_agent_tools.http.questions",
    "jupyter_agent_tools.http.tokens",
    "jupyter_agent_tools.mcp_endpoint.handlers",
]

#: Served last, so a path under agent-tools/ that no module serves is a JSON 404.
FALLBACK_ROUTE: tuple[str, type] = (r"agent-tools(?:/.*)?", RouteNotFoundHandler)


def load_routes(module_names: Iterable[str], log: logging.Logger | None = None) -> list[tuple[Any, ...]]:
    """The `handlers` lists of the named modules, in order, then FALLBACK_ROUTE.

    A module that fails to import is logged and skipped: one broken plug-in must not take
    the server down.
    """
    routes: list[tuple[Any, ...]] = []
    for name in module_names:
        try:
            module = importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a plug-in's failure, whatever it is, is contained
            (log or logging.getLogger(__name__)).exception(
                "agent-tools: could not load handlers from %s", name)
            continue
        routes.extend(module.handlers)
    routes.append(FALLBACK_ROUTE)
    return routes
