"""Thin HTTP and WebSocket handlers over the runtime.

Every verb is authenticated by jupyter_server and authorized against an `agent_tools:*`
resource. Handlers turn JSON into runtime calls and back; they know nothing of tools
beyond `Run.call`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import authorized, ws_authenticated
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from tornado import web
from tornado.websocket import WebSocketClosedError, WebSocketHandler

from .auth import RunTokenAuth
from .openapi import openapi_document
from .runtime import ErrorCode, Origin, Run, Runtime, ToolError
from .runtime.events import EventBus
from .runtime.schemas import FORMATS

RUNS_RESOURCE = "agent_tools:runs"
STATUS_RESOURCE = "agent_tools:status"

_STATUS_BY_CODE = {
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.INVALID_ARGUMENTS: 400,
    ErrorCode.PATH_OUTSIDE_ROOT: 400,
    ErrorCode.UNKNOWN_EDIT: 404,
    ErrorCode.UNAVAILABLE: 503,
}


class AgentToolsHandler(RunTokenAuth, APIHandler):
    """Base of our API handlers: the runtime, JSON bodies, and errors as JSON codes.

    A worker's run token is accepted on its own run's routes (see auth.py).
    """

    auth_resource = RUNS_RESOURCE

    async def prepare(self) -> None:  # type: ignore[override]
        if not self.authenticate_run_token():
            await super().prepare()

    @property
    def runtime(self) -> Runtime:
        return self.settings["agent_tools_runtime"]

    def get_run(self, run_id: str) -> Run:
        return self.runtime.get_run(run_id)

    def json_body(self) -> dict[str, Any]:
        if not self.request.body:
            return {}
        try:
            body = json.loads(self.request.body)
        except json.JSONDecodeError as exc:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"The body is not JSON ({exc}); send a JSON object.") from None
        if not isinstance(body, dict):
            raise ToolError(ErrorCode.INVALID_ARGUMENTS, "The body must be a JSON object.")
        return body

    def write_json(self, payload: Any, status: int = 200) -> None:
        self.set_status(status)
        self.finish(json.dumps(payload, default=str))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, ToolError):
            self.set_status(_STATUS_BY_CODE.get(exc.code, 409))
            self.finish(json.dumps({"error": {"code": exc.code.value, "message": exc.message}}))
            return
        super().write_error(status_code, **kwargs)

    def log_exception(self, typ, value, tb) -> None:  # type: ignore[override]
        if isinstance(value, ToolError):  # an expected answer, not a server fault
            self.log.info("%s %s: %s", self.request.method, self.request.path, value.code.value)
            return
        super().log_exception(typ, value, tb)


class StatusHandler(AgentToolsHandler):
    auth_resource = STATUS_RESOURCE

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.write_json(await self.runtime.status())


class OpenAPIHandler(AgentToolsHandler):
    auth_resource = STATUS_RESOURCE

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.write_json(openapi_document(self.base_url, self.settings["agent_tools_routes"]))


class RunsHandler(AgentToolsHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.write_json([run.describe() for run in self.runtime.runs.values()])

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        allowed = {"cwd", "surface", "conversation_id", "vibe", "approvals", "space", "resources"}
        unknown = set(body) - allowed
        if unknown:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"Unknown fields {sorted(unknown)}; allowed: {sorted(allowed)}.")
        run = await self.runtime.create_run(
            cwd=body.get("cwd") or ".",
            surface=body.get("surface"),
            conversation_id=body.get("conversation_id"),
            vibe=bool(body.get("vibe", False)),
            approvals=body.get("approvals"),
            space=body.get("space"),
            resources=body.get("resources"),
            origin="http",
        )
        self.write_json(run.describe(), status=201)


class RunHandler(AgentToolsHandler):
    run_token_methods = frozenset({"GET"})  # a worker may not close its own run

    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        self.write_json(self.get_run(run_id).describe())

    @web.authenticated
    @authorized
    async def delete(self, run_id: str) -> None:
        self.get_run(run_id)
        await self.runtime.close_run(run_id)
        self.set_status(204)
        self.finish()


class ToolsHandler(AgentToolsHandler):
    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        fmt = self.get_argument("format", "json")
        if fmt not in FORMATS:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"format must be one of {FORMATS}.")
        self.write_json(self.get_run(run_id).schemas(format=fmt))


class CallsHandler(AgentToolsHandler):
    @web.authenticated
    @authorized
    async def post(self, run_id: str) -> None:
        run = self.get_run(run_id)
        body = self.json_body()
        tool = body.get("tool")
        if not isinstance(tool, str):
            raise ToolError(ErrorCode.INVALID_ARGUMENTS, 'The body needs "tool" (a name) and "args".')
        origin = Origin.WORKER if self.run_token_run_id else Origin.HTTP
        result = await run.call(tool, body.get("args") or {}, origin=origin)
        self.write_json(result.to_json())


class TranscriptHandler(AgentToolsHandler):
    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        self.write_json(self.get_run(run_id).transcript.to_json())


class EventStreamHandler(RunTokenAuth, WebSocketMixin, WebSocketHandler, JupyterHandler):
    """A WebSocket that forwards one event bus, as JSON text frames, until either side closes."""

    auth_resource = RUNS_RESOURCE
    run_token_methods = frozenset({"GET"})

    async def prepare(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        if not self.authenticate_run_token():
            await super().prepare(*args, **kwargs)

    @property
    def runtime(self) -> Runtime:
        return self.settings["agent_tools_runtime"]

    def event_bus(self, **path_kwargs: str) -> EventBus:
        """The bus to forward, from the route's named groups."""
        raise NotImplementedError

    def set_default_headers(self) -> None:
        """WebSockets take no API headers."""

    async def authorize(self) -> None:
        allowed = await ensure_async(
            self.authorizer.is_authorized(self, self.current_user, "read", self.auth_resource)
        )
        if not allowed:
            raise web.HTTPError(403)

    @ws_authenticated
    async def get(self, **kwargs: str) -> None:
        await self.authorize()
        try:
            self._bus = self.event_bus(**kwargs)
        except ToolError as exc:
            raise web.HTTPError(404, exc.message) from None
        await super().get(**kwargs)

    async def open(self, **kwargs: str) -> None:  # type: ignore[override]
        super().open()
        self._pump = asyncio.ensure_future(self._forward())
        await self.on_opened(**kwargs)

    async def on_opened(self, **kwargs: str) -> None:
        """Hook for subclasses (e.g. announce a human joining a space)."""

    async def _forward(self) -> None:
        async with self._bus.subscribe() as queue:
            while True:
                event = await queue.get()
                try:
                    await self.write_message(json.dumps(event, default=str))
                except WebSocketClosedError:
                    return

    def on_close(self) -> None:
        pump = getattr(self, "_pump", None)
        if pump is not None:
            pump.cancel()

    def on_message(self, message: str | bytes) -> None:
        """Front ends answer over HTTP; messages on this socket are ignored."""


class RunEventsHandler(EventStreamHandler):
    def event_bus(self, run_id: str) -> EventBus:
        return self.runtime.get_run(run_id).events


_RUN = r"(?P<run_id>[0-9a-f]{32})"

# Paths are relative to the server's base_url; OpenAPI (openapi.py) documents each one.
handlers: list[tuple[str, type]] = [
    (r"agent-tools/api/status", StatusHandler),
    (r"agent-tools/api/openapi\.json", OpenAPIHandler),
    (r"agent-tools/api/runs", RunsHandler),
    (rf"agent-tools/api/runs/{_RUN}", RunHandler),
    (rf"agent-tools/api/runs/{_RUN}/tools", ToolsHandler),
    (rf"agent-tools/api/runs/{_RUN}/calls", CallsHandler),
    (rf"agent-tools/api/runs/{_RUN}/transcript", TranscriptHandler),
    (rf"agent-tools/api/runs/{_RUN}/events", RunEventsHandler),
]
