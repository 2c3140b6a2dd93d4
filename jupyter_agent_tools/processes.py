"""Child processes we start and must end: one way to start, drain and stop them.

A `ManagedProcess` runs in a session of its own, so its pid is its process group and ending
the group reaches what it spawned. Processes that leave the group (debugpy's launcher puts
the debuggee in a session of its own; `setsid` does the same) are remembered as the tree grows
(psutil handles keep the start time, so a reused pid is never hit) and are killed too.
Output is read to its end in chunks and kept within a byte bound, so a chatty child never
blocks on a full pipe and never fills our memory.

An *owned* process (`ManagedProcess.start(..., owned=True)`: `bash`, worker commands) runs
under a keeper (`keeper.py`, Linux): a child subreaper that dies with the server (`kill -9`
too) and ends everything the command started — double forks, `nohup`, `setsid` — when the
command's main process exits, when it is stopped, or when the server dies. Each carries
`OWNER_ENV` naming the server (pid and start time) in its environment, which its whole tree
inherits: `sweep_orphans` at start-up kills what a server that died left behind anyway (a
keeper killed with it).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import shutil
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import psutil

_CHUNK = 65536
_EXIT_POLL_SECONDS = 0.05
# After SIGKILL a process is gone at once; what still holds a pipe is not ours to wait for.
_REAP_SECONDS = 5.0
PIPE = asyncio.subprocess.PIPE
DEVNULL = asyncio.subprocess.DEVNULL
STDOUT = asyncio.subprocess.STDOUT
KEEPER = Path(__file__).with_name("keeper.py")
#: The launcher that confines a command (sandbox.py; a policy is its JSON).
SANDBOX = Path(__file__).with_name("sandbox.py")
#: In an owned process's environment: `pid:start time` of the server that owns it.
OWNER_ENV = "JUPYTER_AGENT_TOOLS_OWNER"
# After the keeper was asked to stop: its own grace, then this long to kill and reap.
_KEEPER_SECONDS = 6.0
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
#: What a keeper gets when the server dies (keeper.py tells it from a request to stop).
DEATH_SIGNAL = signal.SIGUSR2


def signal_process_group(pgid: int, sig: signal.Signals = signal.SIGKILL) -> None:
    """Send `sig` to process group `pgid`; a group that is already gone is not an error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class BoundedOutput:
    """What a stream said, within `max_bytes`: its first bytes (`head`) or its last (`tail`)."""

    def __init__(self, max_bytes: int, keep: Literal["head", "tail"] = "head") -> None:
        self.max_bytes = max_bytes
        self.keep = keep
        self.data = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self.keep == "head":
            self.data.extend(chunk[: max(0, self.max_bytes - len(self.data))])
        else:
            self.data.extend(chunk)
            del self.data[: -self.max_bytes or len(self.data)]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.data)

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


async def drain(stream: asyncio.StreamReader, sink: Callable[[bytes], None]) -> None:
    """Read `stream` to its end, handing each chunk to `sink`. Chunks, not lines: one huge
    line must not stop the reading (readline has a limit)."""
    while chunk := await stream.read(_CHUNK):
        sink(chunk)


@dataclass
class Collected:
    """A finished (or stopped) process's exit status and the kept part of its output."""

    returncode: int | None
    stdout: BoundedOutput
    stderr: BoundedOutput
    timed_out: bool = False


