"""One MCP session: the SDK's lowlevel `Server` over its streamable-HTTP transport, bound to a run.

The session answers `tools/list` with the run's visible tools and `tools/call` through
`Run.call` (origin `mcp`), so the same validation, approval gate and wrappers apply as for
every other origin. It follows its run's events: `tools_changed` becomes
`notifications/tools/list_changed`, `run_closed` ends the session.

A request is answered with one JSON body unless something may be said on its response stream
before the answer (progress of a call that asked for it, a card asked by elicitation): then
it is answered as server-sent events. A JSON answer costs the server about a quarter less CPU
than an event stream (benchmarks/bench_mcp.py), and lets the client keep its connection. A
request answered in JSON is dispatched in its HTTP request's own task (direct.py).

The session, not the transport, keeps the idle clock: a request answered here never reaches
the transport, and still holds the session while it runs.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.runner import ServerRunner, aclose_shielded
from mcp.server.session import ServerSession
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher, progress_token_from_params

from .._version import __version__
from ..questions import RunQuestions
from ..runtime import Origin, Resource, Run
from .direct import Answer, DirectAnswers
from .elicitation import CardElicitor
from .results import call_tool_result, mcp_tools

if TYPE_CHECKING:
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
    from starlette.responses import Response
    from starlette.types import Receive, Scope, Send



@dataclass(frozen=True)
class McpSessionSettings:
    """What a session needs of its endpoint's configuration, fixed when it opens."""

    idle_timeout_seconds: float
    use_elicitation: bool
    progress_interval_seconds: float
    #: The server's base URL (`/user/<name>/` under JupyterHub): what the links we hand the
    #: client start with.
    base_url: str = "/"


# Whether the request being served is answered with one JSON body; set around each request
# (a context variable: every request is served in a task of its own).
_ANSWER_IN_JSON: ContextVar[bool] = ContextVar("agent_tools_mcp_answer_in_json", default=False)


class PerRequestTransport(StreamableHTTPServerTransport):
    """The SDK's streamable-HTTP transport, its response mode chosen per request, not per session.

    The transport reads `is_json_response_enabled` while it serves a request, in that request's
    task; its message router (in the session's task) reads the default, SSE, and so routes what
    is related to a request to that request's stream. A request answered in JSON has nothing
    related to it (see `McpSession.answers_in_json`), so its stream only ever gets its answer.
    """

    @property
    def is_json_response_enabled(self) -> bool:
        return _ANSWER_IN_JSON.get()

    @is_json_response_enabled.setter
    def is_json_response_enabled(self, value: bool) -> None:
        """The SDK's constructor sets a mode for the session; ours is per request."""

    def _create_error_response(self, error_message: str, status_code: HTTPStatus,
                               error_code: int = types.INVALID_REQUEST,
                               headers: dict[str, str] | None = None) -> Response:
        # A JSON answer cut short by the session ending (its run closed, a DELETE) is the
        # SDK's 500; it is what the SDK answers once the session has ended: 404, open another.
        if status_code == HTTPStatus.INTERNAL_SERVER_ERROR and self.is_terminated:
            status_code = HTTPStatus.NOT_FOUND
        return super()._create_error_response(error_message, status_code, error_code, headers)


