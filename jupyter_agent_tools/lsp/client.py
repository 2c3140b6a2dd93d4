"""The language client: pygls 2's client over a server's stdio, hardened for real servers.

What pygls alone does not handle, and real servers do:
- a reply lsprotocol cannot parse (ruff's `notebookDocumentSync` in the initialize result)
  is dropped by pygls and its request never resolves: here it fails the request instead,
  and the initialize reply is cleaned of the notebook capability first;
- `start_io` pipes stderr without reading it, so a chatty server blocks: here stderr is
  drained into a bounded tail that error messages quote (the rest is pygls's own `start_io`,
  which passes cwd, env and start_new_session through);
- every request has a timeout, and a server that exits fails its pending requests.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import Any, Union

from cattrs import Converter
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, LanguageServerProtocol

from ..discovery import search_path
from ..processes import ManagedProcess, drain
from ..runtime.memory import killed_for_memory, memory_cause, oom_kills
from .errors import LspRequestError

logger = logging.getLogger(__name__)

_STDERR_LINES = 40
_STDERR_LINE_CHARS = 500
#: Words a server's dying output says running out of memory with (V8, C++, Rust, Python).
_OUT_OF_MEMORY = ("out of memory", "bad_alloc", "memoryerror", "cannot allocate memory",
                  "allocation failed", "memory allocation of", "failed to reserve")
_STOP_SECONDS = 5.0


def _command_or_code_action(converter: Converter, data: Any) -> types.Command | types.CodeAction:
    """lsprotocol reads any item with a `command` as a Command, so a CodeAction that carries
    one (typescript-language-server's refactorings) lost its kind and its command's
    arguments; a Command's `command` is a string, a CodeAction's an object."""
    if isinstance(data.get("command"), str):
        return converter.structure(data, types.Command)
    return converter.structure(data, types.CodeAction)


class _TolerantProtocol(LanguageServerProtocol):
    """Never lose a message to a parse failure: fail the request or fall back to raw data."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._converter.register_structure_hook(
            Union[types.Command, types.CodeAction],  # noqa: UP007 - the key lsprotocol registers
            lambda data, _type: _command_or_code_action(self._converter, data))

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" not in data:
            return data
        if "id" in data and "result" in data and isinstance(data["result"], dict):
            capabilities = data["result"].get("capabilities")
            if isinstance(capabilities, dict):
                # lsprotocol cannot parse what ruff, ty and pylsp send here; we never use it.
                capabilities.pop("notebookDocumentSync", None)
        try:
            return super().structure_message(data)
        except Exception as exc:  # noqa: BLE001 - lsprotocol/cattrs raise many kinds; none may lose a message
            if "method" in data:  # a request or notification: hand its raw params on
                if "id" in data:
                    return JsonRPCRequestMessage(id=data["id"], method=data["method"],
                                                 jsonrpc=data["jsonrpc"], params=data.get("params"))
                return JsonRPCNotification(method=data["method"], jsonrpc=data["jsonrpc"],
                                           params=data.get("params"))
            cause = exc.__cause__ or exc
            return types.ResponseErrorMessage(
                id=data.get("id"),
                error=types.ResponseError(
                    code=types.ErrorCodes.ParseError,
                    message=f"the server's reply could not be parsed ({type(cause).__name__}: "
                    f"{str(cause).splitlines()[0] if str(cause) else ''})",
                ),
            )


