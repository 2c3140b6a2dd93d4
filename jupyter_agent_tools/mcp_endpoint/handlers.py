"""Thin tornado handlers: `agent-tools/mcp` (a run per conversation) and `runs/{id}/mcp`.

Authentication and authorization are jupyter_server's (resource `agent_tools:mcp`); a worker's
run token is good on its own run's route only (auth.py). Each request is handed to its
session's SDK transport through the ASGI bridge. Refusals before a session exists are
JSON-RPC errors (so MCP clients show the message) whose `data.code` is the contract's code.
A request answered in one JSON body skips the bridge and the transport: its session answers it
in this request's task (direct.py).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import Any, ClassVar, Literal
from weakref import WeakKeyDictionary

from jupyter_server.auth.decorator import authorized
from pydantic import BaseModel
from starlette.types import ASGIApp, Receive, Scope, Send
from tornado import web

from ..auth import WWW_AUTHENTICATE, Unauthenticated
from ..http.base import (
    STATUS_BY_CODE,
    AgentToolsHandler,
    ApiError,
    Operation,
)
from ..http.handlers import RUN_ID
from ..runtime import ErrorCode, ToolError
from .asgi import TornadoASGIBridge
from .direct import Answer, direct_request, request_id_of
from .endpoint import McpEndpoint
from .options import DEFAULT_SPACE, SERVER_PARAMETERS, run_request_from_query
from .sdk import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    MCP_PROTOCOL_VERSION_HEADER,
    MCP_SESSION_ID_HEADER,
    UNSUPPORTED_PROTOCOL_VERSION,
    discover_result,
    types,
    unsupported_version_data,
)
from .session import McpSession

MCP_RESOURCE = "agent_tools:mcp"
#: The sessions opened with an agent token: its id, and the run id last recorded as the
#: token's (a conversation's run may be made again under a new id). Only that token reaches one.
_AGENT_SESSIONS: WeakKeyDictionary[McpSession, tuple[str, str]] = WeakKeyDictionary()


class McpRefusal(BaseModel):
    """How the MCP routes refuse a request: a JSON-RPC error carrying the request's `id`, null
    when the request had none or it could not be read (JSON-RPC 2.0, section 5)."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: int | str | None = None
    error: types.ErrorData


