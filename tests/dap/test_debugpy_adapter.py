"""debugpy's adapter, launcher and debuggee as we start them: connections from debuggees
acknowledge at once, and no process builds an environment report that no log takes.

That a whole debug session works through them is what tests/dap/test_debugpy.py proves; the
time saved (40 ms per request, about half a second per launch) is measured by
benchmarks/bench_dap.py, not asserted here.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from debug_helpers import LINE_IN_ADD, ok, session_of

from jupyter_agent_tools.dap import debugpy_adapter
from jupyter_agent_tools.dap.adapters import BUILTIN_ADAPTERS

linux_only = pytest.mark.skipif(not hasattr(socket, "TCP_QUICKACK"), reason="Linux only")


@linux_only
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


@linux_only
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


REPORTS = """
import sys
sys.path.insert(0, {folder!r})
import debugpy_adapter
from debugpy.common import log
built = []
log.get_environment_description = lambda header: built.append(header) or header
debugpy_adapter._describe_environment_only_when_logged()
log.describe_environment("without a log")
log.to_file(filename={log!r})
log.describe_environment("with a log")
print(built)
"""


def test_the_environment_report_is_built_only_when_a_log_takes_it(tmp_path):
    folder = str(Path(debugpy_adapter.__file__).parent)
    script = REPORTS.format(folder=folder, log=str(tmp_path / "debugpy.log"))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.strip() == "['with a log']", done
    assert "with a log" in (tmp_path / "debugpy.log").read_text()


async def test_the_launcher_and_the_debuggee_start_through_the_file(runtime, python_project):
    run = await runtime.create_run(conversation_id="entry")
    await ok(run, "breakpoints", file="app.py", lines=[LINE_IN_ADD])
    launched = await ok(run, "launch", program="app.py")
    adapter = psutil.Process(session_of(runtime, "entry").processes.pid)
    launcher, debuggee = adapter.children(recursive=True)[:2]
    entry = str(Path(debugpy_adapter.__file__))
    assert launcher.cmdline()[1:3] == [entry, "--launcher"]
    assert debuggee.pid == launched.data["pid"]
    assert entry in debuggee.cmdline() and "--debuggee" in debuggee.cmdline()
    # Its frames are not the program's: the stack shows app.py alone.
    frames = (await ok(run, "stack")).data["frames"]
    assert {Path(frame["file"]).name for frame in frames} == {"app.py"}
