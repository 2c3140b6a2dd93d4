"""The keeper: a small process between the server and a command, which owns all it starts.

    python -I -S keeper.py --parent PID --grace SECONDS [--sandbox POLICY] -- ARGV...

Run as a script (a few modules of the standard library, so it starts in milliseconds), it

- is a child subreaper (`PR_SET_CHILD_SUBREAPER`): a process of the command's tree whose
  parent ends — a double fork, `nohup cmd &`, `setsid cmd &` — becomes the keeper's child, not
  init's, so it can never leave the keeper's sight;
- gets SIGUSR2 when the server that started it dies (`PR_SET_PDEATHSIG`), `kill -9` included,
  and checks that the server had not already died before that took effect. Both settings
  are made by `processes.py` in the forked child before it executes the keeper (they last
  across execve), so the keeper needs no ctypes, whose import would double its start-up;
- starts ARGV (in the keeper's own process group; it is the session leader) and reaps
  everything that is handed to it;
- when ARGV's main process exits, kills every descendant left (background children of a
  shell included) and exits as ARGV did (its code, or the same signal);
- on SIGTERM, SIGHUP or SIGINT (the server stopping it) or the server's death, sends SIGTERM
  to every descendant, gives them `--grace` seconds, then SIGKILLs every one still there, and
  exits.

Descendants are found in /proc by parent pid and killed one by one (the keeper is in their
process group, so it cannot use the group), again until none is left: one forked while the
others were being killed is handed to the keeper and seen on the next pass.

With `--sandbox` the keeper first confines itself by POLICY (sandbox.py, loaded from beside
it: Landlock, a network namespace), so the command and everything it starts are confined, and
starts nothing when that fails (exit 126). Reading /proc and signalling stay allowed.

Linux only: elsewhere `processes.py` starts commands without a keeper.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False  # not from typing, whose import costs start-up time
if TYPE_CHECKING:
    import signal
else:
    try:  # `signal` without its enums: a fifth of the keeper's start-up
        import _signal as signal
    except ImportError:  # another interpreter
        import signal

# The signal the kernel sends when the server dies: a catchable one, so the keeper cleans up;
# one of its own, so that it is told apart from a request to stop. (processes.DEATH_SIGNAL)
_DEATH_SIGNAL = signal.SIGUSR2
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, _DEATH_SIGNAL)
# How long the keeper goes on killing (a fork bomb could outrun one pass, never many).
_KILL_SECONDS = 5.0
_PARENT_POLL_SECONDS = 0.5


def descendants(root: int) -> list[int]:
    """Live (not zombie) descendants of `root`, parents before children."""
    children: dict[int, list[int]] = {}
    zombies: set[int] = set()
    try:
        names = os.listdir("/proc")
    except OSError:  # confined away from /proc: the server then kills the group (processes.py)
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                data = stat.read()
        except OSError:
            continue  # gone meanwhile
        fields = data[data.rfind(b")") + 2:].split()
        pid = int(name)
        children.setdefault(int(fields[1]), []).append(pid)
        if fields[0] in (b"Z", b"X"):
            zombies.add(pid)
    found: list[int] = []
    queue = list(children.get(root, ()))
    while queue:
        pid = queue.pop(0)
        if pid not in zombies:
            found.append(pid)
        queue.extend(children.get(pid, ()))
    return found


def _reap() -> list[tuple[int, int]]:
    """Reap every child that has ended; their (pid, status)."""
    reaped: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid == 0:
            return reaped
        reaped.append((pid, status))


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass  # gone meanwhile


def end_descendants(grace: float) -> None:
    """SIGTERM every descendant, wait up to `grace` seconds, then SIGKILL until none is left."""
    me = os.getpid()
    if grace > 0:
        _signal_all(descendants(me), signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and descendants(me):
            _reap()
            time.sleep(0.02)
    deadline = time.monotonic() + _KILL_SECONDS
    while True:
        _reap()
        alive = descendants(me)
        if not alive or time.monotonic() >= deadline:
            break
        _signal_all(alive, signal.SIGKILL)
        time.sleep(0.005)
    _reap()


class Keeper:
    def __init__(self, parent: int, grace: float, argv: list[str]) -> None:
        self.parent = parent
        self.grace = grace
        self.argv = argv
        self.main: int | None = None
        self._ending = False

    def start(self) -> None:
        for sig in _STOP_SIGNALS:
            signal.signal(sig, self._on_signal)
        # processes.py blocked the death signal until now; one that came meanwhile is handled.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {_DEATH_SIGNAL})
        if os.getppid() != self.parent:
            os._exit(1)  # the server died before the death signal was armed: start nothing
        pid = os.fork()
        if pid == 0:
            self._exec()
        self.main = pid

    def _exec(self) -> None:
        try:
            for sig in _STOP_SIGNALS:
                signal.signal(sig, signal.SIG_DFL)
            os.execvp(self.argv[0], self.argv)
        except OSError as exc:
            os.write(2, f"cannot run {self.argv[0]}: {exc.strerror}\n".encode())
        finally:
            os._exit(127)

    def _on_signal(self, signum: int, frame: object) -> None:  # noqa: ARG002 - signal API
        if signum == _DEATH_SIGNAL and os.getppid() == self.parent:
            # The death signal fires when the *thread* that forked the keeper ends: the server
            # lives on (the thread was one of its pools'). The signal is spent; poll instead.
            self.watch_parent()
            return
        self.stop(128 + signum)

    def stop(self, code: int) -> None:
        if self._ending:
            return
        self._ending = True
        end_descendants(self.grace)
        os._exit(code)

    def watch_parent(self) -> None:
        """Poll the parent: one that is gone has handed the keeper to another process."""
        import threading  # only here: the import costs start-up time

        def poll() -> None:
            while os.getppid() == self.parent:
                time.sleep(_PARENT_POLL_SECONDS)
            os.kill(os.getpid(), signal.SIGHUP)

        threading.Thread(target=poll, daemon=True).start()

    def wait(self) -> int:
        """Reap children until the main one ends; then end the rest. Its exit status."""
        while True:
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                return 0
            if pid == self.main:
                break
        self._ending = True
        end_descendants(0)
        return status


def confine(policy: str) -> None:
    """Confine this process by `policy` (sandbox.py beside this file); exit 126 if it cannot."""
    import importlib.util  # only here: confined commands pay for it, others do not
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sandbox.py")
    spec = importlib.util.spec_from_file_location("_agent_tools_sandbox", path)
    try:
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.apply(policy)
    except Exception as exc:  # noqa: BLE001 - whatever failed, the command must not run
        os.write(2, f"sandbox: cannot confine the command, so it does not run: {exc}\n".encode())
        os._exit(126)


def main(args: list[str]) -> None:
    try:
        split = args.index("--")
        options = dict(zip(args[:split:2], args[1:split:2], strict=False))
        parent, grace, argv = int(options["--parent"]), float(options["--grace"]), args[split + 1:]
    except (ValueError, KeyError):
        sys.exit("usage: keeper.py --parent PID --grace SECONDS [--sandbox POLICY] -- ARGV...")
    if not argv:
        sys.exit("keeper.py: no command")
    if "--sandbox" in options:
        confine(options["--sandbox"])
    keeper = Keeper(parent, grace, argv)
    keeper.start()
    status = keeper.wait()
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)  # end as the command did
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


if __name__ == "__main__":
    main(sys.argv[1:])
