"""A Debug Adapter Protocol client: over a byte stream (an adapter's stdio or a unix socket)
or, with the same request/response logic, over another transport (a kernel's control channel).

The client matches responses to requests, hands events to one callback, and declines the
adapter's reverse requests (we never run anything in a terminal). The stream client frames
messages (`Content-Length` headers). When the transport ends every pending request fails with
`AdapterGone`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .errors import AdapterGone, DapError, RequestTimeout
from .protocol import DapModel, Event, Request, Response

__all__ = ["AdapterGone", "DapClient", "DapError", "RequestTimeout", "StreamDapClient"]

BodyT = TypeVar("BodyT", bound=BaseModel)

# Larger messages are a broken adapter, not a stack trace: refuse rather than buffer forever.
MAX_MESSAGE_BYTES = 32 * 1024 * 1024


class DapClient:
    """One connection to one debug adapter; a subclass is its transport (`_write`,
    `_read_message`, `_close_transport`)."""

    def __init__(self, on_event: Callable[[Event], None], log: logging.Logger) -> None:
        self._on_event = on_event
        self._log = log
        self._seq = 0
        self._pending: dict[int, asyncio.Future[Response]] = {}
        self.closed_reason: str | None = None
        self._reader_task = asyncio.create_task(self._read_loop())

    @property
    def closed(self) -> bool:
        return self.closed_reason is not None

    async def wait_closed(self) -> str:
        """Wait until the stream ends; why it ended."""
        await asyncio.gather(self._reader_task, return_exceptions=True)
        return self.closed_reason or "the stream ended"

    def send(self, command: str, arguments: DapModel | None = None) -> asyncio.Future[Response]:
        """Send a request now; the returned future resolves with its response.

        Not awaiting it is how `launch` is sent: debugpy answers it only after
        `configurationDone`, which we can only send once `initialized` arrives.
        """
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        if self.closed:
            future.set_exception(AdapterGone(self.closed_reason or "closed"))
            return future
        self._seq += 1
        request = Request(seq=self._seq, command=command,
                          arguments=arguments.wire() if arguments is not None else None)
        self._pending[request.seq] = future
        self._write(request.model_dump(by_alias=True, exclude_none=True))
        return future

    async def request(
        self,
        command: str,
        arguments: DapModel | None,
        body_type: type[BodyT],
        timeout: float,
    ) -> BodyT:
        """Send a request, wait (bounded) for its response, and parse the body."""
        return parse_body(await self.wait(self.send(command, arguments), timeout), body_type)

    async def wait(self, future: asyncio.Future[Response], timeout: float) -> Response:
        """The response of a request sent with `send`, or an error saying why not."""
        try:
            response = await asyncio.wait_for(asyncio.shield(future), timeout)
        except asyncio.TimeoutError:
            raise RequestTimeout(f"no answer within {timeout:g}s") from None
        if not response.success:
            raise DapError(response.command, response.message or "failed")
        return response

    async def close(self) -> None:
        """Stop reading and close our end of the stream."""
        self._fail_pending("the client closed the connection")
        self._reader_task.cancel()
        self._close_transport()
        await asyncio.gather(self._reader_task, return_exceptions=True)

    # -- transport -------------------------------------------------------------------------

    def _write(self, message: dict[str, Any]) -> None:
        raise NotImplementedError

    async def _read_message(self) -> dict[str, Any] | None:
        """The next message, or None when the transport ended."""
        raise NotImplementedError

    def _close_transport(self) -> None:
        raise NotImplementedError

    # -- messages --------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        reason = "the adapter closed its output"
        try:
            while True:
                message = await self._read_message()
                if message is None:
                    break
                self._dispatch(message)
        except asyncio.CancelledError:
            reason = "the client closed the connection"
        except (OSError, ValueError) as exc:
            reason = f"the adapter's stream broke ({exc})"
        self._fail_pending(reason)

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        try:
            if kind == "response":
                response = Response.model_validate(message)
                future = self._pending.pop(response.request_seq, None)
                if future is not None and not future.done():
                    future.set_result(response)
            elif kind == "event":
                event = Event.model_validate(message)
                try:
                    self._on_event(event)
                except Exception:  # noqa: BLE001 - contained: one bad event must not end the session
                    self._log.exception("handling DAP event %s failed", event.event)
            elif kind == "request":
                self._decline(Request.model_validate(message))
        except ValidationError as exc:
            self._log.warning("ignoring a malformed DAP message: %s", exc)

    def _decline(self, request: Request) -> None:
        self._seq += 1
        self._write(Response(seq=self._seq, request_seq=request.seq, success=False,
                             command=request.command,
                             message="not supported by this client").wire())

    def _fail_pending(self, reason: str) -> None:
        if self.closed_reason is None:
            self.closed_reason = reason
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(AdapterGone(reason))
                # Mark it retrieved: a launch future nobody awaits must not warn at exit.
                future.exception()


class StreamDapClient(DapClient):
    """DAP over a byte stream, framed with `Content-Length` headers."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        on_event: Callable[[Event], None],
        log: logging.Logger,
    ) -> None:
        self._reader = reader
        self._writer = writer
        super().__init__(on_event, log)

    def _write(self, message: dict[str, Any]) -> None:
        payload = json.dumps(message).encode()
        try:
            self._writer.write(b"Content-Length: %d\r\n\r\n" % len(payload) + payload)
        except (OSError, RuntimeError) as exc:
            self._fail_pending(f"writing to the adapter failed ({exc})")

    def _close_transport(self) -> None:
        try:
            self._writer.close()
        except (OSError, RuntimeError):
            pass

    async def _read_message(self) -> dict[str, Any] | None:
        length = None
        while True:
            line = await self._reader.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                if length is None:
                    continue
                break
            name, _, value = line.decode("ascii", errors="replace").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if length > MAX_MESSAGE_BYTES:
            raise ValueError(f"a {length}-byte message is larger than {MAX_MESSAGE_BYTES}")
        return json.loads(await self._reader.readexactly(length))


def parse_body(response: Response, body_type: type[BodyT]) -> BodyT:
    """A response's body as `body_type` (an empty body is the type's defaults)."""
    return body_type.model_validate(response.body or {})
