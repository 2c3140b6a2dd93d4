"""In-kernel side of the bridge for IPython: `tool(name, args)`, `ToolError`, `%pip` eviction.

Injected by the server into each Python kernel it starts, then `install(...)` is called.
Calls go out as comm messages on IOPub; the server addresses each reply to a kernel subshell,
so the cell (or any thread of it) can block on a call while the main shell is busy running
that cell. Where the kernel allows, the shell channel thread wakes the caller as soon as it
reads the reply, before routing it (see `_Bridge.take_replies_directly`).
"""

import importlib
import importlib.metadata
import itertools
import json
import os
import sys
import threading


class ToolError(Exception):
    """A tool call failed: `code` is the contract's error code, `message` says what to do."""

    def __init__(self, code, message, data=None):
        super().__init__(f"[{code}] {message}")
        self.code = code
        self.message = message
        self.data = data or {}


class ToolResult:
    """What `tool()` returns: `text` (what an agent reads) and `data` (structured)."""

    def __init__(self, text, data):
        self.text = text
        self.data = data

    def __str__(self):
        return self.text

    def __repr__(self):
        # What a cell ending in tool(...) shows: the text an agent would read.
        return self.text


class _Waiter:
    __slots__ = ("event", "reply")

    def __init__(self):
        self.event = threading.Event()
        self.reply = None


class _Bridge:
    """The kernel end: one comm, opened by the server, and the calls waiting on it."""

    def __init__(self, target, timeout):
        self.target = target
        self.timeout = timeout
        self.comm = None
        self.waiting = {}
        self.lock = threading.Lock()
        self.ids = itertools.count(1)

    def on_open(self, comm, _msg):
        # Replies go to the subshell the server names in the header, not back to the main
        # shell that sent the request (it is busy running the cell).
        comm._reply_subshell_for = lambda _data, default: default
        comm.on_msg(self.on_msg)
        self.comm = comm

    def take_replies_directly(self, kernel, subshell_id):
        """Wake callers as soon as the kernel reads a reply off its shell socket.

        The server addresses replies to the bridge's subshell; routed there, each would
        cost two more thread hops, and the subshell's dispatcher would publish busy and idle
        on IOPub and flush stdout and stderr through the IOPub thread for every call. The
        shell channel thread hands this comm's replies to the waiting caller itself and
        passes every other message on unchanged. A kernel without these internals keeps
        routing replies through the subshell.
        """
        stream = getattr(kernel, "shell_stream", None)
        dispatch = getattr(stream, "_recv_callback", None)
        io_loop = getattr(stream, "io_loop", None)
        if dispatch is None or io_loop is None:
            return
        session = kernel.session

        def ours(parts):
            header = session.unpack(parts[1].bytes)
            return (header.get("msg_type") == "comm_msg"
                    and header.get("subshell_id") == subshell_id and self.comm is not None
                    and session.unpack(parts[4].bytes).get("comm_id") == self.comm.comm_id)

        def on_recv(frames):
            try:
                _, parts = session.feed_identities(frames, copy=False)
                mine = ours(parts)
            except Exception:  # malformed: the kernel's own handler reports it
                mine = False
            if not mine:
                return dispatch(frames)
            try:  # checks the signature, as the kernel's dispatcher would
                self.on_msg(session.deserialize(parts, content=True, copy=False))
            except Exception as exc:
                print(f"[agent-tools] dropped an unreadable bridge reply: {exc}",
                      file=sys.__stderr__)
            return None

        io_loop.add_callback(stream.on_recv, on_recv, copy=False)

    def on_msg(self, msg):
        reply = msg["content"]["data"]
        with self.lock:
            waiter = self.waiting.pop(reply.get("id"), None)
        if waiter is not None:
            waiter.reply = reply
            waiter.event.set()

    def call(self, name, args):
        if self.comm is None:
            raise ToolError("unavailable", "The tool bridge is not connected in this kernel; "
                            "run the code through the eval tool of an agent run.")
        json.dumps(args)  # fail here, in the cell, on arguments that are not JSON
        call_id = f"{os.getpid()}-{next(self.ids)}"
        waiter = _Waiter()
        with self.lock:
            self.waiting[call_id] = waiter
        self.comm.send({"id": call_id, "name": name, "args": args})
        if not waiter.event.wait(self.timeout):
            with self.lock:
                self.waiting.pop(call_id, None)
            raise ToolError("timeout", f"No answer to tool({name!r}) within {self.timeout:.0f}s; "
                            "call it again, or with less work.")
        reply = waiter.reply
        if not reply["ok"]:
            error = reply.get("error") or {}
            raise ToolError(error.get("code", "failed"), error.get("message", reply["text"]),
                            reply.get("data"))
        return ToolResult(reply["text"], reply["data"])


_bridge = None


def tool(name, args=None):
    """Call an agent tool from this cell; returns a ToolResult, raises ToolError on failure."""
    if not isinstance(name, str):
        raise TypeError("tool(name, args): name is the tool's name, a str")
    if args is not None and not isinstance(args, dict):
        raise TypeError("tool(name, args): args is a dict of the tool's arguments")
    if _bridge is None:
        raise ToolError("unavailable", "The tool bridge is not installed in this kernel.")
    return _bridge.call(name, args or {})


# -- %pip: evict what an install touched, so the next import sees the new version ----------

def _top_level_modules(dist):
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


def _installed():
    """{(distribution name, version): its top-level modules} of everything importable."""
    snapshot = {}
    for dist in importlib.metadata.distributions():
        name = (dist.metadata["Name"] or "").lower()
        if name:
            snapshot.setdefault((name, dist.version), frozenset(_top_level_modules(dist)))
    return snapshot


def evict_changed(before, after):
    """Drop from sys.modules every module of a distribution added, removed or upgraded."""
    tops = set()
    for key in set(before) ^ set(after):
        tops.update(before.get(key, ()))
        tops.update(after.get(key, ()))
    evicted = sorted(
        module for module in list(sys.modules)
        if module.split(".")[0] in tops and sys.modules.pop(module, None) is not None
    )
    importlib.invalidate_caches()
    return evicted


def _install_pip_magic(shell):
    original = shell.find_line_magic("pip")
    if original is None:
        return

    def pip(line):
        """%pip, then evict the modules of what it installed or removed."""
        before = _installed()
        original(line)
        importlib.invalidate_caches()  # else the metadata finder may still see the old files
        evicted = evict_changed(before, _installed())
        if evicted:
            tops = sorted({module.split(".")[0] for module in evicted})
            print(f"[agent-tools] unloaded {', '.join(tops)}: the next import loads the new version.")

    shell.register_magic_function(pip, "line", "pip")


def install(target, timeout, cwd, subshell_id=None):
    """Wire the bridge into this kernel: comm target, `tool`/`ToolError` names, %pip."""
    global _bridge
    from IPython import get_ipython

    shell = get_ipython()
    _bridge = _Bridge(target, timeout)
    shell.kernel.comm_manager.register_target(target, _bridge.on_open)
    if subshell_id is not None:
        _bridge.take_replies_directly(shell.kernel, subshell_id)

    def names_back(*_):
        # `%reset` empties the namespace; the bridge's names come back for the next cell.
        shell.user_ns.setdefault("tool", tool)
        shell.user_ns.setdefault("ToolError", ToolError)

    names_back()
    shell.events.register("pre_run_cell", names_back)
    _install_pip_magic(shell)
    if cwd:
        os.chdir(cwd)