class McpHandler(AgentToolsHandler):
    """`agent-tools/mcp`: POST opens a session with `initialize`, then serves it (its run is
    made at its first tools/call, or is its conversation's: endpoint.py)."""

    auth_resource = MCP_RESOURCE
    run_token_methods = frozenset({"GET", "POST", "DELETE"})
    # An agent token opens and serves sessions within its ceiling, also as `?token=`.
    agent_token_methods = frozenset({"GET", "POST", "DELETE"})
    agent_token_in_query = True
    # MCP streamable HTTP: JSON-RPC in, JSON or an event stream out; refusals are JSON-RPC
    # errors. The messages themselves are the MCP specification's, not modelled here.
    operations: ClassVar[dict[str, Operation]] = {
        "post": Operation("MCP: send a JSON-RPC message; initialize (without Mcp-Session-Id) "
                          "opens a session, whose run is made at its first tools/call",
                          {200: Any, 202: None},
                          errors=frozenset({400, 404, 406, 409, 413}), error_body=McpRefusal),
        "get": Operation("MCP: the session's stream of server messages (text/event-stream)",
                         {200: None}, errors=frozenset({400, 404, 406, 409}),
                         error_body=McpRefusal),
        "delete": Operation("MCP: end the session (and its run, unless its conversation "
                            "keeps it)", {200: None},
                            errors=frozenset({400, 404}), error_body=McpRefusal),
    }
    _bridge: TornadoASGIBridge | None = None
    # Whether the body was bounded (check_body): only then is it read for an error's id.
    _body_checked = False

    @property
    def endpoint(self) -> McpEndpoint:
        endpoint = self.settings.get("agent_tools_mcp")
        if endpoint is None:
            endpoint = McpEndpoint(self.runtime, base_url=self.base_url,
                                   parent=self.settings.get("serverapp"), log=self.log)
            self.settings["agent_tools_mcp"] = endpoint
        return endpoint

    def on_connection_close(self) -> None:
        if self._bridge is not None:
            self._bridge.connection_closed()

    @web.authenticated
    @authorized
    async def post(self, run_id: str | None = None) -> None:
        body = self.request.body or b""
        await self.check_body(body)  # bounded as the other agent-tools routes are
        self._body_checked = True
        session_id = self.request.headers.get(MCP_SESSION_ID_HEADER)
        if session_id is not None:
            await self._serve(await self._own_session(session_id, run_id))
            return
        version = self.request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            # The sessionless 2026 era has no session to hold a run: answer so that a client
            # negotiating ("auto") falls back to the initialize handshake.
            self._reject(400, UNSUPPORTED_PROTOCOL_VERSION,
                         "This endpoint keeps one run per session: open it with initialize.",
                         unsupported_version_data(version))
            return
        method = _method_of(body)
        request_id = self._request_id()
        if method == "server/discover" and request_id is not None:
            self._discovered(request_id)
            return
        if method != "initialize":
            self._reject(400, types.INVALID_REQUEST,
                         "No session: send an initialize request first (without Mcp-Session-Id).")
            return
        session = await self._open(run_id)
        status = await self._serve(session)
        if status is None or status >= 400:  # the handshake failed: nothing was established
            await session.terminate()
            await session.wait_ended(self.endpoint.end_timeout_seconds)

    @web.authenticated
    @authorized
    async def get(self, run_id: str | None = None) -> None:
        await self._serve(await self._own_session(self._session_id(), run_id))

    @web.authenticated
    @authorized
    async def delete(self, run_id: str | None = None) -> None:
        session = await self._own_session(self._session_id(), run_id)

        async def end_then_answer(scope: Scope, receive: Receive, send: Send) -> None:
            # The response is held until the session's run is released: when the client
            # hears that its session ended, the run's kernels and servers are gone too.
            await session.handle(scope, receive, send)
            if session.transport.is_terminated:
                await session.wait_ended(self.endpoint.end_timeout_seconds)

        await self._serve(session, end_then_answer)

    async def _open(self, run_id: str | None) -> McpSession:  # noqa: ARG002 - a hook
        ceiling = self.agent_token.ceiling if self.agent_token is not None else None
        options = run_request_from_query(
            self.request.query_arguments,
            default_space=ceiling.space if ceiling is not None and ceiling.space else DEFAULT_SPACE)
        options = self.within_ceiling(options)
        await self.check_conversation(options.conversation_id)
        session = await self.endpoint.open_new_run(options, owner=self._owner())
        await self._opened_with_token(session)
        return session

    async def _opened_with_token(self, session: McpSession) -> None:
        """An agent token's session: only that token reaches it, and the run it makes is the
        token's (recorded again should its conversation make a new one)."""
        if self.agent_token is None:
            return
        run_id = session.conversation.run_id
        recorded = _AGENT_SESSIONS.get(session)
        if recorded is None:
            # Its cards go to the user in the space, never back to the agent's own client by
            # elicitation: a client answering its own permission cards would make an `ask`
            # ceiling `auto`.
            session.settings = replace(session.settings, use_elicitation=False)
        if recorded is None or recorded[1] != run_id:
            await self.opened_with_token(run_id)
            _AGENT_SESSIONS[session] = (self.agent_token.id, run_id)

    def _owner(self) -> str:
        """Whose conversations a session may join: those opened with the same token, or else
        by the same user. (jupyter_server makes up a user per request for its own token.)"""
        if self.agent_token is not None:
            return f"agent-token:{self.agent_token.id}"
        token = self.identity_provider.get_token(self)
        if token:
            return "token:" + hashlib.sha256(token.encode()).hexdigest()
        user = self.current_user
        return "user:" + (getattr(user, "username", None) or str(user))

    def _discovered(self, request_id: types.RequestId) -> None:
        """`server/discover` (an mcp 2.x client's first request, without a 2026 version
        header): the handshake versions only, which tells the client to initialize."""
        result = discover_result("jupyter-agent-tools keeps one run per session: open one with "
                                 "initialize.")
        answer = types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)
        self.set_header("Content-Type", "application/json")
        self.finish(answer.model_dump_json(by_alias=True, exclude_unset=True))

    async def _serve(self, session: McpSession, app: ASGIApp | None = None) -> int | None:
        """Serve this request in `session` (with `app` in the session's place when given);
        the HTTP status it was answered with."""
        with session.serving():
            body = self.request.body or b""
            request = None
            if app is None and self.request.method == "POST" and session.answers_in_json(body):
                request = direct_request(self.request, body)
            if request is not None:
                return self._answered(session, await session.answer(request))
            self._bridge = TornadoASGIBridge(self)
            if app is not None:
                return await self._bridge.serve(app)
            with session.response_mode(body):
                return await self._bridge.serve(session.handle)

    def _answered(self, session: McpSession, answer: Answer | None) -> int:
        self.set_header(MCP_SESSION_ID_HEADER, session.id)
        if answer is None:  # a 404, as the transport answers once its session has ended
            code = ErrorCode.NOT_FOUND.value
            self._reject(404, types.INVALID_REQUEST,
                         f"{code}: the session ended before the request completed (its run "
                         "closed, or it was deleted or idle). Open a new one with initialize.",
                         {"code": code})
            return 404
        self.set_header("Content-Type", "application/json")
        self.finish(answer.model_dump_json(by_alias=True, exclude_unset=True))
        return 200

    def _session_id(self) -> str:
        session_id = self.request.headers.get(MCP_SESSION_ID_HEADER)
        if session_id is None:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"This request needs the {MCP_SESSION_ID_HEADER} header of an open "
                            "session; open one with a POST of initialize.")
        return session_id

    def _session(self, session_id: str, run_id: str | None) -> McpSession:
        session = self.endpoint.get(session_id, run_id)
        if session is None:  # 404 tells an MCP client to open a new session
            raise ToolError(ErrorCode.NOT_FOUND,
                            f"No open MCP session {session_id[:64]!r} here (it ended, or timed "
                            "out idle). Open a new one with initialize.")
        return session

    async def _own_session(self, session_id: str, run_id: str | None) -> McpSession:
        """`_session`, for an agent token only one it opened (else the same 404: to the token,
        another's session does not exist)."""
        session = self._session(session_id, run_id)
        if self.agent_token is not None:
            recorded = _AGENT_SESSIONS.get(session)
            if recorded is None or recorded[0] != self.agent_token.id:
                raise ToolError(ErrorCode.NOT_FOUND,
                                f"No open MCP session {session_id[:64]!r} of this agent token. "
                                "Open a new one with initialize.")
            await self._opened_with_token(session)
        return session

    def _request_id(self) -> types.RequestId | None:
        """The id of the request this answers, when its body (bounded) says one."""
        if not self._body_checked or self.request.method != "POST":
            return None
        return request_id_of(self.request.body or b"")

    def _reject(self, status: int, code: int, message: str, data: Any = None) -> None:
        error = (types.ErrorData(code=code, message=message) if data is None
                 else types.ErrorData(code=code, message=message, data=data))
        refusal = McpRefusal(jsonrpc="2.0", id=self._request_id(), error=error)
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(refusal.model_dump_json(by_alias=True, exclude_unset=True))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, Unauthenticated):
            # A JSON-RPC error, so that an MCP client shows the message (what to send).
            code = ErrorCode.PERMISSION_DENIED.value
            self.set_header("WWW-Authenticate", WWW_AUTHENTICATE)
            self._reject(401, types.INVALID_REQUEST, f"{code}: {exc.log_message}",
                         {"code": code})
            return
        if isinstance(exc, ApiError):
            self._reject(exc.status, types.INVALID_REQUEST, f"{exc.code.value}: {exc.message}",
                         {"code": exc.code.value})
            return
        if isinstance(exc, ToolError):
            self._reject(STATUS_BY_CODE.get(exc.code, 409),
                         types.INVALID_PARAMS if exc.code is not ErrorCode.NOT_FOUND
                         else types.INVALID_REQUEST,
                         f"{exc.code.value}: {exc.message}", {"code": exc.code.value})
            return
        super().write_error(status_code, **kwargs)


