"""How a KernelSession reaches its kernel: the kernel's ZeroMQ sockets, or a gateway's websocket.

Both deliver every message as (channel name, message dict) to one callback and send a
message dict on a named channel; the session above them does not know which it has.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any, Protocol

import zmq
from jupyter_client.jsonutil import json_default
from jupyter_client.session import Session
from jupyter_core.utils import ensure_async
from jupyter_server.utils import url_escape, url_path_join
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

CHANNELS = ("shell", "iopub", "stdin", "control")
Deliver = Callable[[str, dict[str, Any]], None]



class KernelChannels(Protocol):
    """What a KernelSession needs of its connection to the kernel."""

    session: Session  # builds the messages sent

    async def open(self, deliver: Deliver, timeout: float) -> None:
        """Connect once the kernel answers; from then on every message goes to `deliver`."""

    def send(self, name: str, msg: dict[str, Any]) -> None:
        """Send `msg` on channel `name`."""

    async def close(self) -> None:
        """Disconnect (the kernel keeps running)."""


# How often a gateway kernel is asked for its info until it first answers.
_READY_PROBE_SECONDS = 1.0


class ZmqChannels:
    """The sockets of a jupyter_client kernel client (kernels of this host, or a sandbox's)."""

    def __init__(self, client: Any, log: logging.Logger) -> None:
        self.client = client
        self.session: Session = client.session
        self.log = log
        self._readers: list[asyncio.Task[None]] = []

    async def open(self, deliver: Deliver, timeout: float) -> None:
        self.client.start_channels()
        await ensure_async(self.client.wait_for_ready(timeout=timeout))
        self._readers = [asyncio.ensure_future(self._read(name, deliver)) for name in CHANNELS]

    async def _read(self, name: str, deliver: Deliver) -> None:
        socket = getattr(self.client, f"{name}_channel").socket
        session = self.session
        while True:
            # Straight from the socket: `get_msg` polls first, one more wake-up per message.
            frames = await socket.recv_multipart()
            try:
                _, frames = session.feed_identities(frames)
                msg = session.deserialize(frames)
            except Exception:  # malformed, or signed with another key
                self.log.debug("unreadable message on %s", name, exc_info=True)
                continue
            deliver(name, msg)

    def send(self, name: str, msg: dict[str, Any]) -> None:
        channel = getattr(self.client, f"{name}_channel")
        channel.send(msg)
        # jupyter_client sends through a synchronous shadow of the asyncio socket, which can
        # consume the signal that a message arrived meanwhile; our reader of this channel
        # would then sleep on it. Asking the asyncio socket for its events re-arms the reader.
        channel.socket.get(zmq.EVENTS)

    async def close(self) -> None:
        for reader in self._readers:
            reader.cancel()
        await asyncio.gather(*self._readers, return_exceptions=True)
        self.client.stop_channels()


class GatewayChannels:
    """A kernel of a remote kernel gateway: all its channels over one websocket, as
    JupyterLab's own connection to such a kernel goes (no thread, no polling)."""

    def __init__(self, kernel_id: str, log: logging.Logger) -> None:
        self.kernel_id = kernel_id
        self.session = Session()  # builds messages; the gateway signs what reaches the kernel
        self.log = log
        self._socket: WebSocketClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None

    async def open(self, deliver: Deliver, timeout: float) -> None:
        from jupyter_server.gateway.gateway_client import GatewayClient

        gateway = GatewayClient.instance()
        url = url_path_join(gateway.ws_url or "", gateway.kernels_endpoint,
                            url_escape(self.kernel_id), "channels")
        request = HTTPRequest(url, **gateway.load_connection_args())
        self._socket = await asyncio.wait_for(websocket_connect(request), timeout)
        probes: set[str] = set()
        ready = asyncio.get_running_loop().create_future()

        def deliver_once_ready(name: str, msg: dict[str, Any]) -> None:
            if not ready.done() and msg["parent_header"].get("msg_id") in probes:
                if name == "shell":
                    ready.set_result(None)
                return  # the probes' own replies and status
            deliver(name, msg)

        self._reader = asyncio.ensure_future(self._read(deliver_once_ready))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not ready.done():
            if loop.time() > deadline:
                raise TimeoutError(f"the gateway's kernel did not answer within {timeout:.0f}s")
            probe = self.session.msg("kernel_info_request", {})
            probes.add(probe["header"]["msg_id"])
            self.send("shell", probe)
            await asyncio.wait([ready], timeout=_READY_PROBE_SECONDS)

    async def _read(self, deliver: Deliver) -> None:
        assert self._socket is not None
        while (text := await self._socket.read_message()) is not None:
            try:
                msg = json.loads(text)
                name = msg.pop("channel")
            except (ValueError, KeyError, TypeError, AttributeError):
                self.log.debug("unreadable gateway message for kernel %s", self.kernel_id)
                continue
            deliver(name, msg)

    def send(self, name: str, msg: dict[str, Any]) -> None:
        assert self._socket is not None
        self._socket.write_message(json.dumps({**msg, "channel": name}, default=json_default))

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader
        if self._socket is not None:
            self._socket.close()
