"""One MCP session: the SDK's lowlevel `Server` over its streamable-HTTP transport, bound to a run.

The session answers `tools/list` with the run's visible tools and `tools/call` through
`Run.call` (origin `mcp`), so the same validation, approval gate and wrappers apply as for
every other origin. It follows its run's events: `tools_changed` becomes
`notifications/tools/list_changed`, `run_closed` ends the session.

A request is answered with one JSON body unless something may be said on its response stream
before the answer (progress of a call that asked for it, a card asked by elicitation): then
it is answered as server-sent events. A JSON answer costs the server about a quarter less CPU
than an event stream (benchmarks/bench_mcp.py), and lets the client keep its connection. A
request answered in JSON is dispatched in its HTTP request's own task (direct.py; with mcp 2:
see sdk.py).

The session, not the transport, keeps the idle clock: a request answered here never reaches
the transport, and still holds the session while it runs. A session that has not called a
tool holds no run (its conversation makes one at its first call: conversation.py) and ends
after `unused_session_seconds` without a request; one that has, after `idle_timeout_seconds`.
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
from starlette.responses import Response

from .._version import __version__
from ..questions import RunQuestions
from ..runtime import Origin, Resource, Run, ToolError
from ..runtime.run import ClientInfo
from .conversation import McpConversation
from .direct import Answer, DirectAnswers, request_id_of
from .elicitation import CardElicitor
from .results import call_tool_result, mcp_tools
from .sdk import (
    CONTENT_TYPE_JSON,
    MCP_SESSION_ID_HEADER,
    ServerSession,
    StreamableHTTPServerTransport,
    ToolCall,
    make_server,
    serve_session,
    types,
)

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server
    from mcp.server.runner import ServerRunner
    from starlette.types import Receive, Scope, Send



@dataclass(frozen=True)
class McpSessionSettings:
    """What a session needs of its endpoint's configuration, fixed when it opens."""

    idle_timeout_seconds: float
    use_elicitation: bool
    #: How long a session that has not called a tool lasts without a request.
    unused_session_seconds: float
    progress_interval_seconds: float
    #: The server's base URL (`/user/<name>/` under JupyterHub): what the links we hand the
    #: client start with.
    base_url: str = "/"


# Whether the request being served is answered with one JSON body; set around each request
# (a context variable: every request is served in a task of its own).
_ANSWER_IN_JSON: ContextVar[bool] = ContextVar("agent_tools_mcp_answer_in_json", default=False)
# The body of the request being served, read for its id only when the transport refuses it.
_REQUEST_BODY: ContextVar[bytes] = ContextVar("agent_tools_mcp_request_body", default=b"")


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
        request_id = request_id_of(_REQUEST_BODY.get())
        if request_id is None:  # none, or it cannot be read: the SDK's error, its id null
            return super()._create_error_response(error_message, status_code, error_code,
                                                  headers)
        # The SDK's error, with the id of the request it answers (JSON-RPC wants it).
        error = types.JSONRPCError(jsonrpc="2.0", id=request_id,
                                   error=types.ErrorData(code=error_code, message=error_message))
        response_headers = {"Content-Type": CONTENT_TYPE_JSON, **(headers or {})}
        if self.mcp_session_id:
            response_headers[MCP_SESSION_ID_HEADER] = self.mcp_session_id
        return Response(error.model_dump_json(by_alias=True, exclude_unset=True),
                        status_code=status_code, headers=response_headers)


