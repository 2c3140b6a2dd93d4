"""debugpy's adapter as we start it: its connections from debuggees acknowledge at once.

That a whole debug session works through it is what tests/dap/test_debugpy.py proves; the
40 ms it saves per request is measured by benchmarks/bench_dap.py, not asserted here.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_agent_tools.dap import debugpy_adapter
from jupyter_agent_tools.dap.adapters import BUILTIN_ADAPTERS

pytestmark = pytest.mark.skipif(not hasattr(socket, "TCP_QUICKACK"), reason="Linux only")


def test_an_accepted_connection_writes_at_once_and_reads_a_message_sent_in_two_parts():
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(5)
        debuggee = socket.create_connection(listener.getsockname())
        accepted, _ = debugpy_adapter._accept(listener)
        with debuggee, accepted:
            assert isinstance(accepted, debugpy_adapter._QuickAckSocket)
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            assert accepted.gettimeout() is None  # blocking, as socket.accept leaves it
            # As pydevd writes: the header, then the body. The adapter reads through a file.
            body = b'{"seq": 1, "type": "response"}'
            debuggee.sendall(b"Content-Length: %d\r\n\r\n" % len(body))
            debuggee.sendall(body)
            reader = accepted.makefile("rb")
            assert reader.readline() == b"Content-Length: %d\r\n" % len(body)
            assert reader.readline() == b"\r\n"
            assert reader.read(len(body)) == body


def test_a_unix_connection_is_left_as_it_comes(tmp_path):
    path = str(tmp_path / "s")
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(path)
        listener.listen()
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(path)
            accepted, _ = debugpy_adapter._accept(listener)
            with accepted:
                assert type(accepted) is socket.socket


def test_the_debugpy_spec_starts_the_adapter_from_this_file_and_it_runs_debugpy():
    argv = [part.replace("{binary}", sys.executable)
            for part in BUILTIN_ADAPTERS["debugpy"].command]
    assert Path(argv[1]) == Path(debugpy_adapter.__file__)
    # Run by path, as the project's interpreter runs it: debugpy's adapter answers --help.
    done = subprocess.run([*argv, "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--server-access-token" in done.stdout, done
