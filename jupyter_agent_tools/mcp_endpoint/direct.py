"""Requests answered in one JSON body, dispatched in their HTTP request's own task.

The SDK's streamable HTTP transport hands every request to its session's dispatcher over
memory streams and answers it from another task: for a JSON answer that is about 0.4 ms of
server CPU per call in stream and task hops (benchmarks/bench_mcp.py), more than the rest of
MCP. A request whose answer is one JSON body can have nothing else said about it (see
`McpSession.answers_in_json`), so it needs none of that: it goes straight to the session's
`ServerRunner`, the SDK's own handler kernel (the same validation, middleware, handlers and
result shaping), through a dispatch context that has no back channel, as the transport's JSON
mode has none. Notifications, initialize, batches, event-stream answers and anything the
transport must refuse still go through the transport.

mcp 2 only (sdk.py): with mcp 1, which has no `ServerRunner`, every request goes through the
transport (`direct_request` says None).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Mapping
from typing import Any, Literal

import anyio
import pydantic_core
from pydantic import ValidationError
from tornado.httputil import HTTPServerRequest

from .sdk import CONTENT_TYPE_JSON, MCP2, REQUEST_CANCELLED, types

if MCP2:
    from mcp.server.runner import ServerRunner
    from mcp.server.streamable_http import check_accept_headers
    from mcp.shared.dispatcher import CallOptions, coerce_request_id
    from mcp.shared.exceptions import NoBackChannelError
    from mcp.shared.jsonrpc_dispatcher import (
        cancelled_request_id_from_params,
        handler_exception_to_error_data,
    )
    from mcp.shared.message import ServerMessageMetadata
    from mcp.shared.transport_context import TransportContext

    _NO_BACK_CHANNEL = TransportContext(kind="streamable-http", can_send_request=False)
    _NO_BACK_CHANNEL_METADATA = ServerMessageMetadata(can_send_request=False)

Answer = types.JSONRPCResponse | types.JSONRPCError


class JsonAnswerContext:
    """The SDK's `DispatchContext` for a request answered in one JSON body.

    As in the transport's JSON mode: a server-to-client request raises NoBackChannelError, and
    a notification about the request is dropped (the answer is the only thing on the wire).
    """

    if MCP2:
        transport = _NO_BACK_CHANNEL
        message_metadata = _NO_BACK_CHANNEL_METADATA

    def __init__(self, request_id: types.RequestId) -> None:
        self.request_id = request_id
        self._cancel_requested: anyio.Event | None = None
        #: Why it was stopped, when it was: the client cancelled it, or the session ended.
        self.stopped: Literal["cancelled", "ended"] | None = None

    @property
    def cancel_requested(self) -> anyio.Event:
        """Made when first asked for: few requests are (an event per call costs a few µs)."""
        if self._cancel_requested is None:
            self._cancel_requested = anyio.Event()
        return self._cancel_requested

    @property
    def can_send_request(self) -> bool:
        return False

    async def notify(self, method: str, params: Mapping[str, Any] | None,
                     opts: CallOptions | None = None) -> None:
        """Dropped: a JSON answer has no room for it."""

    async def send_raw_request(self, method: str, params: Mapping[str, Any] | None,  # noqa: ARG002
                               opts: CallOptions | None = None) -> dict[str, Any]:  # noqa: ARG002
        raise NoBackChannelError(method)

    async def progress(self, progress: float, total: float | None = None,
                       message: str | None = None) -> None:
        """No progress token: a request that carries one is answered as an event stream."""


def direct_request(request: HTTPServerRequest, body: bytes) -> types.JSONRPCRequest | None:
    """The JSON-RPC request in `body` when it can be answered here, else None (the transport
    serves it, and answers the refusals: a wrong media type, a body that does not parse)."""
    if not MCP2:
        return None
    # The SDK's own reading of Accept; it reads only `.headers`, which tornado's request has.
    has_json, _ = check_accept_headers(request)  # type: ignore[arg-type]
    media_type = request.headers.get("Content-Type", "").split(";")[0].strip().lower()
    if not has_json or media_type != CONTENT_TYPE_JSON:
        return None
    try:
        message = types.jsonrpc_message_adapter.validate_python(pydantic_core.from_json(body),
                                                                by_name=False)
    except (ValueError, ValidationError):  # not JSON (too deep included), or not JSON-RPC
        return None
    if not isinstance(message, types.JSONRPCRequest) or message.method == "initialize":
        return None
    return message


def request_id_of(body: bytes) -> types.RequestId | None:
    """The id of the JSON-RPC request in `body` (already bounded), for an error answering it;
    None when there is none or it cannot be read (the error's id is then null)."""
    try:
        message = pydantic_core.from_json(body)
    except ValueError:
        return None
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None
    return request_id


class DirectAnswers:
    """The requests of one session being answered, each in its HTTP request's task: stopped
    when the client cancels one (`notifications/cancelled`) or the session ends."""

    def __init__(self, log: logging.Logger) -> None:
        self.log = log
        self._in_flight: dict[types.RequestId, tuple[asyncio.Task[Any], JsonAnswerContext]] = {}

    async def answer(self, runner: ServerRunner[Any], request: types.JSONRPCRequest
                     ) -> Answer | None:
        """The request's answer; None when the session ended before it was answered.

        Run in the calling task (a task of its own per call costs as much again as the
        dispatch), which is cancelled to stop it, and told apart by `stopped`.
        """
        task = asyncio.current_task()
        assert task is not None
        context = JsonAnswerContext(request.id)
        key = coerce_request_id(request.id)
        self._in_flight[key] = (task, context)
        try:
            result = await runner.on_request(context, request.method, request.params)
        except asyncio.CancelledError:
            if context.stopped is None:
                raise  # the HTTP request itself is cancelled (the server stops)
            if context.stopped == "ended":
                return None
            # As the transport answers a request cancelled in JSON mode.
            return types.JSONRPCError(jsonrpc="2.0", id=request.id, error=types.ErrorData(
                code=REQUEST_CANCELLED, message="Request cancelled"))
        except Exception as exc:  # the answer is the error, as the dispatcher's
            error = handler_exception_to_error_data(exc)
            if error is None:
                self.log.exception("agent-tools mcp: %s raised", request.method)
                error = types.ErrorData(code=types.INTERNAL_ERROR, message=str(exc))
            return types.JSONRPCError(jsonrpc="2.0", id=request.id, error=error)
        finally:
            if self._in_flight.get(key, (None,))[0] is task:
                del self._in_flight[key]
            if context.stopped is not None and sys.version_info >= (3, 11):
                task.uncancel()  # the stop is handled: the task goes on to answer
        return types.JSONRPCResponse(jsonrpc="2.0", id=request.id, result=result)

    def on_notification(self, method: str, params: Mapping[str, Any] | None) -> bool:
        """The dispatcher's intercept: a cancel of a request answered here stops it. Never
        consumes the notification (the dispatcher and the server see it as before)."""
        if method == "notifications/cancelled":
            request_id = cancelled_request_id_from_params(params)
            entry = (self._in_flight.get(coerce_request_id(request_id))
                     if request_id is not None else None)
            if entry is not None:
                entry[1].cancel_requested.set()
                self._stop(*entry, "cancelled")
        return False

    def cancel_all(self) -> None:
        """The session ended: its requests in flight are answered as such (404)."""
        for task, context in list(self._in_flight.values()):
            self._stop(task, context, "ended")

    @staticmethod
    def _stop(task: asyncio.Task[Any], context: JsonAnswerContext,
              why: Literal["cancelled", "ended"]) -> None:
        if context.stopped is None:
            context.stopped = why
            task.cancel()
