"""A deliberately small (and, on request, broken) debug adapter for misbehaviour tests.

usage: fake_adapter.py MODE [--listen=unix:PATH]
  ok       a program that prints "hello" and exits 0
  silent   answers initialize, then never sends `initialized`
  garbage  answers initialize with bytes that are not JSON
  trailing a program that stops at a breakpoint, its last output forwarded just after the stop
"""

import json
import socket
import sys
import threading


def main() -> None:
    mode = sys.argv[1]
    listen = next((a.split("unix:", 1)[1] for a in sys.argv[2:] if a.startswith("--listen=")),
                  None)
    if listen:
        server = socket.socket(socket.AF_UNIX)
        server.bind(listen)
        server.listen(1)
        connection, _ = server.accept()
        reader, writer = connection.makefile("rb"), connection.makefile("wb")
    else:
        reader, writer = sys.stdin.buffer, sys.stdout.buffer
    seq = 0
    sending = threading.Lock()

    def send(message):
        nonlocal seq
        with sending:
            seq += 1
            body = json.dumps({"seq": seq, **message}).encode()
            writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            writer.flush()

    def respond(request, body=None):
        send({"type": "response", "request_seq": request["seq"], "success": True,
              "command": request["command"], "body": body or {}})

    def event(name, body=None):
        send({"type": "event", "event": name, "body": body or {}})

    while True:
        length = 0
        while (line := reader.readline().strip()):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        if not length:
            return
        request = json.loads(reader.read(length))
        command = request["command"]
        if command == "initialize":
            if mode == "garbage":
                writer.write(b"Content-Length: 5\r\n\r\n{nope")
                writer.flush()
                continue
            respond(request, {"supportsConfigurationDoneRequest": True})
        elif command == "launch":
            if mode in ("ok", "trailing"):
                event("initialized")
            launch = request
        elif command == "configurationDone" and mode == "trailing":
            respond(request)
            respond(launch)
            event("stopped", {"reason": "breakpoint", "threadId": 1})
            threading.Timer(0.3, event, ["output", {"category": "stdout",
                                                 "output": "printed before the stop\n"}]).start()
        elif command == "configurationDone":
            respond(request)
            event("output", {"category": "telemetry", "output": "ignored"})
            event("output", {"category": "stdout", "output": "hello\r\n"})
            respond(launch)
            event("exited", {"exitCode": 0})
            event("terminated")
        elif command == "threads":
            respond(request, {"threads": [{"id": 1, "name": "main"}]})
        elif command == "stackTrace":
            respond(request, {"stackFrames": [], "totalFrames": 0})
        elif command == "disconnect":
            respond(request)
            return
        else:
            respond(request)


main()
