"""The one place that knows which line of the `mcp` SDK is installed: 1.x (>= 1.24, what
jupyter-ai's fastmcp 3 allows) or 2.x.

Everything else in `mcp_endpoint/` takes the SDK's types, constants and transport from here,
and serves a session through `serve_session` with the same hooks on either line. Which line
is found by feature, not by version number: mcp 2 has a separate `mcp_types` package and the
`ServerRunner` handler kernel (which `direct.py` calls to answer JSON requests in the HTTP
request's own task); mcp 1 has neither, so there every request goes through the SDK's
transport (in its JSON mode when `McpSession.answers_in_json`) and its `ServerSession`.

mcp 1.x is a maintenance line: the few private members used with it (`Server._handle_message`,
`ServerSession._received_request`) are those its own `Server.run` uses, and are fixed there.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.session import ServerSession

#: mcp 2.x: `mcp_types` and the `ServerRunner` kernel. Else mcp 1.x.
MCP2: bool = (importlib.util.find_spec("mcp_types") is not None
              and importlib.util.find_spec("mcp.server.runner") is not None)

if TYPE_CHECKING or MCP2:
    import mcp_types as types
    from mcp.server.streamable_http import (
        CONTENT_TYPE_JSON,
        MCP_SESSION_ID_HEADER,
        REQUEST_CANCELLED,
        StreamableHTTPServerTransport,
    )
    from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    UNSUPPORTED_PROTOCOL_VERSION: int = types.UNSUPPORTED_PROTOCOL_VERSION
else:
    from mcp import types
    from mcp.server.streamable_http import (
        CONTENT_TYPE_JSON,
        MCP_PROTOCOL_VERSION_HEADER,
        MCP_SESSION_ID_HEADER,
        StreamableHTTPServerTransport,
    )
    from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS

    HANDSHAKE_PROTOCOL_VERSIONS = tuple(SUPPORTED_PROTOCOL_VERSIONS)
    # The codes mcp 2 names (the 2026 protocol's); the same numbers on the wire.
    UNSUPPORTED_PROTOCOL_VERSION = -32022
    REQUEST_CANCELLED = -32800

__all__ = [
    "CONTENT_TYPE_JSON",
    "HANDSHAKE_PROTOCOL_VERSIONS",
    "MCP2",
    "MCP_PROTOCOL_VERSION_HEADER",
    "MCP_SESSION_ID_HEADER",
    "REQUEST_CANCELLED",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "ServerSession",
    "SessionHooks",
    "StreamableHTTPServerTransport",
    "ToolCall",
    "call_tool_result",
    "discover_result",
    "make_server",
    "serve_session",
    "tool",
    "types",
    "unsupported_version_data",
]


# -- messages: built from their wire (camelCase) form, which both lines validate ------------


def tool(name: str, description: str, input_schema: dict[str, Any],
         output_schema: dict[str, Any], *, read_only: bool) -> types.Tool:
    return types.Tool.model_validate({
        "name": name, "description": description, "inputSchema": input_schema,
        "outputSchema": output_schema, "annotations": {"readOnlyHint": read_only}})


def call_tool_result(content: list[dict[str, Any]], structured: dict[str, Any], *,
                     is_error: bool) -> types.CallToolResult:
    """`content`: text ({type, text}) and image ({type, data, mimeType}) blocks."""
    return types.CallToolResult.model_validate({
        "content": content, "structuredContent": structured, "isError": is_error})


def unsupported_version_data(requested: str) -> dict[str, Any]:
    """The `data` of an unsupported-protocol-version error."""
    return {"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": requested}


def discover_result(instructions: str) -> dict[str, Any]:
    """The result of `server/discover` (an mcp 2 client's first request): the handshake
    versions only, which tells the client to initialize."""
    if hasattr(types, "DiscoverResult"):
        result = types.DiscoverResult(
            supported_versions=list(HANDSHAKE_PROTOCOL_VERSIONS),
            capabilities=types.ServerCapabilities(tools=types.ToolsCapability(list_changed=True)),
            instructions=instructions)
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return {"supportedVersions": list(HANDSHAKE_PROTOCOL_VERSIONS),
            "capabilities": {"tools": {"listChanged": True}}, "instructions": instructions}


# -- serving a session ----------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    """A tools/call as our session sees it, on either line."""

    name: str
    arguments: dict[str, Any]
    #: The SDK's session of the client: `elicit_form`, `send_progress_notification`.
    session: ServerSession
    request_id: types.RequestId | None
    progress_token: types.ProgressToken | None


class SessionHooks(Protocol):
    """What a session does with the SDK's requests (session.py's `McpSession`)."""

    async def list_tools(self) -> list[types.Tool]: ...

    async def call_tool(self, call: ToolCall) -> types.CallToolResult: ...

    def seen(self, session: ServerSession, capabilities: dict[str, Any],
             client_info: dict[str, Any] | None = None) -> None:
        """A request arrived in `session`; at initialize, the client's capabilities (before the
        answer: its next request may be a call) and its clientInfo (name, version)."""

    async def initialized(self) -> None:
        """The answer to initialize was given."""


#: Called once the session can take requests; on mcp 2 with its `ServerRunner`, through which
#: requests answered in JSON are dispatched directly (direct.py), on mcp 1 with None.
OnReady = Callable[[Any], None]
#: mcp 2's dispatcher hands every notification here first (direct.py's cancel of a request
#: it answers); True consumes it.
OnNotification = Callable[[str, Mapping[str, Any] | None], bool]


def make_server(name: str, version: str, instructions: str, hooks: SessionHooks) -> Server[Any]:
    """The SDK's lowlevel server of one session, answering tools/list and tools/call."""
    if MCP2:
        return _make_server_2(name, version, instructions, hooks)
    return _make_server_1(name, version, instructions, hooks)


