"""Thin handlers of the core routes: status, the document, runs, calls, transcripts, events.

Every verb is authenticated by jupyter_server and authorized against an `agent_tools:*`
resource. Handlers turn typed bodies into runtime calls and back; they know nothing of tools
beyond `Run.call`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, ClassVar, cast

from jupyter_core.utils import ensure_async
from jupyter_server.auth import User
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from tornado import web
from tornado.websocket import WebSocketClosedError, WebSocketHandler

from ..auth import RunTokenAuth, ws_challenged
from ..runtime import ErrorCode, Origin, Resource, Runtime
from ..runtime.events import EventBus
from .base import (
    RUNS_RESOURCE,
    STATUS_RESOURCE,
    AgentToolsHandler,
    ApiError,
    JsonErrors,
    Operation,
    ResponseHeader,
)
from .events import EVENT_ADAPTER
from .models import (
    CallRequest,
    CallResult,
    RunDescriptor,
    RunRequest,
    ServerStatus,
    ToolsQuery,
    TranscriptEntry,
    WorkerDescriptor,
)
from .openapi import openapi_document

RUN_ID = r"(?P<run_id>[0-9a-f]{32})"
TRANSCRIPT_DROPPED_HEADER = "X-Transcript-Dropped"


async def ended_run(handler: AgentToolsHandler, run_id: str) -> dict[str, Any]:
    """The stored descriptor of an ended run; 404 (as `get_run` says it) when there is none."""
    ended = await handler.runtime.ended_run(run_id)
    if ended is None:
        handler.get_run(run_id)  # raises not_found (or answers an open run's caller's race)
        raise ApiError(409, ErrorCode.FAILED, f"Run {run_id} is open; ask again.")
    return ended


class StatusHandler(AgentToolsHandler):
    auth_resource = STATUS_RESOURCE
    agent_token_methods = frozenset({"GET"})
    operations: ClassVar[dict[str, Operation]] = {
        "get": Operation("Languages, debug adapters, kernels: available or why not",
                         {200: ServerStatus}),
    }

    @web.authenticated
    @authorized
    async def get(self) -> None:
        await self.respond(await self.runtime.status())


class OpenAPIHandler(AgentToolsHandler):
    auth_resource = STATUS_RESOURCE
    agent_token_methods = frozenset({"GET"})
    operations: ClassVar[dict[str, Operation]] = {
        "get": Operation("This document (OpenAPI 3.1)", {200: dict[str, Any]}),
    }

    @web.authenticated
    @authorized
    async def get(self) -> None:
        await self.respond(openapi_document(self.base_url, self.settings["agent_tools_handlers"]))


class RunsHandler(AgentToolsHandler):
    # An agent token lists the runs opened with it, and opens runs within its ceiling.
    agent_token_methods = frozenset({"GET", "POST"})
    operations: ClassVar[dict[str, Operation]] = {
        "get": Operation("List runs, open and ended (kept in the run store across restarts)",
                         {200: list[RunDescriptor]}),
        # 404: cwd is no directory; 409: the server's run limit is reached. An agent token's
        # run gets its ceiling's options where the body leaves them out (403: more than it).
        "post": Operation("Create a run", {201: RunDescriptor}, body=RunRequest,
                          body_required=False, errors=frozenset({404, 409})),
    }

    @web.authenticated
    @authorized
    async def get(self) -> None:
        runs = await self.runtime.list_runs()
        if self.agent_token is not None:
            mine = await self.settings["agent_tools_tokens"].runs_of(self.agent_token.id)
            runs = [run for run in runs if run["id"] in mine]
        await self.respond(runs)

    @web.authenticated
    @authorized
    async def post(self) -> None:
        request = self.within_ceiling(await self.parse_body(RunRequest))
        await self.check_conversation(request.conversation_id)
        run = await self.runtime.create_run(**request.create_run_options(), origin=request.origin)
        await self.opened_with_token(run.id)
        await self.respond(run.describe(), status=201)


class RunHandler(AgentToolsHandler):
    run_token_methods = frozenset({"GET"})  # a worker may not close its own run
    agent_token_methods = frozenset({"GET", "DELETE"})
    operations: ClassVar[dict[str, Operation]] = {
        "get": Operation("Describe a run, open or ended", {200: RunDescriptor}),
        "delete": Operation("Close a run, releasing everything it holds; an ended run is "
                            "removed from the run store", {204: None}),
    }

    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        run = self.runtime.runs.get(run_id)
        await self.respond(run.describe() if run is not None else await ended_run(self, run_id))

    @web.authenticated
    @authorized
    async def delete(self, run_id: str) -> None:
        if run_id in self.runtime.runs:
            await self.runtime.close_run(run_id)
        else:
            await ended_run(self, run_id)
            assert self.runtime.run_store is not None  # it answered
            self.runtime.run_store.forget_run(run_id)
        await self.respond(None, status=204)


class ToolsHandler(AgentToolsHandler):
    agent_token_methods = frozenset({"GET"})
    operations: ClassVar[dict[str, Operation]] = {
        "get": Operation("Schemas of the tools visible to the run, in a format",
                         {200: list[dict[str, Any]]}, query=ToolsQuery),
    }

    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        query = self.parse_query(ToolsQuery)
        await self.respond(self.get_run(run_id).schemas(format=query.format))


class CallsHandler(AgentToolsHandler):
    agent_token_methods = frozenset({"POST"})
    operations: ClassVar[dict[str, Operation]] = {
        "post": Operation("Call a tool (tool failures are ok: false, not HTTP errors)",
                          {200: CallResult}, body=CallRequest),
    }

    @web.authenticated
    @authorized
    async def post(self, run_id: str) -> None:
        run = self.get_run(run_id)
        request = await self.parse_body(CallRequest)
        origin = Origin.WORKER if self.run_token_run_id else Origin.HTTP
        result = await run.call(request.tool, request.args, origin=origin)
        await self.respond(result.to_json())


class TranscriptHandler(AgentToolsHandler):
    agent_token_methods = frozenset({"GET"})
    operations: ClassVar[dict[str, Operation]] = {
        "get": Operation(
            "Every call the run's transcript keeps: tool, label, args, ok, duration",
            {200: list[TranscriptEntry]},
            headers={TRANSCRIPT_DROPPED_HEADER: ResponseHeader(
                "How many of the run's oldest calls the transcript dropped (past "
                "c.Runtime.max_transcript_entries or max_transcript_bytes); 0 when it has them all.")},
        ),
    }

    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        run = self.runtime.runs.get(run_id)
        if run is None:  # an ended run's, from the run store
            dropped = (await ended_run(self, run_id))["transcript_dropped"]
            assert self.runtime.run_store is not None  # it answered
            entries = await self.runtime.run_store.transcript(run_id)
        else:
            dropped, entries = run.transcript.dropped, run.transcript.to_json()
        self.set_header(TRANSCRIPT_DROPPED_HEADER, str(dropped))
        await self.respond(entries)


class WorkersHandler(AgentToolsHandler):
    agent_token_methods = frozenset({"GET"})
    operations: ClassVar[dict[str, Operation]] = {
        "get": Operation("The run's background workers: state and last output "
                         "(empty when the run is not in vibe mode, or ended)",
                         {200: list[WorkerDescriptor]}),
    }

    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        if run_id not in self.runtime.runs:  # an ended run's workers ended with it
            await ended_run(self, run_id)
            await self.respond([])
            return
        workers = self.get_run(run_id).resources.get(Resource.WORKERS)
        if workers is None:
            await self.respond([])
            return
        # The same bound on each result as the worker_state events carry.
        await self.respond([worker.describe(workers.pool.max_event_result_chars)
                      for worker in workers.workers.values()])


class EventStreamHandler(JsonErrors, RunTokenAuth, WebSocketMixin, WebSocketHandler,
                         JupyterHandler):
    """A WebSocket that forwards one event bus, each event a JSON text frame of its model
    (events.py), until either side closes."""

    auth_resource = RUNS_RESOURCE
    run_token_methods = frozenset({"GET"})
    operations: ClassVar[dict[str, Operation]] = {}

    async def prepare(self, *args: Any, **kwargs: Any) -> None:
        if not await self.authenticate_tokens():
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
            # ws_challenged has checked there is a User (jupyter_server declares it as None)
            self.authorizer.is_authorized(self, cast(User, self.current_user), "read",
                                          self.auth_resource)
        )
        if not allowed:
            raise web.HTTPError(403)

    @ws_challenged
    async def get(self, **kwargs: str) -> None:
        await self.authorize()
        # tornado answers a plain GET with a text/plain 400; ours is the API's JSON error.
        connection = {part.strip().lower()
                      for part in self.request.headers.get("Connection", "").split(",")}
        if self.request.headers.get("Upgrade", "").lower() != "websocket" or "upgrade" not in connection:
            raise ApiError(400, ErrorCode.INVALID_ARGUMENTS,
                           "This route is a WebSocket: connect with 'Upgrade: websocket'.")
        self._bus = self.event_bus(**kwargs)
        await super().get(**kwargs)

    async def open(self, **kwargs: str) -> None:
        super().open()
        self._pump = asyncio.ensure_future(self._forward())
        await self.on_opened(**kwargs)

    async def on_opened(self, **kwargs: str) -> None:
        """Hook for subclasses (e.g. announce a human joining a space)."""

    def send_event(self, event: dict[str, Any]) -> Any:
        """Send one event as its model (events.py).

        An event no model fits is a bug on the publishing side: it is logged and sent as
        published, so a front end loses nothing.
        """
        try:
            frame = EVENT_ADAPTER.dump_json(EVENT_ADAPTER.validate_python(event), fallback=str)
        except ValueError:
            self.log.warning("agent-tools: event %r fits no event model (http/events.py)",
                             event.get("type"), exc_info=True)
            frame = json.dumps(event, default=str).encode()
        return self.write_message(frame.decode())

    async def _forward(self) -> None:
        async with self._bus.subscribe() as queue:
            while True:
                event = await queue.get()
                try:
                    await ensure_async(self.send_event(event))
                except WebSocketClosedError:
                    return

    def on_close(self) -> None:
        pump = getattr(self, "_pump", None)
        if pump is not None:
            pump.cancel()

    def on_message(self, message: str | bytes) -> None:
        """Front ends answer over HTTP; messages on this socket are ignored."""


class RunEventsHandler(EventStreamHandler):
    agent_token_methods = frozenset({"GET"})
    operations: ClassVar[dict[str, Operation]] = {
        "get": Operation("WebSocket: calls, questions, staged/resolved edits, workers",
                         {101: None}, websocket=True),
    }

    def event_bus(self, run_id: str) -> EventBus:  # type: ignore[override]
        return self.runtime.get_run(run_id).events


# Paths are relative to the server's base_url; openapi.py documents each one.
handlers: list[tuple[str, type]] = [
    (r"agent-tools/api/status", StatusHandler),
    (r"agent-tools/api/openapi\.json", OpenAPIHandler),
    (r"agent-tools/api/runs", RunsHandler),
    (rf"agent-tools/api/runs/{RUN_ID}", RunHandler),
    (rf"agent-tools/api/runs/{RUN_ID}/tools", ToolsHandler),
    (rf"agent-tools/api/runs/{RUN_ID}/calls", CallsHandler),
    (rf"agent-tools/api/runs/{RUN_ID}/transcript", TranscriptHandler),
    (rf"agent-tools/api/runs/{RUN_ID}/workers", WorkersHandler),
    (rf"agent-tools/api/runs/{RUN_ID}/events", RunEventsHandler),
]