class ProcessTree:
    """A process started in its own session and every process it was seen to start.

    Synchronous and pid-based, so that a child started with `subprocess.Popen` (in a worker
    thread) is ended the same way as an asyncio one.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._known: dict[int, psutil.Process] = {}
        self.track(pid)

    def track(self, pid: int) -> None:
        """Remember `pid` (e.g. a debuggee an adapter reported) and its children."""
        with contextlib.suppress(psutil.Error):
            self._known.setdefault(pid, psutil.Process(pid))
        self.snapshot()

    def snapshot(self) -> None:
        """Remember every current descendant of every process already known."""
        for process in list(self._known.values()):
            with contextlib.suppress(psutil.Error):
                for child in process.children(recursive=True):
                    self._known.setdefault(child.pid, child)

    def alive(self) -> list[psutil.Process]:
        """Known processes still running (zombies count as ended), descendants included."""
        self.snapshot()
        return [p for p in self._known.values() if _running(p)]

    def kill(self) -> None:
        """SIGKILL the group, every known process group (never our own) and every known
        process still alive."""
        survivors = self.alive()  # before the group dies: orphans no longer show as children
        signal_process_group(self.pid)
        own_group = os.getpgrp()
        groups = set()
        for process in survivors:
            with contextlib.suppress(psutil.Error, OSError):
                groups.add(os.getpgid(process.pid))
        for group in groups - {own_group}:
            signal_process_group(group)
        for process in survivors:
            with contextlib.suppress(psutil.Error):
                process.kill()


class ManagedProcess(ProcessTree):
    """An asyncio child in its own session: its tree, its exit, its output."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        super().__init__(process.pid)

    #: Whether a keeper runs the command (`start(owned=True)` on Linux); its grace.
    owned = False
    grace_seconds = 0.0

    @classmethod
    async def start(
        cls, argv: Sequence[str], *, cwd: str | Path | None = None,
        env: dict[str, str] | None = None, stdin: int = DEVNULL, stdout: int = PIPE,
        stderr: int = PIPE, preexec_fn: Callable[[], Any] | None = None,
        limit: int = 2**16, owned: bool = False, grace_seconds: float = 0.0,
        sandbox: str | None = None,
    ) -> ManagedProcess:
        """Start `argv` in a new session; OSError when it cannot be executed.

        `owned`: under a keeper (see the module's docstring): nothing the command starts
        outlives it, its stop, or the server. `grace_seconds`: when it is stopped, how long
        its processes have between SIGTERM and SIGKILL. `sandbox`: a policy (sandbox.py) that
        confines the command and all it starts (its keeper, for an owned one).
        """
        argv = list(argv)
        kept = owned and _keeper_works()
        if owned:
            argv, env, preexec_fn = owned_command(argv, env=env, cwd=cwd,
                                                  grace_seconds=grace_seconds,
                                                  preexec_fn=preexec_fn, sandbox=sandbox)
        elif sandbox is not None:
            argv = sandboxed(sandbox, argv)
        creating = asyncio.ensure_future(asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr,
            start_new_session=True, preexec_fn=preexec_fn, limit=limit,
        ))
        try:
            process = await asyncio.shield(creating)
        except asyncio.CancelledError:
            # Cancelled while the child starts (its run closed): asyncio would SIGKILL a
            # half-started keeper alone, orphaning what it had started. Let it start, then
            # end it the way its tree ends.
            with contextlib.suppress(OSError):
                started = cls(await creating)
                started.owned, started.grace_seconds = kept, grace_seconds
                await started.stop(0.0)
            raise
        managed = cls(process)
        managed.owned, managed.grace_seconds = kept, grace_seconds
        return managed

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    @property
    def running(self) -> bool:
        return self.process.returncode is None

    def alive_now(self) -> bool:
        """Running by the system's word: asyncio hears of an exit only once it reaps it."""
        known = self._known.get(self.pid)
        return self.running and known is not None and _running(known)

    # -- waiting and ending ----------------------------------------------------------------

    async def exited(self, timeout: float | None = None) -> bool:
        """Wait until the process itself has exited; False if `timeout` passed first.

        Not `process.wait()`: that also waits for the pipes, which a process left behind
        may hold open long after this one is gone.
        """
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while self.process.returncode is None:
            if deadline is not None and loop.time() >= deadline:
                return False
            await asyncio.sleep(_EXIT_POLL_SECONDS)
        return True

    async def stop(self, grace_seconds: float, *, terminate: bool = True) -> None:
        """End the process and its tree: SIGTERM the group (unless `terminate` is False,
        for a child already asked to exit in its own protocol), wait `grace_seconds` for
        it to exit, then kill the group and every straggler.

        An owned process's keeper does it: asked to stop, it gives the tree the grace it was
        started with and kills all of it, setsid'ed processes too."""
        self.snapshot()
        if self.owned:
            if not terminate:
                await self.exited(grace_seconds)
            await self._stop_keeper()
            return
        if terminate and self.running:
            signal_process_group(self.pid, signal.SIGTERM)
        await self.exited(grace_seconds)
        self.kill()
        await self.exited(_REAP_SECONDS)

    async def _stop_keeper(self) -> None:
        if self.running:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGTERM)
            await self.exited(self.grace_seconds + _KEEPER_SECONDS)
        self.kill()  # a keeper that did not end in time (or was killed): what is known of it
        await self.exited(_REAP_SECONDS)

    async def collect(self, timeout: float | None, max_bytes: int,
                      keep: Literal["head", "tail"] = "head", *,
                      out: BoundedOutput | None = None) -> Collected:
        """Drain stdout and stderr (those piped; each kept within `max_bytes`, stdout in `out`
        when given) until the process exits and its pipes close, for at most `timeout`
        seconds (None: no limit). Past it, the tree is killed and `timed_out` is set.
        Whatever happens (the caller cancelled too), nothing is left running."""
        out = out if out is not None else BoundedOutput(max_bytes, keep)
        err = BoundedOutput(max_bytes, keep)
        readers = [drain(stream, sink.add) for stream, sink in
                   ((self.process.stdout, out), (self.process.stderr, err)) if stream]
        timed_out = False
        try:
            await asyncio.wait_for(asyncio.gather(*readers, self.process.wait()), timeout)
        except asyncio.TimeoutError:
            timed_out = True
        finally:
            if self.owned and (self.running or timed_out):
                await self._stop_keeper()
            elif self.running or timed_out:
                self.kill()
                await self.exited(_REAP_SECONDS)
        return Collected(self.process.returncode, out, err, timed_out)


