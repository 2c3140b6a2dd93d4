"""debugpy's adapter, acknowledging what its debuggees send at once (run by path: the project's
interpreter starts it, and needs nothing of ours but this file).

pydevd writes a message's header and its body in two sends on a socket with Nagle's algorithm
on (debugpy#2054, open in debugpy 1.8), so the body waits for the header's ACK, which Linux
delays 40 ms: every request to a stopped program (breakpoints, stack, evaluate, ...) took
44 ms. The adapter is our process, the debuggee is the user's: here, each connection the
adapter accepts re-arms TCP_QUICKACK after each read (which also sends an ACK held back) and
sets TCP_NODELAY for its own writes. Every round trip then takes about a millisecond.
"""

from __future__ import annotations

import runpy
import socket
import sys
from typing import Any


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


def main() -> None:
    del sys.path[0]  # this file's folder: the adapter imports nothing from it
    if hasattr(socket, "TCP_QUICKACK"):  # Linux; elsewhere the adapter runs as it comes
        socket.socket.accept = _accept  # type: ignore[method-assign,assignment]
    runpy.run_module("debugpy.adapter", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
