"""Shared pieces of the debug tests: programs to debug, and helpers to call `debug`."""

from __future__ import annotations

import asyncio
import socket
import textwrap

import psutil
from process_helpers import is_ended

from jupyter_agent_tools.dap.adapters import BUILTIN_ADAPTERS
from jupyter_agent_tools.discovery import find_executable

PYTHON_PROGRAM = textwrap.dedent(
    """\
    import sys


    def add(a, b):
        c = a + b
        return c


    def main():
        total = 0
        for i in range(3):
            total = add(total, i)
        print("total", total)
        print("to stderr", file=sys.stderr)
        print("python", sys.executable)


    main()
    """
)
# Lines of PYTHON_PROGRAM the tests stop at.
LINE_IN_ADD = 5
LINE_CALL_ADD = 12
LINE_PRINT_TOTAL = 13

C_PROGRAM = textwrap.dedent(
    """\
    #include <stdio.h>
    #include <unistd.h>

    int add(int a, int b) {
        int c = a + b;
        return c;
    }

    int main(int argc, char **argv) {
        int total = 0;
        for (int i = 0; i < 3; i++) {
            total = add(total, i);
        }
        printf("total %d\\n", total);
        fflush(stdout);
        if (argc > 1) {
            for (;;) {
                sleep(1);
            }
        }
        return 0;
    }
    """
)
C_LINE_IN_ADD = 5
C_LINE_CALL_ADD = 12


def lldb_dap_binary() -> str | None:
    return find_executable(BUILTIN_ADAPTERS["lldb"].binaries)


async def debug(run, action: str, **arguments):
    """Call the debug tool and return its result."""
    return await run.call("debug", {"action": action, **arguments})


async def ok(run, action: str, **arguments):
    """Call the debug tool and require success."""
    result = await debug(run, action, **arguments)
    assert result.ok, result.text
    return result


def session_of(runtime, conversation_id: str):
    """The live session object of a conversation (to find its adapter's pid)."""
    return runtime.provider("debug").conversations[conversation_id].session


async def wait_ended(*pids: int, bound: float = 20.0) -> list[int]:
    """Poll until every pid has ended (bounded); the ones still alive."""
    for _ in range(int(bound / 0.1)):
        if all(is_ended(pid) for pid in pids):
            break
        await asyncio.sleep(0.1)
    return [pid for pid in pids if not is_ended(pid)]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def wait_listening(port: int, bound: float = 30.0) -> bool:
    """Poll (bounded) until something listens on `port`, without connecting to it."""
    for _ in range(int(bound / 0.1)):
        if any(c.laddr and c.laddr.port == port and c.status == psutil.CONN_LISTEN
               for c in psutil.net_connections(kind="tcp")):
            return True
        await asyncio.sleep(0.1)
    return False
