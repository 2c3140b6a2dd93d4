"""Serve one tornado request through an ASGI application (the MCP SDK's transport is one).

The request body is handed over whole (tornado has read it already); the response is
streamed back as the application sends it, each chunk flushed, so server-sent events
reach the client as they happen. When the client goes away the application's `receive`
answers `http.disconnect`, as ASGI servers do.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.types import ASGIApp, Message
from tornado.iostream import StreamClosedError
from tornado.web import RequestHandler


def asgi_scope(handler: RequestHandler) -> dict[str, Any]:
    request = handler.request
    host, _, port = request.host.partition(":")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": request.version.removeprefix("HTTP/"),
        "method": request.method,
        "scheme": request.protocol,
        "path": request.path,
        "raw_path": request.path.encode("latin-1"),
        "query_string": request.query.encode("latin-1"),
        "root_path": "",
        "headers": [(name.lower().encode("latin-1"), value.encode("latin-1"))
                    for name, value in request.headers.get_all()],
        "client": (request.remote_ip, 0),
        "server": (host, int(port) if port.isdigit() else None),
    }


class TornadoASGIBridge:
    """Runs `app` for `handler`'s request; call `connection_closed()` from `on_connection_close`."""

    def __init__(self, handler: RequestHandler) -> None:
        self.handler = handler
        self.status: int | None = None
        self.content_type = "application/json"
        self._body_sent = False
        self._disconnected = asyncio.Event()

    def connection_closed(self) -> None:
        self._disconnected.set()

    async def serve(self, app: ASGIApp) -> int | None:
        """Run the application to the end of its response; the HTTP status it answered with."""
        await app(asgi_scope(self.handler), self._receive, self._send)
        if not self.handler._finished:
            if self.status is None:  # the application answered nothing
                self.handler.set_status(502)
            self.handler.finish(set_content_type=self.content_type)  # type: ignore[call-arg]
        return self.status

    async def _receive(self) -> Message:
        if not self._body_sent:
            self._body_sent = True
            return {"type": "http.request", "body": self.handler.request.body or b"",
                    "more_body": False}
        await self._disconnected.wait()
        return {"type": "http.disconnect"}

    async def _send(self, message: Message) -> None:
        if self._disconnected.is_set():
            return
        handler = self.handler
        if message["type"] == "http.response.start":
            self.status = int(message["status"])
            handler.set_status(self.status)
            seen: set[str] = set()
            for raw_name, raw_value in message.get("headers", []):
                name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
                if name.lower() == "content-type":
                    self.content_type = value
                if name.lower() in seen:
                    handler.add_header(name, value)
                else:
                    seen.add(name.lower())
                    handler.set_header(name, value)
        elif message["type"] == "http.response.body":
            body = message.get("body", b"")
            if body:
                handler.write(body)
            if message.get("more_body", False):
                try:
                    await handler.flush()
                except StreamClosedError:
                    self._disconnected.set()
