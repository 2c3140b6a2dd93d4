"""A scripted worker program for the command backend's tests.

It reads its brief from stdin: one instruction per line, blank lines ignored.

    call TOOL {json args}    call a tool of its run over HTTP; print "TOOL: ok" or "TOOL: CODE"
    get PATH                 GET agent-tools/api/PATH with its token; print "get PATH: STATUS"
    echo TEXT                print TEXT
    pidfile NAME             write its pid and a grandchild's (same process group) to NAME
    detach NAME              start a grandchild in a session of its own; its pid to NAME
    wait-for NAME            block until the file NAME exists in its cwd
    sleep                    block (until it is killed)
    exit N                   exit with status N

It prints "brief lines: N" first and "finished" last. Only the standard library: the point
is to be any program, using nothing but the environment the worker backend gives it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

URL = os.environ["JUPYTER_SERVER_URL"].rstrip("/") + "/agent-tools/api/"
TOKEN = os.environ["JUPYTER_TOKEN"]
RUN_ID = os.environ["JUPYTER_AGENT_TOOLS_RUN_ID"]
GRACE_SECONDS = 120  # nothing in the tests blocks this long: a stray worker ends on its own


def request(method: str, path: str, body: dict | None = None) -> tuple[int, dict | None]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(URL + path, data=data, method=method,
                                 headers={"Authorization": f"token {TOKEN}",
                                          "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as error:
        return error.code, None


def main() -> int:
    lines = [line.strip() for line in sys.stdin.read().splitlines() if line.strip()]
    print(f"brief lines: {len(lines)}", flush=True)
    for line in lines:
        command, _, rest = line.partition(" ")
        if command == "call":
            tool, _, args = rest.partition(" ")
            status, result = request("POST", f"runs/{RUN_ID}/calls",
                                     {"tool": tool, "args": json.loads(args or "{}")})
            outcome = f"http {status}" if result is None else (
                "ok" if result["ok"] else result["error"]["code"])
            print(f"{tool}: {outcome}", flush=True)
        elif command == "get":
            status, _ = request("GET", rest)
            print(f"get {rest}: {status}", flush=True)
        elif command == "echo":
            print(rest, flush=True)
        elif command == "pidfile":
            child = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({GRACE_SECONDS})"])
            with open(rest + ".tmp", "w") as handle:
                handle.write(f"{os.getpid()} {child.pid}")
            os.replace(rest + ".tmp", rest)
        elif command == "detach":
            child = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({GRACE_SECONDS})"],
                                     start_new_session=True)
            with open(rest + ".tmp", "w") as handle:
                handle.write(str(child.pid))
            os.replace(rest + ".tmp", rest)
        elif command == "wait-for":
            deadline = time.monotonic() + GRACE_SECONDS
            while not os.path.exists(rest) and time.monotonic() < deadline:
                time.sleep(0.05)
        elif command == "sleep":
            time.sleep(GRACE_SECONDS)
        elif command == "exit":
            print("exiting", flush=True)
            return int(rest)
    print("finished", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