class McpSession:
    """An MCP session of a conversation's run. Start with `start()`; it ends when the transport
    does.

    `on_end` is called once the session has ended (the endpoint forgets it).
    """

    def __init__(self, conversation: McpConversation, settings: McpSessionSettings, *,
                 log: logging.Logger, on_end: Callable[[McpSession], None]) -> None:
        self.settings = settings
        self.log = log
        self._on_end = on_end
        #: The run this session serves, shared with the other sessions naming its
        #: conversation_id; made at the first tool call (conversation.py).
        self.conversation = conversation
        #: The run this session follows (its events), once it has one.
        self._run: Run | None = None
        self.id = uuid.uuid4().hex
        self.transport = PerRequestTransport(
            mcp_session_id=self.id)
        run_id = conversation.run_id
        self.server: Server[Any] = make_server(
            "jupyter-agent-tools", __version__,
            (f"The tools of jupyter-agent-tools run {run_id} (working directory "
                          f"{conversation.cwd()}, surface {conversation.surface()}, "
                          f"conversation {conversation.conversation_id}). Questions "
                          "and permission prompts go to your user, or to the JupyterLab panel "
                          f"(Agent Tools) at {settings.base_url}lab on this server. The run's "
                          f"HTTP API (once a tool was called): "
                          f"{settings.base_url}agent-tools/api/runs/{run_id}."),
            self)
        # mcp 2's handler kernel, through which requests answered in JSON go (direct.py).
        self._runner: ServerRunner[Any] | None = None
        self._direct = DirectAnswers(log)
        self._server_session: ServerSession | None = None
        # tools/call requests in progress: a card they raise is asked on their response stream.
        self._calls_in_flight: dict[types.RequestId, ServerSession] = {}
        self._elicitor: CardElicitor | None = None
        # Whether the client said at initialize that it answers elicitation requests.
        self._client_elicits = False
        #: The client's name and version, as it said at initialize.
        self.client: ClientInfo | None = None
        self._task: asyncio.Task[None] | None = None
        self._followers: list[asyncio.Task[None]] = []
        self._requests_in_flight = 0
        self._last_request_end = 0.0  # the event loop's clock
        self._idle_timer: asyncio.TimerHandle | None = None
        self._idle_end: asyncio.Task[None] | None = None  # kept: a task is only weakly held
        #: Whether a tool was called in this session (until then it holds nothing).
        self.used = False
        #: Why it ended when not by a DELETE or its run closing: ended to make room, or idle.
        self._ended_idle = False
        # The tool names the client was last given, to tell it when its run's differ.
        self._listed: list[str] | None = None
        self.ended = asyncio.Event()

    @property
    def run(self) -> Run | None:
        """The run this session serves, when it has one yet."""
        return self._run or self.conversation.live_run

    @property
    def busy(self) -> bool:
        """A request is in flight (an open GET stream counts)."""
        return self._requests_in_flight > 0

    @property
    def last_active(self) -> float:
        """When its last request ended (the event loop's clock)."""
        return self._last_request_end

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
        if self._runner is None or self.transport.is_terminated:  # never started, or mcp 1
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
        timeout = (self.settings.idle_timeout_seconds if self.used
                   else min(self.settings.unused_session_seconds,
                            self.settings.idle_timeout_seconds))
        left = timeout if self._requests_in_flight else (
            self._last_request_end + timeout - loop.time())
        if left > 0:
            self._idle_timer = loop.call_later(left, self._check_idle)
            return
        self._idle_timer = None
        self.log.info("agent-tools mcp: session %s %s for %g s: ending it", self.id,
                      "idle" if self.used else "unused", timeout)
        self._idle_end = asyncio.ensure_future(self.terminate(idle=True))

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
        body_token = _REQUEST_BODY.set(body)
        try:
            yield
        finally:
            _REQUEST_BODY.reset(body_token)
            _ANSWER_IN_JSON.reset(token)

    async def terminate(self, *, idle: bool = False) -> None:
        """End the session now (the run closing, the server stopping, idle, or to make room:
        `idle`)."""
        self._ended_idle = self._ended_idle or idle
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

                def on_ready(runner: ServerRunner[Any] | None) -> None:
                    self._runner = runner
                    self._last_request_end = asyncio.get_running_loop().time()
                    self._check_idle()
                    ready.set()

                await serve_session(self.server, self, self.id, read_stream, write_stream,
                                    on_ready=on_ready,
                                    on_notification=self._direct.on_notification)
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
        await self.conversation.leave(self.id, ended_by="idle" if self._ended_idle else "close")
        self.ended.set()

    async def _bind(self, run: Run) -> None:
        """Serve `run` from now on: follow its events, put its cards to the client."""
        if self._run is run:
            return
        self._run = run
        for task in self._followers:
            task.cancel()
        self._followers = [asyncio.ensure_future(self._follow_run(run))]
        if self._client_elicits and self._elicitor is None:
            await self._start_eliciting(run)
        if self._listed is not None and self._listed != run.tool_names():
            await self._say_tools_changed()  # its resources were not all there

    async def _follow_run(self, run: Run) -> None:
        # Only what it acts on: woken for every call's events, it cost each call two wake-ups.
        async with run.events.subscribe(only=frozenset({"run_closed", "tools_changed"})
                                        ) as events:
            if run.closed:  # closed before the subscription was in place
                await self.terminate()
                return
            while True:
                event = await events.get()
                if event["type"] == "run_closed":
                    await self.terminate()
                    return
                if event["type"] == "tools_changed":
                    await self._say_tools_changed()

    async def _say_tools_changed(self) -> None:
        if self._server_session is None:
            return
        try:
            await self._server_session.send_tool_list_changed()
        except Exception as exc:  # noqa: BLE001 - the client went away; the session ends anyway
            self.log.info("agent-tools mcp: session %s: list_changed not sent (%s)",
                          self.id, exc)

    # -- MCP ----------------------------------------------------------------------------------

    # The SDK's requests (sdk.SessionHooks).

    def seen(self, session: ServerSession, capabilities: dict[str, Any],
             client_info: dict[str, Any] | None = None) -> None:
        """Remember a session to notify through; at initialize, whether the client elicits and
        who it is (its run, made at the first call, shows that to the human)."""
        self._server_session = session
        self.client = ClientInfo.of(client_info) or self.client
        # Known before the answer to initialize: the client's next request may be a call.
        self._client_elicits = self._client_elicits or capabilities.get("elicitation") is not None

    async def initialized(self) -> None:
        run = self.conversation.live_run
        if run is not None:
            await self._bind(run)  # its conversation has a run already: this session joins it

    async def _start_eliciting(self, run: Run) -> None:
        questions = run.resources.get(Resource.QUESTIONS)
        if not self.settings.use_elicitation or not isinstance(questions, RunQuestions):
            return
        port = run.runtime.provider(Resource.QUESTIONS)
        human = await port.connect_human(questions.space, run_id=run.id)  # type: ignore[union-attr]
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

    async def list_tools(self) -> list[types.Tool]:
        schemas = self.conversation.schemas()
        self._listed = [schema["name"] for schema in schemas]
        return mcp_tools(schemas)

    async def call_tool(self, call: ToolCall) -> types.CallToolResult:
        token = call.progress_token
        heartbeat = None
        if token is not None and call.request_id is not None:
            heartbeat = asyncio.ensure_future(self._report_progress(call, token))
        if call.request_id is not None:
            self._calls_in_flight[call.request_id] = call.session
        self.used = True
        try:
            try:
                run = await self.conversation.ensure_run(client=self.client)
            except ToolError as error:  # the run could not be made: the call's answer says why
                return call_tool_result(error.to_result())
            await self._bind(run)
            result = await run.call(call.name, call.arguments, origin=Origin.MCP)
        finally:
            self._calls_in_flight.pop(call.request_id, None)  # type: ignore[arg-type]
            if heartbeat is not None:
                heartbeat.cancel()
        return call_tool_result(result)

    async def _report_progress(self, call: ToolCall, token: types.ProgressToken) -> None:
        """While a call runs, tell the client every few seconds that it still does."""
        started = time.monotonic()
        interval = self.settings.progress_interval_seconds
        while True:
            await asyncio.sleep(interval)
            elapsed = time.monotonic() - started
            try:
                await call.session.send_progress_notification(
                    token, progress=round(elapsed, 1),
                    message=f"{call.name} still running ({elapsed:.0f} s)",
                    related_request_id=call.request_id,  # type: ignore[arg-type]
                )
            except Exception:  # noqa: BLE001 - the response stream is gone: the answer has nowhere to go
                return
