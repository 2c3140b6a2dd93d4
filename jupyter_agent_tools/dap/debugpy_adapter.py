"""debugpy's adapter, and the launcher and debuggee it starts, with two fixes (run by path:
the project's interpreter starts it, and needs nothing of ours but this file).

Quick ACKs. pydevd writes a message's header and its body in two sends on a socket with
Nagle's algorithm on (debugpy#2054, open in debugpy 1.8), so the body waits for the header's
ACK, which Linux delays 40 ms: every request to a stopped program (breakpoints, stack,
evaluate, ...) took 44 ms. The adapter is our process, the debuggee is the user's: here, each
connection the adapter accepts re-arms TCP_QUICKACK after each read (which also sends an ACK
held back) and sets TCP_NODELAY for its own writes. Every round trip then takes about a
millisecond.

No environment report nobody reads. debugpy's adapter, launcher and debuggee each build a
report of their environment at start (every installed distribution's metadata parsed, and in
the debuggee a second time with the tracer on) even when logging is off and the report is
dropped: 0.1-0.4 s each, on the path of every launch. Here the report is built only when a log
takes it. The adapter starts the launcher through this file (`--launcher`), and the launcher
the debuggee (`--debuggee`), each then running debugpy's own entry as `python <its folder>`
would. The user's program itself runs unchanged.
"""

from __future__ import annotations

import locale
import os
import runpy
import socket
import sys
from typing import Any

THIS_FILE = os.path.abspath(__file__)


class _QuickAckSocket(socket.socket):
    __slots__ = ()

    def recv_into(self, *args: Any, **kwargs: Any) -> int:
        received = super().recv_into(*args, **kwargs)
        try:
            self.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
        except OSError:  # closed meanwhile: the read that follows says so
            pass
        return received


_plain_accept = socket.socket.accept


def _accept(listener: socket.socket) -> tuple[socket.socket, Any]:
    accepted, address = _plain_accept(listener)
    if accepted.family not in (socket.AF_INET, socket.AF_INET6):
        return accepted, address
    timeout = accepted.gettimeout()
    quick = _QuickAckSocket(accepted.family, accepted.type, accepted.proto,
                            fileno=accepted.detach())
    quick.settimeout(timeout)
    quick.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return quick, address


def _describe_environment_only_when_logged() -> None:
    from debugpy.common import log

    if not hasattr(log, "_levels"):  # another debugpy: it runs as it comes
        return
    describe = log.describe_environment

    def describe_environment(header: str) -> None:
        if "info" in log._levels:
            describe(header)

    log.describe_environment = describe_environment


def _import_debugpy(package: str) -> None:
    """Import debugpy from its folder, as its own entries do when run by path."""
    if "debugpy" not in sys.modules:
        sys.path.insert(0, os.path.dirname(package))
        __import__("debugpy")
        del sys.path[0]
    _describe_environment_only_when_logged()


def run_adapter() -> None:
    import debugpy.adapter.launchers as launchers

    _describe_environment_only_when_logged()
    if hasattr(socket, "TCP_QUICKACK"):  # Linux; elsewhere the adapter runs as it comes
        socket.socket.accept = _accept  # type: ignore[method-assign,assignment]
    spawn = launchers.spawn_debuggee

    def spawn_debuggee(session: Any, request: Any, python: list[str], *args: Any,
                       **kwargs: Any) -> Any:
        # python + [launcher folder, port, "--", program...]: this file runs the launcher.
        return spawn(session, request, [*python, THIS_FILE, "--launcher"], *args, **kwargs)

    launchers.spawn_debuggee = spawn_debuggee  # type: ignore[assignment]
    runpy.run_module("debugpy.adapter", run_name="__main__", alter_sys=True)


def run_launcher(folder: str, args: list[str]) -> None:
    _import_debugpy(os.path.dirname(folder))
    import debugpy
    import debugpy.launcher.debuggee as debuggee
    from debugpy.launcher.__main__ import main as launcher_main

    package = os.path.dirname(debugpy.__file__)
    spawn = debuggee.spawn

    def spawn_through_this_file(process_name: str, cmdline: list[str], *rest: Any) -> Any:
        # [python, (-X ...), debugpy's folder, --connect ...]: this file runs the debuggee.
        if package in cmdline:
            at = cmdline.index(package)
            cmdline = [*cmdline[:at], THIS_FILE, "--debuggee", *cmdline[at:]]
        return spawn(process_name, cmdline, *rest)

    debuggee.spawn = spawn_through_this_file
    sys.argv = [folder, *args]
    try:  # as debugpy's launcher does when run by path
        locale.setlocale(locale.LC_ALL, "")
    except locale.Error:
        pass
    launcher_main()


def run_debuggee(package: str, args: list[str]) -> None:
    _import_debugpy(package)
    from debugpy.server import cli

    sys.argv = [package, *args]
    cli.main()


def main() -> None:
    del sys.path[0]  # this file's folder: nothing is imported from it
    role = sys.argv[1:2]
    if role == ["--launcher"]:
        run_launcher(sys.argv[2], sys.argv[3:])
    elif role == ["--debuggee"]:
        run_debuggee(sys.argv[2], sys.argv[3:])
    else:
        run_adapter()


if __name__ == "__main__":
    main()
