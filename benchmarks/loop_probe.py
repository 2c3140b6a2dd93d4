"""A Jupyter server extension that only `bench_load` starts: how late the event loop runs.

A task sleeps 10 ms at a time on the server's loop and records how much later than asked it
wakes: anything that holds the loop (a regex, a walk, a big JSON) shows up as lag.
`GET bench-loop-probe` answers the longest and the p99 lag since the last `POST` (which resets),
the garbage collector's pauses (they hold the loop like any callback), and the RSS and CPU
time of the server and of its child processes. With BENCH_ASYNCIO_DEBUG=1 the loop also
runs in asyncio debug mode (logging every callback that holds it over 50 ms); with
BENCH_STALL_STACKS=1 a watchdog thread samples the loop thread's stack every 10 ms while the
loop is stalled over 50 ms, so the answer names the code that held it. With
BENCH_PROFILE=<file> the loop thread runs under cProfile, timed in its CPU time (steadier than
wall time on a shared machine), from the `POST` on; the next `GET` writes the statistics to
<file>.
"""

from __future__ import annotations

import asyncio
import cProfile
import gc
import os
import sys
import threading
import time
import traceback
from collections import Counter
from typing import Any

import psutil
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web
from tornado.ioloop import IOLoop

INTERVAL_S = 0.01
STALL_S = 0.05


class LoopProbe:
    def __init__(self) -> None:
        self.lags: list[float] = []
        self.last_tick = time.monotonic()
        self.stall_stacks: Counter[str] = Counter()
        self.profile: cProfile.Profile | None = None
        # The garbage collector's pauses (they stop every thread that holds the GIL, the
        # loop's too): the longest, and the total, per generation.
        self.gc_started = 0.0
        self.gc_longest = [0.0, 0.0, 0.0]
        self.gc_total = [0.0, 0.0, 0.0]
        gc.callbacks.append(self.on_gc)

    def on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.gc_started = time.perf_counter()
            return
        took = time.perf_counter() - self.gc_started
        generation = info["generation"]
        self.gc_longest[generation] = max(self.gc_longest[generation], took)
        self.gc_total[generation] += took

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            asked = loop.time()
            await asyncio.sleep(INTERVAL_S)
            self.last_tick = time.monotonic()
            self.lags.append(loop.time() - asked - INTERVAL_S)

    def watch(self, loop_thread: int) -> None:
        """Sample the loop thread's stack while the loop has not ticked for STALL_S."""
        while True:
            time.sleep(INTERVAL_S)
            if time.monotonic() - self.last_tick < STALL_S:
                continue
            frame = sys._current_frames().get(loop_thread)
            if frame is None:
                continue
            frames = traceback.extract_stack(frame)[-8:]
            self.stall_stacks["  <  ".join(
                f"{'/'.join(f.filename.split('/')[-2:])}:{f.lineno} {f.name}"
                for f in reversed(frames))] += 1

    def report(self) -> dict[str, Any]:
        ordered = sorted(self.lags) or [0.0]
        server = psutil.Process(os.getpid())
        rss = server.memory_info().rss
        times = server.cpu_times()
        children_cpu = times.children_user + times.children_system  # those already reaped
        for child in server.children(recursive=True):
            try:
                rss += child.memory_info().rss
                child_times = child.cpu_times()
                children_cpu += child_times.user + child_times.system
            except psutil.Error:
                continue
        return {"samples": len(self.lags), "max_lag_ms": ordered[-1] * 1000,
                "p99_lag_ms": ordered[int(len(ordered) * 0.99)] * 1000, "rss_bytes": rss,
                "cpu_server_s": times.user + times.system, "cpu_children_s": children_cpu,
                "stall_stacks": self.stall_stacks.most_common(25),
                "gc_longest_ms": [t * 1000 for t in self.gc_longest],
                "gc_total_ms": [t * 1000 for t in self.gc_total]}


class ProbeHandler(APIHandler):
    @web.authenticated
    def get(self) -> None:
        probe = self.settings["bench_loop_probe"]
        if probe.profile is not None:
            probe.profile.disable()
            probe.profile.dump_stats(os.environ["BENCH_PROFILE"])
            probe.profile = None
        self.finish(probe.report())

    @web.authenticated
    def post(self) -> None:
        probe = self.settings["bench_loop_probe"]
        probe.lags.clear()
        probe.stall_stacks.clear()
        probe.gc_longest = [0.0, 0.0, 0.0]
        probe.gc_total = [0.0, 0.0, 0.0]
        if os.environ.get("BENCH_PROFILE"):
            # On the loop thread, in its CPU time: what the loop itself spends, which a
            # shared machine's load (and waiting for the GIL) does not inflate.
            probe.profile = cProfile.Profile(time.thread_time)
            probe.profile.enable()
        self.finish({})


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "benchmarks.loop_probe"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    probe = LoopProbe()
    serverapp.web_app.settings["bench_loop_probe"] = probe
    route = url_path_join(serverapp.web_app.settings["base_url"], "bench-loop-probe")
    serverapp.web_app.add_handlers(".*$", [(route, ProbeHandler)])

    def start() -> None:
        loop = asyncio.get_running_loop()
        if os.environ.get("BENCH_ASYNCIO_DEBUG") == "1":
            loop.set_debug(True)
            loop.slow_callback_duration = STALL_S
        if os.environ.get("BENCH_STALL_STACKS") == "1":
            threading.Thread(target=probe.watch, args=(threading.get_ident(),),
                             daemon=True).start()
        probe.task = loop.create_task(probe.run())  # type: ignore[attr-defined]


    IOLoop.current().add_callback(start)
