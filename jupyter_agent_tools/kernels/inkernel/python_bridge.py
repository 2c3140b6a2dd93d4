"""In-kernel side of the bridge for IPython: `tool(name, args)`, `ToolError`, `%pip` eviction.

Injected by the server into each Python kernel it starts or borrows (a user's), then
`install(...)` is called; `uninstall()` takes it out of a borrowed kernel the run leaves.
A call is an `input_request` whose prompt starts with a reserved prefix, sent on the kernel's
stdin socket to the client that installed the bridge; the server answers with an
`input_reply` carrying the result as JSON. The caller's own thread sends and receives, so a
call costs no hop through the kernel's IOPub or shell threads, and the cell (or any thread
of it) can wait on a call while the shell is busy running that cell. The server runs cells
with `allow_stdin` off, so IPython itself never reads this socket.

A kernel on the server's own disk calls over a faster lane when it can: a Unix socket the
server listens on for this kernel (`kernels/bridge_socket.py`), one connection per calling
thread, proven once with a token, then one length-prefixed JSON frame each way per call.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import itertools
import json
import os
import select
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import zmq


class ToolError(Exception):
    """A tool call failed: `code` is the contract's error code, `message` says what to do."""

    def __init__(self, code: str, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code
        self.message = message
        self.data = data or {}


class ToolResult:
    """What `tool()` returns: `text` (what an agent reads) and `data` (structured)."""

    def __init__(self, text: str, data: Any) -> None:
        self.text = text
        self.data = data

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        # What a cell ending in tool(...) shows: the text an agent would read.
        return self.text


class _Bridge:
    """The kernel end: calls out and replies in over the kernel's stdin socket.

    A zmq socket is not thread-safe, so every use of it holds `lock`. One waiting caller at a
    time reads the socket (with the lock released while it sleeps) and hands each reply to
    its caller; the others wait on `turn` and one of them takes over when it leaves.
    """

    def __init__(self, kernel: Any, prefix: str, timeout: float,
                 lane: _SocketLane | None = None) -> None:
        self.kernel = kernel
        self.lane = lane
        self.session = kernel.session
        self.socket = kernel.stdin_socket
        # The client whose execute request is installing the bridge: the server's session.
        self.ident = kernel._parent_ident["shell"]
        self.prefix = prefix
        self.timeout = timeout
        self.lock = threading.Lock()
        self.turn = threading.Condition(self.lock)
        self.replies: dict[int, Any] = {}  # call id -> its reply, None until it arrives
        self.reading = False
        self.ids = itertools.count(1)
        self.readable = self.socket.getsockopt(zmq.FD)
        # Wakes the reader from select() when another thread took its reply off the socket.
        self.wake_reader, self.wake = os.pipe()
        os.set_blocking(self.wake_reader, False)
        os.set_blocking(self.wake, False)

    def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        # In a user's kernel other clients (the notebook) run cells too: only the cells of the
        # client that installed the bridge may call, or a notebook cell would act as the agent.
        if self.kernel._parent_ident["shell"] != self.ident:
            raise ToolError("unavailable", "tool() works only in cells an agent run sends "
                            "through its eval tool, not in cells run from a notebook.")
        call_id = next(self.ids)
        request = json.dumps({"id": call_id, "name": name, "args": args})  # fails here if not JSON
        reply = self.lane.call(request.encode()) if self.lane is not None else None
        if reply is None:
            reply = self._call_over_stdin(name, call_id, request)
        if not reply["ok"]:
            error = reply.get("error") or {}
            raise ToolError(error.get("code", "failed"), error.get("message", reply["text"]),
                            reply.get("data"))
        return ToolResult(reply["text"], reply["data"])

    def _call_over_stdin(self, name: str, call_id: int, request: str) -> Any:
        deadline = time.monotonic() + self.timeout
        with self.lock:
            self.replies[call_id] = None
            try:
                self.session.send(self.socket, "input_request",
                                  {"prompt": self.prefix + request, "password": False},
                                  ident=self.ident)
                self._take_arrived()
                while self.replies[call_id] is None:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise ToolError("timeout", f"No answer to tool({name!r}) within "
                                        f"{self.timeout:.0f}s; call it again, or with less work.")
                    if self.reading:
                        self.turn.wait(remaining)
                    else:
                        self._read_until_readable(remaining)
                reply = self.replies[call_id]
            finally:
                self.replies.pop(call_id, None)
        return reply

    def close(self) -> None:
        if self.lane is not None:
            self.lane.close()
        os.close(self.wake_reader)
        os.close(self.wake)

    def _read_until_readable(self, timeout: float) -> None:
        """Sleep, without the lock, until a message may have arrived; then take it."""
        self.reading = True
        self.lock.release()
        try:
            select.select([self.readable, self.wake_reader], [], [], timeout)
        finally:  # an interrupted reader (Ctrl-C in the cell) hands over too
            self.lock.acquire()
            self.reading = False
            self.turn.notify_all()  # a waiter still without its reply becomes the reader
        try:
            os.read(self.wake_reader, 512)
        except BlockingIOError:
            pass
        self._take_arrived()

    def _take_arrived(self) -> None:
        """Receive every message waiting on the socket (lock held): replies to their callers.

        The socket's file descriptor only signals new arrivals, and any use of the socket may
        consume that signal; so every use ends here, leaving nothing unread behind it.
        """
        answered = False
        while self.socket.getsockopt(zmq.EVENTS) & zmq.POLLIN:
            try:  # checks the signature, as the kernel's own input() would
                _, msg = self.session.recv(self.socket, mode=zmq.NOBLOCK)
                reply = json.loads(msg["content"]["value"]) if msg else None
            except Exception as exc:  # noqa: BLE001 - one bad message must not stop the rest
                print(f"[agent-tools] dropped an unreadable bridge reply: {exc}",
                      file=sys.__stderr__)
                continue
            call_id = reply.get("id") if isinstance(reply, dict) else None
            if call_id in self.replies:  # else its caller gave up waiting
                self.replies[call_id] = reply
                answered = True
        if answered:
            self.turn.notify_all()
            if self.reading:
                os.write(self.wake, b"!")


_FRAME_HEADER = struct.Struct(">I")  # as kernels/bridge_socket.py frames them


class _SocketLane:
    """Calls over the server's Unix socket for this kernel, each thread on its own connection.

    `call` returns None when the lane cannot take a call (the socket is out of reach: a
    gateway's kernel; or the request is over the frame bound): the stdin lane takes it then.
    """

    def __init__(self, path: str, token: str, max_bytes: int, timeout: float) -> None:
        self.path = path
        self.token = token.encode()
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.local = threading.local()
        self.reachable = True

    def call(self, request: bytes) -> Any | None:
        if not self.reachable or len(request) > self.max_bytes:
            return None
        connection = getattr(self.local, "connection", None)
        if getattr(self.local, "pid", None) != os.getpid():  # a forked child: its own connection
            connection = None
        if connection is None:
            connection = self._connect()
            if connection is None:
                return None
        try:
            connection.sendall(_FRAME_HEADER.pack(len(request)) + request)
            (size,) = _FRAME_HEADER.unpack(self._receive(connection, _FRAME_HEADER.size))
            return json.loads(self._receive(connection, size))
        except socket.timeout:  # noqa: UP041 - the kernel's Python may predate 3.10's alias
            self._drop(connection)
            raise ToolError("timeout", f"No answer within {self.timeout:.0f}s; call again, "
                            "or with less work.") from None
        except BaseException:  # an interrupt mid-call leaves the stream mid-frame: start over
            self._drop(connection)
            raise

    def _connect(self) -> socket.socket | None:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.settimeout(self.timeout)
        try:
            connection.connect(self.path)
            connection.sendall(_FRAME_HEADER.pack(len(self.token)) + self.token)
        except OSError:
            connection.close()
            self.reachable = False
            return None
        self.local.connection, self.local.pid = connection, os.getpid()
        return connection

    def _drop(self, connection: socket.socket) -> None:
        connection.close()
        self.local.connection = None

    @staticmethod
    def _receive(connection: socket.socket, size: int) -> bytes:
        chunks = []
        while size:
            chunk = connection.recv(min(size, 1 << 20))
            if not chunk:
                raise ToolError("unavailable", "The server closed the tool bridge; the run "
                                "may have ended.")
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        self.reachable = False
        connection = getattr(self.local, "connection", None)
        if connection is not None:
            self._drop(connection)


_bridge: _Bridge | None = None
_uninstall_steps: list[Callable[[], None]] = []


def tool(name: str, args: dict[str, Any] | None = None) -> ToolResult:
    """Call an agent tool from this cell; returns a ToolResult, raises ToolError on failure."""
    if not isinstance(name, str):
        raise TypeError("tool(name, args): name is the tool's name, a str")
    if args is not None and not isinstance(args, dict):
        raise TypeError("tool(name, args): args is a dict of the tool's arguments")
    if _bridge is None:
        raise ToolError("unavailable", "The tool bridge is not installed in this kernel; "
                        "run the code through the eval tool of an agent run.")
    return _bridge.call(name, args or {})


# -- %pip: evict what an install touched, so the next import sees the new version ----------

def _top_level_modules(dist: importlib.metadata.Distribution) -> set[str]:
    text = dist.read_text("top_level.txt")
    if text:
        return {line.strip() for line in text.splitlines() if line.strip()}
    names = set()
    for path in dist.files or ():
        first = path.parts[0] if path.parts else ""
        if not first or first.endswith((".dist-info", ".egg-info", ".data")) or first in (
            "..", "__pycache__", "bin"
        ):
            continue
        if len(path.parts) == 1:
            if first.endswith(".py"):
                names.add(first[:-3])
            elif first.endswith((".so", ".pyd")):
                names.add(first.split(".")[0])
        else:
            names.add(first)
    return names


def _installed() -> dict[tuple[str, str], frozenset[str]]:
    """{(distribution name, version): its top-level modules} of everything importable."""
    snapshot: dict[tuple[str, str], frozenset[str]] = {}
    for dist in importlib.metadata.distributions():
        name = (dist.metadata["Name"] or "").lower()
        if name:
            snapshot.setdefault((name, dist.version), frozenset(_top_level_modules(dist)))
    return snapshot


def evict_changed(before: dict[tuple[str, str], frozenset[str]],
                  after: dict[tuple[str, str], frozenset[str]]) -> list[str]:
    """Drop from sys.modules every module of a distribution added, removed or upgraded."""
    tops: set[str] = set()
    for key in set(before) ^ set(after):
        tops.update(before.get(key, ()))
        tops.update(after.get(key, ()))
    evicted = sorted(
        module for module in list(sys.modules)
        if module.split(".")[0] in tops and sys.modules.pop(module, None) is not None
    )
    importlib.invalidate_caches()
    return evicted


def _install_pip_magic(shell: Any) -> None:
    original = shell.find_line_magic("pip")
    if original is None:
        return

    def pip(line: str) -> None:
        """%pip, then evict the modules of what it installed or removed."""
        before = _installed()
        original(line)
        importlib.invalidate_caches()  # else the metadata finder may still see the old files
        evicted = evict_changed(before, _installed())
        if evicted:
            tops = sorted({module.split(".")[0] for module in evicted})
            print(f"[agent-tools] unloaded {', '.join(tops)}: the next import loads the new version.")

    shell.register_magic_function(pip, "line", "pip")


def install(prefix: str, timeout: float, cwd: str,
            lane: tuple[str, str, int] | None = None) -> None:
    """Wire the bridge into this kernel: `tool`/`ToolError` names, %pip (cwd "": stay put);
    `lane` is the server's socket for this kernel: (path, token, largest request)."""
    global _bridge
    from IPython import get_ipython

    shell = get_ipython()
    _bridge = _Bridge(shell.kernel, prefix, timeout,
                      _SocketLane(*lane, timeout) if lane is not None else None)

    def names_back(*_: object) -> None:
        # `%reset` empties the namespace; the bridge's names come back for the next cell.
        shell.user_ns.setdefault("tool", tool)
        shell.user_ns.setdefault("ToolError", ToolError)

    names_back()
    shell.events.register("pre_run_cell", names_back)
    original_pip = shell.find_line_magic("pip")
    _install_pip_magic(shell)

    def undo() -> None:
        shell.events.unregister("pre_run_cell", names_back)
        if original_pip is not None:
            shell.register_magic_function(original_pip, "line", "pip")
        for name, ours in (("tool", tool), ("ToolError", ToolError)):
            if shell.user_ns.get(name) is ours:
                del shell.user_ns[name]

    _uninstall_steps.append(undo)
    if cwd and os.path.isdir(cwd):  # a gateway's kernel may not share the server's disk
        os.chdir(cwd)


def uninstall() -> None:
    """Leave the kernel as it was before `install` (a user's kernel outlives the run)."""
    global _bridge
    while _uninstall_steps:
        _uninstall_steps.pop()()
    if _bridge is not None:
        _bridge.close()
        _bridge = None
    sys.modules.pop("agent_tools", None)