async def serve_session(server: Server[Any], hooks: SessionHooks, session_id: str,
                        read_stream: Any, write_stream: Any, *, on_ready: OnReady,
                        on_notification: OnNotification) -> None:
    """Serve the transport's streams until they close."""
    if MCP2:
        await _serve_2(server, session_id, read_stream, write_stream, on_ready, on_notification)
    else:
        await _serve_1(server, hooks, read_stream, write_stream, on_ready)


# mcp 2: the handlers and a middleware given to `Server`, served by a `ServerRunner`.


def _make_server_2(name: str, version: str, instructions: str, hooks: SessionHooks
                   ) -> Server[Any]:
    from mcp.shared.jsonrpc_dispatcher import progress_token_from_params

    if TYPE_CHECKING:
        from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

    async def list_tools(_ctx: ServerRequestContext[Any, Any],
                         _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=await hooks.list_tools())

    async def call_tool(ctx: ServerRequestContext[Any, Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        return await hooks.call_tool(ToolCall(
            name=params.name, arguments=dict(params.arguments or {}), session=ctx.session,
            request_id=ctx.request_id, progress_token=progress_token_from_params(ctx.params)))

    async def observe(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        capabilities: dict[str, Any] = {}
        client_info: dict[str, Any] | None = None
        if ctx.method == "initialize":
            capabilities = (ctx.params or {}).get("capabilities") or {}
            client_info = (ctx.params or {}).get("clientInfo")
        hooks.seen(ctx.session, capabilities, client_info)
        result = await call_next(ctx)
        if ctx.method == "initialize":
            await hooks.initialized()
        return result

    server: Server[Any] = Server(name, version=version, instructions=instructions,
                                 on_list_tools=list_tools, on_call_tool=call_tool)
    # Only our observer: the SDK's default OpenTelemetry middleware costs a span per message
    # and Jupyter installs no exporter for it.
    server.middleware = [observe]
    return server


async def _serve_2(server: Server[Any], session_id: str, read_stream: Any, write_stream: Any,
                   on_ready: OnReady, on_notification: OnNotification) -> None:
    from mcp.server.connection import Connection
    from mcp.server.runner import ServerRunner, aclose_shielded
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

    # The SDK's serve_loop, its runner kept for the requests answered directly.
    dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(
        read_stream, write_stream, inline_methods=frozenset({"initialize"}))
    connection = Connection.for_loop(dispatcher, session_id=session_id)
    runner = ServerRunner(server, connection, {}, init_options=server.create_initialization_options(
        NotificationOptions(tools_changed=True)))
    on_ready(runner)
    try:
        await dispatcher.run(runner.on_request, runner.on_notify,
                             on_notify_intercept=on_notification)
    finally:
        await aclose_shielded(connection)


# mcp 1: handlers registered by request type, served by `Server.run`'s loop with our
# `ServerSession` (which tells the hooks of initialize).


def _make_server_1(name: str, version: str, instructions: str, hooks: SessionHooks
                   ) -> Server[Any]:
    server: Server[Any] = Server(name, version=version, instructions=instructions)
    # mcp 1's server and types (camelCase fields, RootModel unions), which mypy, checking
    # against mcp 2, does not know.
    legacy_server: Any = server
    legacy: Any = types

    async def list_tools(_request: Any) -> Any:
        return legacy.ServerResult(legacy.ListToolsResult(tools=await hooks.list_tools()))

    async def call_tool(request: Any) -> Any:
        ctx = legacy_server.request_context
        meta = ctx.meta
        return legacy.ServerResult(await hooks.call_tool(ToolCall(
            name=request.params.name, arguments=dict(request.params.arguments or {}),
            session=ctx.session, request_id=ctx.request_id,
            progress_token=meta.progressToken if meta is not None else None)))

    handlers: dict[Any, Callable[..., Awaitable[Any]]] = legacy_server.request_handlers
    handlers[legacy.ListToolsRequest] = list_tools
    handlers[legacy.CallToolRequest] = call_tool
    return server


async def _serve_1(server: Server[Any], hooks: SessionHooks, read_stream: Any,
                   write_stream: Any, on_ready: OnReady) -> None:
    import anyio

    base: Any = ServerSession

    class HookedSession(base):
        """mcp 1's session, which answers initialize itself: the hooks hear of it."""

        async def _received_request(self, responder: Any) -> None:
            request = responder.request.root
            initialize = isinstance(request, types.InitializeRequest)
            if initialize:
                capabilities = request.params.capabilities.model_dump(
                    by_alias=True, exclude_none=True)
                hooks.seen(self, capabilities,
                           request.params.clientInfo.model_dump(exclude_none=True))
            await super()._received_request(responder)
            if initialize:
                await hooks.initialized()

    init_options: Any = server.create_initialization_options(
        NotificationOptions(tools_changed=True))
    legacy_server: Any = server
    run_handler = legacy_server._handle_message  # what mcp 1's Server.run calls
    async with HookedSession(read_stream, write_stream, init_options) as session:
        hooks.seen(session, {})
        on_ready(None)
        async with anyio.create_task_group() as group:
            try:
                async for message in session.incoming_messages:
                    group.start_soon(run_handler, message, session, {}, False)
            finally:
                group.cancel_scope.cancel()