class McpSession:
    """An MCP session serving one run. Start with `start()`; it ends when the transport does.

    `on_end` is called once the session has ended (the endpoint forgets it).
    """

    def __init__(self, run: Run, settings: McpSessionSettings, *, owns_run: bool,
                 log: logging.Logger, on_end: Callable[[McpSession], None]) -> None:
        self.settings = settings
        self.log = log
        self._on_end = on_end
        self.run = run
        #: A session opened on `agent-tools/mcp` created its run and closes it when it ends;
        #: one opened on `runs/{id}/mcp` leaves the run as it found it.
        self.owns_run = owns_run
        self.id = uuid.uuid4().hex
        self.transport = PerRequestTransport(
            mcp_session_id=self.id)
        self.server: Server[Any] = Server(
            "jupyter-agent-tools", version=__version__,
            instructions=(f"The tools of jupyter-agent-tools run {run.id} (working directory "
                          f"{run.describe()['cwd']}, surface {run.surface.value}). Questions "
                          "and permission prompts go to your user, or to the JupyterLab panel "
                          f"(Agent Tools) at {settings.base_url}lab on this server. The run's "
                          f"HTTP API: {settings.base_url}agent-tools/api/runs/{run.id}."),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        # Only our observer: the SDK's default OpenTelemetry middleware costs a span per message
        # and Jupyter installs no exporter for it.
        self.server.middleware = [self._observe]
        self._runner: ServerRunner[Any] | None = None
        self._direct = DirectAnswers(log)
        self._server_session: ServerSession | None = None
        # tools/call requests in progress: a card they raise is asked on their response stream.
        self._calls_in_flight: dict[types.RequestId, ServerSession] = {}
        self._elicitor: CardElicitor | None = None
        # Whether the client said at initialize that it answers elicitation requests.
        self._client_elicits = False
        self._task: asyncio.Task[None] | None = None
        self._followers: list[asyncio.Task[None]] = []
        self._requests_in_flight = 0
        self._last_request_end = 0.0  # the event loop's clock
        self._idle_timer: asyncio.TimerHandle | None = None
        self._idle_end: asyncio.Task[None] | None = None  # kept: a task is only weakly held
        self.ended = asyncio.Event()

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start serving; returns once the transport can take requests."""
        ready = asyncio.Event()
        self._task = asyncio.ensure_future(self._serve(ready))
        waiter = asyncio.ensure_future(ready.wait())
        await asyncio.wait({waiter, self._task}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one HTTP request of this session (ASGI)."""
        await self.transport.handle_request(scope, receive, send)

    async def answer(self, request: types.JSONRPCRequest) -> Answer | None:
        """Answer a request that `answers_in_json` here, without the transport (direct.py);
        None when the session ended before it was answered."""
        if self._runner is None or self.transport.is_terminated:
            return None
        return await self._direct.answer(self._runner, request)

    @contextmanager
    def serving(self) -> Iterator[None]:
        """Inside the block a request is in flight (an open GET stream is one): the session
        does not idle out. Its idle clock starts again when the last one ends."""
        self._requests_in_flight += 1
        try:
            yield
        finally:
            self._requests_in_flight -= 1
            self._last_request_end = asyncio.get_running_loop().time()

    def _check_idle(self) -> None:
        """The idle clock: one timer, looked at when it rings (not moved at every request)."""
        loop = asyncio.get_running_loop()
        timeout = self.settings.idle_timeout_seconds
        left = timeout if self._requests_in_flight else (
            self._last_request_end + timeout - loop.time())
        if left > 0:
            self._idle_timer = loop.call_later(left, self._check_idle)
            return
        self._idle_timer = None
        self.log.info("agent-tools mcp: session %s idle for %g s: ending it", self.id, timeout)
        self._idle_end = asyncio.ensure_future(self.terminate())

    def answers_in_json(self, body: bytes) -> bool:
        """Whether the request with this body is answered with one JSON body, not an SSE stream.

        Not for a call when cards may be asked by elicitation (on the stream of the call in
        progress), nor when the request may want progress. Looking for the names in the bytes
        is enough (a false alarm only costs an event stream): no parsing here.
        """
        if b"progressToken" in body:
            return False
        return not (self._client_elicits and b"tools/call" in body)

    @contextmanager
    def response_mode(self, body: bytes) -> Iterator[None]:
        """Serve the request with this body, inside the block, in the mode it needs."""
        token = _ANSWER_IN_JSON.set(self.answers_in_json(body))
        try:
            yield
        finally:
            _ANSWER_IN_JSON.reset(token)

    async def terminate(self) -> None:
        """End the session now (the run closing, the server stopping, idle)."""
        self._direct.cancel_all()
        if not self.transport.is_terminated:
            await self.transport.terminate()

    async def wait_ended(self, timeout: float) -> None:
        try:
            await asyncio.wait_for(self.ended.wait(), timeout)
        except asyncio.TimeoutError:
            self.log.warning("agent-tools mcp: session %s did not end within %g s",
                             self.id, timeout)

    async def _serve(self, ready: asyncio.Event) -> None:
        try:
            async with self.transport.connect() as (read_stream, write_stream):
                # The SDK's serve_loop, its runner kept for the requests answered directly.
                dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(
                    read_stream, write_stream, inline_methods=frozenset({"initialize"}))
                connection = Connection.for_loop(dispatcher, session_id=self.id)
                self._runner = ServerRunner(
                    self.server, connection, {},
                    init_options=self.server.create_initialization_options(
                        NotificationOptions(tools_changed=True)))
                self._followers.append(asyncio.ensure_future(self._follow_run()))
                self._last_request_end = asyncio.get_running_loop().time()
                self._check_idle()
                ready.set()
                try:
                    await dispatcher.run(self._runner.on_request, self._runner.on_notify,
                                         on_notify_intercept=self._direct.on_notification)
                finally:
                    await aclose_shielded(connection)
        except Exception:
            self.log.exception("agent-tools mcp: session %s failed", self.id)
        finally:
            ready.set()
            with anyio.CancelScope(shield=True):
                await self._release()

    async def _release(self) -> None:
        await self.terminate()
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        for task in self._followers:
            task.cancel()
        if self._elicitor is not None:
            await self._elicitor.close()
        self._on_end(self)
        if self.owns_run:
            await self.run.runtime.close_run(self.run.id)
        self.ended.set()

    async def _follow_run(self) -> None:
        # Only what it acts on: woken for every call's events, it cost each call two wake-ups.
        async with self.run.events.subscribe(only=frozenset({"run_closed", "tools_changed"})
                                             ) as events:
            while True:
                event = await events.get()
                if event["type"] == "run_closed":
                    await self.terminate()
                    return
                if event["type"] == "tools_changed" and self._server_session is not None:
                    try:
                        await self._server_session.send_tool_list_changed()
                    except Exception as exc:  # noqa: BLE001 - the client went away; the session ends anyway
                        self.log.info("agent-tools mcp: session %s: list_changed not sent (%s)",
                                      self.id, exc)

    # -- MCP ----------------------------------------------------------------------------------

    async def _observe(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Remember a session to notify through; at initialize, start eliciting if asked for."""
        self._server_session = ctx.session
        capabilities: dict[str, Any] = {}
        if ctx.method == "initialize":
            capabilities = (ctx.params or {}).get("capabilities") or {}
        # Known before the answer to initialize: the client's next request may be a call.
        self._client_elicits = self._client_elicits or capabilities.get("elicitation") is not None
        result = await call_next(ctx)
        if ctx.method == "initialize" and capabilities.get("elicitation") is not None:
            await self._start_eliciting()
        return result

    async def _start_eliciting(self) -> None:
        questions = self.run.resources.get(Resource.QUESTIONS)
        if not self.settings.use_elicitation or not isinstance(questions, RunQuestions):
            return
        port = self.run.runtime.provider(Resource.QUESTIONS)
        human = await port.connect_human(questions.space, run_id=self.run.id)  # type: ignore[union-attr]
        self._elicitor = CardElicitor(human, questions, self._elicit, self.log)
        self._elicitor.start()

    async def _elicit(self, message: str, schema: dict[str, Any]) -> types.ElicitResult:
        # On the response stream of a tools/call in progress when there is one (the card is
        # most likely its own), else on the session's standalone stream.
        if self._calls_in_flight:
            request_id, session = next(reversed(self._calls_in_flight.items()))
            return await session.elicit_form(message, schema, related_request_id=request_id)
        assert self._server_session is not None
        return await self._server_session.elicit_form(message, schema)

    async def _list_tools(self, _ctx: ServerRequestContext[Any, Any],
                          _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=mcp_tools(self.run.schemas(format="json")))

    async def _call_tool(self, ctx: ServerRequestContext[Any, Any],
                         params: types.CallToolRequestParams) -> types.CallToolResult:
        token = progress_token_from_params(ctx.params)
        heartbeat = None
        if token is not None and ctx.request_id is not None:
            heartbeat = asyncio.ensure_future(self._report_progress(ctx, token, params.name))
        if ctx.request_id is not None:
            self._calls_in_flight[ctx.request_id] = ctx.session
        try:
            result = await self.run.call(params.name, dict(params.arguments or {}),
                                         origin=Origin.MCP)
        finally:
            self._calls_in_flight.pop(ctx.request_id, None)  # type: ignore[arg-type]
            if heartbeat is not None:
                heartbeat.cancel()
        return call_tool_result(result)

    async def _report_progress(self, ctx: ServerRequestContext[Any, Any],
                               token: types.ProgressToken, tool: str) -> None:
        """While a call runs, tell the client every few seconds that it still does."""
        started = time.monotonic()
        interval = self.settings.progress_interval_seconds
        while True:
            await asyncio.sleep(interval)
            elapsed = time.monotonic() - started
            try:
                await ctx.session.send_progress_notification(
                    token, progress=round(elapsed, 1),
                    message=f"{tool} still running ({elapsed:.0f} s)",
                    related_request_id=ctx.request_id,  # type: ignore[arg-type]
                )
            except Exception:  # noqa: BLE001 - the response stream is gone: the answer has nowhere to go
                return
