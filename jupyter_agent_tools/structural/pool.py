"""The worker pool: search processes, files spread among them, answers merged.

Each worker keeps its own tree cache, so a file goes back to the worker that read it
first; files no worker has read yet are handed out in batches to whichever is idle.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import heapq
import os
import subprocess
import sys
import threading
from bisect import bisect_right
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import replace
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
from pathlib import Path
from typing import Any

from ..processes import ProcessTree
from ..runtime.memory import killed_for_memory, memory_limit, oom_kills
from .pattern import PatternError, PatternSummary
from .worker import CompileJob, SearchJob, SyntaxCheckJob

# Started with `python -c` so the worker imports only the structural modules it needs,
# not the package's heavy __init__ (the runtime, pydantic, traitlets): it starts in ~0.1 s.
_BOOTSTRAP = (
    "import sys\n"
    "sys.path[:] = [p for p in sys.path if p not in ('', '.')]\n"  # no module from the cwd
    "import types\n"
    "package = types.ModuleType('jupyter_agent_tools')\n"
    "package.__path__ = [sys.argv[1]]\n"
    "sys.modules['jupyter_agent_tools'] = package\n"
    "for name in ('notebooks', 'files'):\n"  # their modules, not their packages' imports
    "    sub = types.ModuleType('jupyter_agent_tools.' + name)\n"
    "    sub.__path__ = [sys.argv[1] + '/' + name]\n"
    "    sys.modules[sub.__name__] = sub\n"
    "import signal\n"
    "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    "from jupyter_agent_tools.structural.worker import main\n"
    "main(sys.argv[2:])\n"
)
_PACKAGE_DIR = str(Path(__file__).resolve().parent.parent)
_MIN_BATCH_BYTES = 32 * 1024
_PAGE_BYTES = 4096  # what a pipe holds at the least (a user past pipe-user-pages-soft)
_F_GETPIPE_SZ = 1032  # Linux's fcntl for a pipe's capacity
_SHARES_PER_WORKER = 8  # a batch is this share of what each worker has left to do
_MAX_HOMES = 1_000_000
_EXIT_WAIT_SECONDS = 1.0  # a worker whose pipe closed is exiting: how long its status may take
# glibc's malloc in a worker: one arena (the search thread allocates alone; a thread's own
# arena gets no huge pages) backed by transparent huge pages where the kernel offers them
# (`madvise` mode). A search allocates its trees by the hundred MiB: measured on the stdlib,
# parsing and matching take 6% less CPU and half the page-fault time. Settings the user
# gave come after, so theirs win; a glibc without these tunables ignores them.
_MALLOC_TUNABLES = "glibc.malloc.arena_max=1:glibc.malloc.hugetlb=1"


def _pipe_capacity(fd: int) -> int:
    try:
        return fcntl.fcntl(fd, _F_GETPIPE_SZ)
    except OSError:  # not Linux
        return _PAGE_BYTES


def _worker_environment() -> dict[str, str]:
    environment = dict(os.environ)
    given = environment.get("GLIBC_TUNABLES")
    environment["GLIBC_TUNABLES"] = f"{_MALLOC_TUNABLES}:{given}" if given else _MALLOC_TUNABLES
    return environment


def _summary(answer: dict[str, Any]) -> PatternSummary:
    """The compiled pattern's summary in a worker's answer; PatternError when it did not parse."""
    if "pattern_error" in answer:
        raise PatternError(answer["pattern_error"], answer["contexts"])
    return answer["summary"]


class _FirstMatches:
    """Where the matches a search shows end. Once `limit` matches are described, a file
    after the last of their files (in the files' order) holds none to show: its matches
    are only counted. Answers come from every worker's thread."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._places: list[int] = []  # the first `limit` matches' files, a max-heap (negated)
        self._lock = threading.Lock()

    def add(self, places: Iterable[int]) -> None:
        with self._lock:
            for place in places:
                if len(self._places) < self._limit:
                    heapq.heappush(self._places, -place)
                elif place < -self._places[0]:
                    heapq.heapreplace(self._places, -place)

    def described_files(self, batch: list[str], order: dict[str, int]) -> int | None:
        """How many of the batch's first files may hold a match to show (None: all)."""
        with self._lock:
            if len(self._places) < self._limit:
                return None
            last = -self._places[0]
        return bisect_right([order[path] for path in batch], last)


class WorkerFailed(Exception):
    """A worker died or answered with an error."""


class WorkerTimeout(WorkerFailed):
    """A worker did not answer in time (and was killed)."""


class WorkerOutOfMemory(WorkerFailed):
    """A worker was killed for memory (the OOM killer, under the server's memory limit)."""

    def __init__(self, limit: str) -> None:
        super().__init__(f"a search worker was killed for memory (limit: {limit})")
        self.limit = limit


class WorkerProcess:
    """One search process and the pipes to it. Requests are serialized."""

    def __init__(self, budget_bytes: int, tree_cost_factor: float) -> None:
        self.budget_bytes = budget_bytes
        self.tree_cost_factor = tree_cost_factor
        self._process: subprocess.Popen[bytes] | None = None
        self._tree: ProcessTree | None = None
        self._outbox: Connection | None = None
        self._inbox: Connection | None = None
        self._lock = threading.RLock()  # start() is called alone and inside request()
        self.last_cache: dict[str, int] = {}
        self._ahead_bytes = _PAGE_BYTES  # the largest request sent while the worker is busy

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self, wait: bool = True) -> None:
        """Spawn the process unless it runs; without `wait`, skip it while it is busy."""
        if not self._lock.acquire(blocking=wait):
            return  # a request holds it: the process is running
        try:
            if not self.alive():
                self._spawn()
        finally:
            self._lock.release()

    def _spawn(self) -> None:
        self._close()
        to_child_r, to_child_w = os.pipe()
        to_parent_r, to_parent_w = os.pipe()
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-c", _BOOTSTRAP, _PACKAGE_DIR, str(os.getpid()),
                 str(to_child_r), str(to_parent_w), str(self.budget_bytes),
                 str(self.tree_cost_factor)],
                pass_fds=(to_child_r, to_parent_w), stdin=subprocess.DEVNULL, cwd="/",
                env=_worker_environment(),
                start_new_session=True,  # its own group: killing the pool ends all it started
            )
            self._tree = ProcessTree(self._process.pid)
        finally:
            os.close(to_child_r)
            os.close(to_parent_w)
        self._outbox = Connection(to_child_w, readable=False)
        self._ahead_bytes = _pipe_capacity(to_child_w)
        self._inbox = Connection(to_parent_r, writable=False)

    def request(self, message: Any, timeout: float) -> Any:
        """Send one request and wait for its answer (blocking: call from a thread)."""
        answers: list[Any] = []
        self.request_each([message], lambda: None, lambda _, answer: answers.append(answer),
                          timeout)
        return answers[0]

    def request_each(self, first: list[Any], more: Callable[[], Any | None],
                     answered: Callable[[Any, Any], None], timeout: float) -> None:
        """Send the requests of `first`, then those `more` gives until it gives None; each
        request and its answer go to `answered` as they come (blocking: call from a thread).

        The next request waits in the pipe while the worker works on one, so a worker never
        idles until the server's thread is scheduled again (measured: a few ms a batch on a
        busy machine). Only a request the pipe holds whole goes ahead: a worker blocked
        writing a big answer and the server blocked writing a request would wait for each
        other (the worker has read the request it answers, so the pipe is empty then).
        """
        queued = deque(first)

        def next_request() -> Any | None:
            return queued.popleft() if queued else more()

        with self._lock:
            self.start()
            # Its own references: a kill from another thread (a cancelled search) closes
            # them, and the next use fails as a dead worker's pipe does.
            outbox, inbox = self._outbox, self._inbox
            assert outbox is not None and inbox is not None
            in_flight: deque[Any] = deque()
            oom_before = oom_kills()
            try:
                request = next_request()
                while request is not None or in_flight:
                    if request is not None and not in_flight:
                        outbox.send(request)
                    elif request is not None and len(in_flight) == 1 \
                            and len(data := ForkingPickler.dumps(request)) <= self._ahead_bytes:
                        outbox.send_bytes(data)
                    else:
                        answered(in_flight.popleft(), self._receive(inbox, timeout))
                        continue
                    in_flight.append(request)
                    request = next_request()
            except (EOFError, OSError) as exc:
                died = self._exit_status()
                self.kill()
                if killed_for_memory(died, oom_before):
                    limit = memory_limit()
                    raise WorkerOutOfMemory(limit.describe() if limit else "unknown") from None
                raise WorkerFailed(f"a search worker died ({type(exc).__name__}"
                                   f"{'' if died is None else f', exit status {died}'})"
                                   ) from None
            except WorkerFailed:
                if in_flight:  # its answer would be taken for the next request's
                    self.kill()
                raise

    def _receive(self, inbox: Connection, timeout: float) -> Any:
        """The worker's next answer (WorkerFailed when it answers an error)."""
        if not inbox.poll(timeout):
            self.kill()
            raise WorkerTimeout(f"a search worker took over {timeout:.0f} s")
        answer = inbox.recv()
        if isinstance(answer, dict) and "error" in answer:
            if str(answer["error"]).startswith("MemoryError"):  # an allocation refused
                limit = memory_limit()
                raise WorkerOutOfMemory(limit.describe() if limit else "unknown")
            raise WorkerFailed(answer["error"])
        return answer

    def _exit_status(self) -> int | None:
        """The exit status of a worker whose pipe closed (it is exiting: waited for briefly)."""
        if self._process is None:
            return None
        try:
            return self._process.wait(_EXIT_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        """End the worker and anything it started (blocking: it waits for the exit)."""
        if self._tree is not None:
            self._tree.kill()
        if self._process is not None:
            self._process.wait()
        self._close()

    def stop(self) -> None:
        """End the worker at once: it holds nothing but caches."""
        self.kill()

    def stop_if_idle(self) -> bool:
        """End the worker unless a request holds it (blocking: it waits for the exit);
        whether it is stopped now. The next request starts it again."""
        if not self._lock.acquire(blocking=False):
            return False
        try:
            if self._process is not None:
                self.kill()
            self.last_cache = {}
            return True
        finally:
            self._lock.release()

    def _close(self) -> None:
        for connection in (self._outbox, self._inbox):
            if connection is not None:
                connection.close()
        self._outbox = self._inbox = None


class WorkerPool:
    """`size` workers sharing a memory budget for their tree caches."""

    def __init__(self, size: int, budget_bytes: int, tree_cost_factor: float,
                 timeout: float) -> None:
        self.timeout = timeout
        self.workers = [WorkerProcess(budget_bytes // size, tree_cost_factor)
                        for _ in range(size)]
        # Queue on the event loop, not in threads: a busy worker must not pin threads of
        # the server's default executor.
        self._turns = [asyncio.Lock() for _ in range(size)]
        # Requests waiting for each worker's turn: a search streaming batches to a worker
        # stops taking more when another waits, and queues again after it (read in threads).
        self._waiting = [0] * size
        self._homes: dict[str, int] = {}  # path -> the worker whose cache holds it
        self._rotation = 0  # the worker asked last when all are busy

    def start(self) -> None:
        """Spawn the workers that are not running (never waits for a busy one)."""
        for worker in self.workers:
            worker.start(wait=False)

    def plan(self, files: list[tuple[str, int]]) -> tuple[list[list[str]], list[list[str]]]:
        """Split (path, size) pairs into each worker's own files and batches for anyone.

        A file a worker has read before goes back to it (its cache holds the tree). The
        rest is cut into batches, largest files first, that idle workers take in turn, so
        both cores stay busy to the end whatever the prefilter leaves in each batch.
        """
        homed: list[list[str]] = [[] for _ in self.workers]
        free: list[tuple[int, int]] = []  # (size, place in `files`)
        for place, (path, size) in enumerate(files):
            home = self._homes.get(path)
            if home is None:
                free.append((size, place))
            else:
                homed[home].append(path)
        remaining = sum(size for size, _ in free)
        batches: list[list[str]] = []
        batch: list[int] = []
        filled = 0
        target = self._batch_bytes(remaining)

        def cut() -> None:
            # In the files' order: a worker describes a batch's first matches, which must be
            # the first of the search's among its files.
            batches.append([files[place][0] for place in sorted(batch)])

        for size, place in sorted(free, key=lambda item: -item[0]):
            batch.append(place)
            filled += size
            if filled >= target:
                cut()
                remaining -= filled
                batch, filled = [], 0
                target = self._batch_bytes(remaining)
        if batch:
            cut()
        return homed, batches

    def _batch_bytes(self, remaining: int) -> int:
        """The next batch's size: a share of what remains, so batches shrink towards the
        end and the last one leaves a core idle only briefly."""
        return max(_MIN_BATCH_BYTES, remaining // (len(self.workers) * _SHARES_PER_WORKER))

    async def compile(self, job: CompileJob) -> PatternSummary:
        """Compile a pattern on an idle worker: a search with no file to look at still answers
        the pattern's summary, or why it does not parse."""
        return _summary(await self._ask(self._idlest(), job))

    async def check_syntax(self, job: SyntaxCheckJob) -> list[dict[str, Any]]:
        """Syntax errors of each file before and after a rewrite (see SyntaxCheckJob)."""
        return (await self._ask(self._idlest(), job))["files"]

    def _idlest(self) -> int:
        idle = [index for index, turn in enumerate(self._turns) if not turn.locked()]
        if idle:
            return idle[0]
        self._rotation = (self._rotation + 1) % len(self.workers)
        return self._rotation

    async def search(self, job: SearchJob, files: list[tuple[str, int]]) -> dict[str, Any]:
        """Run `job` over `files` on every worker and merge the answers in file order.

        The workers compile the pattern as they search (no round trip of its own): the
        answer's `summary` is theirs; PatternError when it does not parse.
        """
        merged: dict[str, Any] = {"matches": [], "total": 0, "files_with_matches": 0,
                                  "counts": {}, "parse_errors": [], "hashes": {}}
        if not files:
            return {**merged, "summary": await self.compile(CompileJob(job.pattern,
                                                                       job.language))}
        homed, batches = self.plan(files)
        pending = deque(batches)
        answers: list[dict[str, Any]] = []
        order = {path: index for index, (path, _) in enumerate(files)}
        shown = _FirstMatches(job.limit)

        def part(batch: list[str]) -> SearchJob:
            return replace(job, files=batch, described_files=shown.described_files(batch, order),
                           # open notebooks' content: the batch's only
                           live={path: job.live[path] for path in batch if path in job.live})

        def batches_of_a_turn(index: int) -> Callable[[], SearchJob | None]:
            """The batches a worker takes in one turn (in its thread): one at least, so
            each turn makes progress; then none while another search waits for the worker,
            which goes first, between two batches."""
            taken = 0

            def more() -> SearchJob | None:
                nonlocal taken
                if taken and self._waiting[index]:
                    return None
                try:
                    batch = pending.popleft()
                except IndexError:
                    return None
                taken += 1
                return part(batch)

            return more

        # A pattern that does not parse is answered at once for every batch (the workers
        # keep the failure): no need to stop sending them.
        async def drive(index: int) -> None:
            worker = self.workers[index]
            asked: list[list[str]] = []

            def answered(request: SearchJob, answer: dict[str, Any]) -> None:  # in its thread
                answers.append(answer)
                asked.append(request.files)
                shown.add(order[match["file"]] for match in answer.get("matches", ()))
                worker.last_cache = answer.get("cache", worker.last_cache)

            first = [part(homed[index])] if homed[index] else []
            while first or pending:
                async with self._turn(index):
                    await asyncio.to_thread(worker.request_each, first,
                                            batches_of_a_turn(index), answered, self.timeout)
                first = []
            for paths in asked:
                self._remember(paths, index)

        busy = [index for index in range(len(self.workers)) if homed[index] or pending]
        try:
            await asyncio.gather(*(drive(index) for index in busy))
        except asyncio.CancelledError:
            for index in busy:  # a cancelled search must not keep a core busy
                self.workers[index].kill()
            raise
        merged["summary"] = next(_summary(answer) for answer in answers)  # raises if any fails
        for answer in answers:
            merged["matches"].extend(answer["matches"])
            merged["total"] += answer["total"]
            merged["files_with_matches"] += answer["files_with_matches"]
            merged["parse_errors"].extend(answer["parse_errors"])
            merged["hashes"].update(answer["hashes"])
            for key, value in answer["counts"].items():
                merged["counts"][key] = merged["counts"].get(key, 0) + value
        merged["matches"].sort(key=lambda m: (order[m["file"]], m["start"], [-x for x in m["end"]]))
        merged["matches"] = merged["matches"][: job.limit]
        merged["parse_errors"].sort(key=order.__getitem__)
        return merged

    def _remember(self, paths: list[str], index: int) -> None:
        if len(self._homes) + len(paths) > _MAX_HOMES:
            self._homes.clear()  # forgetting only costs a parse in another worker
        self._homes.update(dict.fromkeys(paths, index))

    @contextlib.asynccontextmanager
    async def _turn(self, index: int) -> AsyncIterator[None]:
        """The worker `index` to oneself (turns are first come, first served)."""
        self._waiting[index] += 1
        try:
            await self._turns[index].acquire()
        finally:
            self._waiting[index] -= 1
        try:
            yield
        finally:
            self._turns[index].release()

    async def _ask(self, index: int, message: Any) -> Any:
        async with self._turn(index):
            worker = self.workers[index]
            answer = await asyncio.to_thread(worker.request, message, self.timeout)
        if isinstance(answer, dict) and "cache" in answer:
            worker.last_cache = answer["cache"]
        return answer

    async def release(self) -> None:
        """Stop the workers no search is using, their tree caches with them; the next search
        starts them again (and parses its files again)."""
        idle = [index for index, turn in enumerate(self._turns) if not turn.locked()]
        stopped = await asyncio.gather(*(asyncio.to_thread(self.workers[index].stop_if_idle)
                                         for index in idle))
        gone = {index for index, done in zip(idle, stopped, strict=True) if done}
        if gone:
            self._homes = {path: home for path, home in self._homes.items() if home not in gone}

    def cache_stats(self) -> list[dict[str, int]]:
        return [worker.last_cache for worker in self.workers]

    async def shutdown(self) -> None:
        await asyncio.gather(*(asyncio.to_thread(worker.stop) for worker in self.workers))
