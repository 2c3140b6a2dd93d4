"""A deliberately misbehaving language server, for tests: `python broken_server.py MODE`.

hang     never answers initialize
crash    initializes, then exits (status 3) on the first hover or save, after a line on stderr
chatty   writes 2 MB to stderr before each answer (a client that does not drain it blocks)
mute     never publishes diagnostics

When chatty, it also publishes one diagnostic per opened or changed document: an error whose
message is the document's first line.
"""

from __future__ import annotations

import json
import sys
import time


def read_message() -> dict | None:
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length))


def send(payload: dict) -> None:
    body = json.dumps(payload).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    sys.stdout.buffer.flush()


def main(mode: str) -> None:
    while (message := read_message()) is not None:
        method, msg_id = message.get("method"), message.get("id")
        if mode == "chatty":
            sys.stderr.write("noise " * 350_000 + "\n")
            sys.stderr.flush()
        if method == "initialize":
            if mode == "hang":
                time.sleep(3600)
            send({"jsonrpc": "2.0", "id": msg_id, "result": {"capabilities": {
                "textDocumentSync": 1, "hoverProvider": True,
                # what ruff sends and lsprotocol cannot parse
                "notebookDocumentSync": {"notebookSelector": [{"cells": [{"language": "x"}]}]},
            }}})
        elif method == "textDocument/hover":
            if mode == "crash":
                sys.stderr.write("fatal: hover exploded\n")
                sys.stderr.flush()
                sys.exit(3)
            send({"jsonrpc": "2.0", "id": msg_id,
                  "result": {"contents": {"kind": "plaintext", "value": "a fixture symbol"}}})
        elif method in ("textDocument/didOpen", "textDocument/didChange") and mode == "chatty":
            document = message["params"]["textDocument"]
            text = (message["params"].get("contentChanges") or [document])[-1]["text"]
            send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {
                "uri": document["uri"], "version": document["version"], "diagnostics": [{
                    "range": {"start": {"line": 0, "character": 0},
                              "end": {"line": 0, "character": 1}},
                    "severity": 1, "code": "first-line", "message": text.splitlines()[0],
                }]}})
        elif method == "textDocument/didSave" and mode == "crash":
            sys.stderr.write("fatal: save exploded\n")
            sys.stderr.flush()
            sys.exit(3)
        elif method == "shutdown":
            send({"jsonrpc": "2.0", "id": msg_id, "result": None})
        elif method == "exit":
            return
        elif msg_id is not None:
            send({"jsonrpc": "2.0", "id": msg_id, "result": None})


if __name__ == "__main__":
    main(sys.argv[1])
