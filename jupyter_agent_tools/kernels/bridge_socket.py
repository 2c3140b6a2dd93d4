"""The in-cell bridge's fast lane: a Unix socket between a local kernel and the server.

Over the kernel's stdin channel a call is two Jupyter messages, each signed, serialized and
routed by zmq, and read by a thread that must wake the server's loop. Here a call is one
length-prefixed JSON frame each way on a socket the calling thread of the cell keeps open:
the connection proves itself once (a random token the server handed to the bridge it
installed), not on every message. The socket lives in a folder only this user can enter.

A kernel that cannot reach the socket (a gateway's or a sandbox's, on another disk) keeps
calling over stdin; both lanes end in the same `answer`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import secrets
import shutil
import struct
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from .protocol import BridgeReply

# A frame's length, before it: 4 bytes, big-endian (the in-kernel end reads the same).
FRAME_HEADER = struct.Struct(">I")
Answer = Callable[[dict[str, Any]], Awaitable[BridgeReply]]


class BridgeSocket:
    """Serves one kernel's tool() calls on a Unix socket; `path` and `token` go to the bridge."""

    def __init__(self, answer: Answer, log: logging.Logger, max_frame_bytes: int) -> None:
        self._answer = answer
        self._log = log
        # The largest request a cell may send here (KernelFactory.max_bridge_frame_bytes).
        self.max_frame_bytes = max_frame_bytes
        self._folder = Path(tempfile.mkdtemp(prefix="agent-tools-bridge-"))  # mode 0700
        self.path = str(self._folder / "s")
        self.token = secrets.token_hex(16)
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_unix_server(self._serve, path=self.path)

    async def close(self) -> None:
        """Stop listening, end every connection, remove the socket; never raises."""
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        shutil.rmtree(self._folder, ignore_errors=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            token = await self._read_frame(reader, self.max_frame_bytes)
            if token is None or not hmac.compare_digest(token, self.token.encode()):
                return
            while (frame := await self._read_frame(reader, self.max_frame_bytes)) is not None:
                try:
                    request = json.loads(frame)
                except ValueError:
                    request = {}
                if not isinstance(request, dict):
                    request = {}
                reply = await self._answer(request)
                reply["id"] = request.get("id")
                body = json.dumps(reply, default=str).encode()
                writer.write(FRAME_HEADER.pack(len(body)) + body)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the cell went away (an interrupt, the kernel stopped): its thread reconnects
        except asyncio.CancelledError:
            # close() ends the connection. Ending quietly, not cancelled: Python 3.11's stream
            # server asks the finished task for its exception and logs a cancelled one's.
            pass
        except Exception:  # noqa: BLE001 - a bug here must end one connection, not the server's loop
            self._log.exception("bridge socket: serving a connection failed")
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            if task is not None:
                self._connections.discard(task)

    @staticmethod
    async def _read_frame(reader: asyncio.StreamReader, max_bytes: int) -> bytes | None:
        """The next frame; None when the peer closed or sent more than a frame may hold."""
        try:
            header = await reader.readexactly(FRAME_HEADER.size)
        except asyncio.IncompleteReadError:
            return None
        (size,) = FRAME_HEADER.unpack(header)
        if size > max_bytes:
            return None
        return await reader.readexactly(size)