def owned_command(
    argv: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | Path | None = None,
    grace_seconds: float = 0.0, preexec_fn: Callable[[], Any] | None = None,
    sandbox: str | None = None,
) -> tuple[list[str], dict[str, str], Callable[[], Any] | None]:
    """`argv`, its environment and its preexec_fn as they run under a keeper (Linux; else
    only marked with OWNER_ENV), for `ManagedProcess.start(owned=True)` and for a
    `subprocess.Popen(..., start_new_session=True)` alike. FileNotFoundError when `argv[0]`
    cannot be executed. Start it from a thread that lives as long as the process should: the
    keeper's death signal fires when that thread ends (it then polls its parent instead)."""
    env = {**(os.environ if env is None else env), OWNER_ENV: owner_token()}
    if not _keeper_works():
        return (list(argv) if sandbox is None else sandboxed(sandbox, argv)), env, preexec_fn
    _check_executable(argv[0], env, cwd)
    confined = [] if sandbox is None else ["--sandbox", sandbox]
    kept = [sys.executable, "-I", "-S", str(KEEPER), "--parent", str(os.getpid()),
            "--grace", repr(float(grace_seconds)), *confined, "--", *argv]
    return kept, env, _keeper_preexec(_libc(), preexec_fn)


def sandboxed(policy: str, argv: Sequence[str]) -> list[str]:
    """`argv` behind the launcher that confines it by `policy` (sandbox.py) and then runs it."""
    return [sys.executable, "-I", "-S", str(SANDBOX), "--policy", policy, "--", *argv]


def _keeper_works() -> bool:
    return sys.platform.startswith("linux") and bool(sys.executable)


_LIBC: list[Any] = []


def _libc() -> Any:
    """The C library, loaded in the server (never in a forked child, where loading is unsafe)."""
    if not _LIBC:
        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    return _LIBC[0]


def _keeper_preexec(libc: Any, then: Callable[[], Any] | None) -> Callable[[], None]:
    """In the forked child, before it executes the keeper: make it a child subreaper that gets
    DEATH_SIGNAL when the server dies (both last across execve)."""
    def preexec() -> None:
        # Held back (the mask lasts across execve) until the keeper has its handler: until
        # then the signal's default action would end it without a word.
        signal.pthread_sigmask(signal.SIG_BLOCK, {DEATH_SIGNAL})
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        libc.prctl(_PR_SET_PDEATHSIG, DEATH_SIGNAL, 0, 0, 0)
        if then is not None:
            then()

    return preexec


def _check_executable(program: str, env: dict[str, str], cwd: str | Path | None) -> None:
    """FileNotFoundError when `program` would not start: the keeper would only exit 127."""
    if os.sep in program:
        path = Path(cwd or ".", program)
        if not os.access(path, os.X_OK) or path.is_dir():
            raise FileNotFoundError(2, "No such executable", program)
    elif shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        raise FileNotFoundError(2, "No such program on PATH", program)


_OWNER: list[str] = []


def owner_token(pid: int | None = None) -> str:
    """`pid:start time` of a process (this one by default): what OWNER_ENV holds."""
    if pid is None:
        if not _OWNER:
            _OWNER.append(owner_token(os.getpid()))
        return _OWNER[0]
    return f"{pid}:{psutil.Process(pid).create_time():.2f}"


def forget_inherited_owner() -> None:
    """Drop an OWNER_ENV this process inherited (a server started from another's `bash`):
    its own children must not be taken for that owner's."""
    os.environ.pop(OWNER_ENV, None)


def owner_alive(token: str) -> bool:
    """Whether the process an `owner_token` names still runs (a reused pid has another start
    time)."""
    pid_text, _, _ = token.partition(":")
    try:
        return owner_token(int(pid_text)) == token
    except (ValueError, psutil.Error):
        return False


def sweep_orphans() -> list[int]:
    """Kill every process of this user whose OWNER_ENV names a server that is gone (a reused
    pid has another start time): what a server that crashed with its keepers left. Never this
    process, its ancestors or its descendants. Blocking (it reads every process's
    environment): run it in a thread. The pids killed."""
    me = psutil.Process()
    spared = {me.pid} | {p.pid for p in me.parents()}
    with contextlib.suppress(psutil.Error):
        spared |= {p.pid for p in me.children(recursive=True)}
    dead_owners: dict[str, bool] = {}
    killed = []
    uid = os.getuid()
    for process in psutil.process_iter(["uids"]):
        if process.pid in spared or not process.info["uids"] or process.info["uids"].real != uid:
            continue  # only this user's processes: their environments are ours to read
        try:
            token = process.environ().get(OWNER_ENV)
        except (psutil.Error, OSError):
            continue  # gone, or not ours to read
        if not token:
            continue
        if token not in dead_owners:
            dead_owners[token] = not owner_alive(token)
        if dead_owners[token]:
            with contextlib.suppress(psutil.Error):
                process.kill()
                killed.append(process.pid)
    return killed


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