class ServerConnection(LanguageClient):
    """One running server process and the typed client talking to it."""

    def __init__(self, name: str) -> None:
        super().__init__(name="jupyter-agent-tools", version="0.1", protocol_cls=_TolerantProtocol)
        self.server_name = name
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        self.exited: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._next_id = 0
        self._partial = ""  # the stderr line being read
        self._stderr: asyncio.Task[None] | None = None
        self.oom_kills_at_start = oom_kills()

    async def spawn(self, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        """Start the server in its own process group, reading stdout and draining stderr."""
        child_env = dict(os.environ if env is None else env)
        # Servers we installed with pip live beside our interpreter, maybe not on PATH.
        child_env["PATH"] = search_path(child_env.get("PATH", ""))
        # Imports resolve in the server's environment (where its Python kernel runs) even when
        # it was started as `.venv/bin/jupyter lab`, unactivated: ty finds it by VIRTUAL_ENV.
        if sys.prefix != sys.base_prefix:
            child_env.setdefault("VIRTUAL_ENV", sys.prefix)
        await self.start_io(*argv, cwd=cwd, env=child_env, start_new_session=True, limit=2**20)
        assert self.process is not None and self.process.stderr is not None
        self.exited = asyncio.ensure_future(self.process.wait())
        self._stderr = asyncio.create_task(self._drain_stderr(self.process.stderr))

    async def _drain_stderr(self, stream: asyncio.StreamReader) -> None:
        await drain(stream, self._keep_stderr)
        self._flush_stderr()

    def _keep_stderr(self, chunk: bytes) -> None:
        *lines, self._partial = (self._partial + chunk.decode("utf-8", errors="replace")
                                 ).split("\n")
        self._partial = self._partial[-_STDERR_LINE_CHARS:]
        self.stderr_tail.extend(line[-_STDERR_LINE_CHARS:].rstrip() for line in lines)

    def _flush_stderr(self) -> None:
        if self._partial:
            self.stderr_tail.append(self._partial.rstrip())
            self._partial = ""

    @property
    def process(self) -> asyncio.subprocess.Process | None:
        """The server process `start_io` started (pygls keeps it without a public name)."""
        return self._server

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def stderr_excerpt(self, lines: int = 5) -> str:
        tail = [line for line in self.stderr_tail if line.strip()][-lines:]
        return " | ".join(tail)

    async def request(self, method: str, params: Any, timeout: float) -> Any:
        """Send a typed request; LspRequestError on timeout, server exit or an error reply."""
        if not self.alive:
            raise LspRequestError(self.exit_description())
        # String ids: pygls books the server's own request ids in the same table, and a
        # server counting 1, 2, 3 like us would otherwise answer-cancel our requests.
        self._next_id += 1
        msg_id = f"c{self._next_id}"
        future = self.protocol.send_request(method, params, msg_id=msg_id)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout)
        except asyncio.TimeoutError:
            self.protocol._request_futures.pop(msg_id, None)
            self.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            raise LspRequestError(
                f"{self.server_name} did not answer {method} within {timeout:g}s",
                timed_out=True,
            ) from None
        except JsonRpcException as exc:
            raise LspRequestError(f"{self.server_name} answered {method} with an error: "
                                  f"{exc.message}") from None
        except RuntimeError as exc:  # pygls fails pending requests this way when the server exits
            raise LspRequestError(f"{self.exit_description()} during {method} ({exc})") from None

    def notify(self, method: str, params: Any) -> None:
        if self.alive:
            self.protocol.notify(method, params)

    def exit_description(self) -> str:
        """Why the server is gone, with the tail of its stderr; out of memory said first
        when its output says so (a V8 or C++ backtrace ends far from the cause) or the
        cgroup's OOM killer ended it."""
        code = self.process.returncode if self.process else None
        reason = (f"{self.server_name} exited with status {code}" if code is not None
                  else f"{self.server_name} is not running")
        sign = next((line.strip() for line in self.stderr_tail
                     if any(word in line.lower() for word in _OUT_OF_MEMORY)), None)
        if sign is not None:
            return f"{reason}: it ran out of memory ({sign[:_STDERR_LINE_CHARS]})"
        if killed_for_memory(code, self.oom_kills_at_start):
            return f"{reason}{memory_cause(self.oom_kills_at_start) or ', killed for memory'}"
        excerpt = self.stderr_excerpt()
        return f"{reason}; stderr: {excerpt}" if excerpt else reason

    async def close(self, timeout: float, graceful: bool = True) -> None:
        """shutdown + exit, then kill the whole process group if it has not gone by `timeout`."""
        if self.alive and graceful:
            try:
                await self.request(types.SHUTDOWN, None, timeout)
                self.notify(types.EXIT, None)
            except LspRequestError:
                pass
        if self.process is not None:
            # Asked to exit already: no SIGTERM, only the wait and then the group killed.
            await ManagedProcess(self.process).stop(timeout if graceful else 0, terminate=False)
        if not self.exited.done():
            self.exited.cancel()
        if self._stderr is not None:
            self._stderr.cancel()
            await asyncio.gather(self._stderr, return_exceptions=True)
        self._flush_stderr()
        # pygls's own stop: its reader and exit watcher end at the pipes' end of file.
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.stop(), _STOP_SECONDS)
