"""Debugging a kernel: set a breakpoint in a cell, run a cell that stops there, read the
locals, continue to the cell's end.

Through the tools (`debug breakpoints` → `eval` answering at the stop → `debug stack`,
`scopes`, `variables` → `debug continue` answering with the cell's output) against the same
Jupyter debug protocol messages JupyterLab's debugger sends (dumpCell, setBreakpoints, the
execute_request, the stopped debug_event, stackTrace, scopes, variables, continue, the
execute_reply) sent directly with jupyter_client to another kernel of the same spec, in the
same run. Attaching is done once for each, before timing. Prints p50 and the ratio (target
≤ 1.5×). Run: python -m benchmarks.bench_kernel_debug [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from typing import Any

from jupyter_client.manager import AsyncKernelManager

from jupyter_agent_tools import Runtime

from .stats import line, summarize

FUNCTION = "def double(x):\n    y = x * 2\n    return y\n"
LINE = 2


async def _tool_rounds(runtime: Runtime, rounds: int) -> list[float]:
    run = await runtime.create_run(conversation_id="bench")

    async def ok(tool: str, **args: Any) -> Any:
        result = await run.call(tool, args)
        assert result.ok, result.text
        return result

    describe = "a cell for the kernel debugging benchmark"
    await ok("eval", code=FUNCTION, description=describe)
    await ok("debug", action="attach_kernel")
    times = []
    for n in range(rounds):
        start = time.perf_counter()
        await ok("debug", action="breakpoints", cell=1, lines=[LINE])
        stopped = await ok("eval", code=f"double({n})", description=describe)
        assert stopped.data["status"] == "paused", stopped.text
        frame = (await ok("debug", action="stack")).data["frames"][0]["id"]
        scope = (await ok("debug", action="scopes", frame_id=frame)).data["scopes"][0]
        local = (await ok("debug", action="variables", reference=scope["reference"]))
        assert local.data["variables"][0]["value"] == str(n)
        ended = await ok("debug", action="continue")
        assert ended.data["result"] == str(2 * n), ended.text
        times.append(time.perf_counter() - start)
    await ok("debug", action="terminate")
    await runtime.close_run(run.id)
    return times


class _Direct:
    """JupyterLab's debugger's messages, straight over jupyter_client's channels."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.seq = 0

    async def request(self, command: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.seq += 1
        msg = self.client.session.msg("debug_request", {
            "type": "request", "seq": self.seq, "command": command, "arguments": arguments})
        self.client.control_channel.send(msg)
        while True:
            reply = await self.client.get_control_msg(timeout=30)
            if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
                return dict(reply["content"])

    async def stopped_event(self) -> dict[str, Any]:
        while True:
            msg = await self.client.get_iopub_msg(timeout=30)
            if msg["msg_type"] == "debug_event" and msg["content"].get("event") == "stopped":
                return dict(msg["content"])


async def _direct_rounds(rounds: int) -> list[float]:
    manager = AsyncKernelManager(kernel_name="python3")
    await manager.start_kernel()
    client = manager.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        await client.execute_interactive(FUNCTION, timeout=30)
        lab = _Direct(client)
        await lab.request("debugInfo", {})
        await lab.request("initialize", {"clientID": "bench", "adapterID": "python",
                                         "pathFormat": "path", "linesStartAt1": True,
                                         "columnsStartAt1": True})
        await lab.request("attach", {})
        await lab.request("configurationDone", {})
        times = []
        for n in range(rounds):
            start = time.perf_counter()
            path = (await lab.request("dumpCell", {"code": FUNCTION}))["body"]["sourcePath"]
            await lab.request("setBreakpoints", {"source": {"path": path},
                                                 "breakpoints": [{"line": LINE}]})
            msg_id = client.execute(f"double({n})")
            thread = (await lab.stopped_event())["body"]["threadId"]
            frames = (await lab.request("stackTrace", {"threadId": thread}))["body"]
            frame = frames["stackFrames"][0]["id"]
            scope = (await lab.request("scopes", {"frameId": frame}))["body"]["scopes"][0]
            local = await lab.request("variables",
                                      {"variablesReference": scope["variablesReference"]})
            assert local["body"]["variables"][0]["value"] == str(n)
            await lab.request("continue", {"threadId": thread})
            while True:
                reply = await client.get_shell_msg(timeout=30)
                if reply["parent_header"].get("msg_id") == msg_id:
                    break
            times.append(time.perf_counter() - start)
        await lab.request("disconnect", {"restart": False, "terminateDebuggee": False})
        return times
    finally:
        client.stop_channels()
        await manager.shutdown_kernel(now=True)


async def _main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        runtime = Runtime(root_dir=directory)
        try:
            tool = await _tool_rounds(runtime, rounds)
        finally:
            await runtime.shutdown()
    direct = await _direct_rounds(rounds)
    tool_summary, direct_summary = summarize(tool), summarize(direct)
    print(f"breakpoint → run the cell → stop → read locals → continue, {rounds} rounds:")
    print("  " + line("debug + eval tools", tool_summary))
    print("  " + line("debug protocol via jupyter_client", direct_summary))
    print(f"  ratio (p50)  {tool_summary['p50_ms'] / direct_summary['p50_ms']:.2f}x "
          "(target ≤ 1.5x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=20)
    options = parser.parse_args()
    asyncio.run(_main(options.rounds))


if __name__ == "__main__":
    main()