class RunMcpHandler(McpHandler):
    """`agent-tools/api/runs/{id}/mcp`: sessions over an existing run, which they leave open."""

    async def _open(self, run_id: str | None) -> McpSession:
        assert run_id is not None
        run = self.get_run(run_id)
        self.check_join(run.describe())  # an agent token's: opened with it, within its ceiling
        # The run's options were fixed when it was made: one given here would be ignored, and
        # a client asking for `surface=plan` must not get a full run without being told.
        options = sorted(set(self.request.query_arguments) - SERVER_PARAMETERS)
        if options:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"Run {run_id} keeps the options it was created with; {options} "
                            "cannot be given here. Drop them, or open agent-tools/mcp with them "
                            "for a new run of its own.")
        session = await self.endpoint.open_existing_run(run)
        await self._opened_with_token(session)
        return session


def _method_of(body: bytes) -> str | None:
    """The method of the JSON-RPC message in `body` (its values already bounded by
    `check_body`), if it is one message with a method."""
    try:
        message = json.loads(body or b"null")
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python recurses
        return None
    method = message.get("method") if isinstance(message, dict) else None
    return method if isinstance(method, str) else None


handlers: list[tuple[str, type]] = [
    (r"agent-tools/mcp", McpHandler),
    (rf"agent-tools/api/runs/{RUN_ID}/mcp", RunMcpHandler),
]

