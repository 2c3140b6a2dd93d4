"""The kernels resource: starts kernels for runs, keeps a warm pool, shuts them all down.

Hosted in a Jupyter server, kernels come from the server's own kernel manager, so they show
in JupyterLab and follow its configuration (a remote kernel gateway included). Embedded, a
jupyter_client multi-kernel manager of our own starts them, Python over IPC sockets. A run
may also borrow a user's kernel of the server (`kernel_id` / `notebook`): the factory connects
to it and installs the bridge, but never starts, restarts or stops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from typing import TYPE_CHECKING, Any

from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
from jupyter_client.multikernelmanager import AsyncMultiKernelManager
from jupyter_client.session import Session
from jupyter_core.paths import jupyter_runtime_dir
from jupyter_core.utils import ensure_async
from jupyter_server.gateway.managers import GatewayMappingKernelManager
from tornado.web import HTTPError
from traitlets import Bool, Dict, Enum, Float, Int
from traitlets.config import Config

from ..files.denied import deny_folders
from ..runtime.memory import memory_cause, oom_kills
from ..runtime.protocols import SandboxView
from ..runtime.resources import ResourceProvider
from ..runtime.tool import Resource
from . import deno_spec
from .channels import GatewayChannels, ZmqChannels
from .errors import (
    GatewayUnreachable,
    KernelBorrowed,
    KernelDidNotStart,
    KernelError,
    KernelNotInstalled,
    TooManyKernels,
    UnknownLanguage,
    UserKernelNotRunning,
    UserKernelSilent,
    status_reason,
)
from .interpreters import InterpreterLimits, RunInterpreters
from .provisioner import SANDBOX_ENV, launch_kernels_off_the_loop
from .session import KernelHandle, KernelSession
from .user_kernels import UserKernel, find_user_kernel, kernel_spec_language

if TYPE_CHECKING:
    from pathlib import Path

    from ..runtime.run import Run, RunOptions

LANGUAGES = ("python", "javascript")
# How often a borrowed kernel found dead is checked for the server's restart of it.
_RESTART_POLL_SECONDS = 0.5
_MEMORY_HINT = ("Close runs or kernels you no longer need (each kernel holds its variables), "
                "work on less data at once, or ask for a server with more memory.")
_INSTALL_HINT = {
    "python": "Install ipykernel (`pip install ipykernel`) in the server's environment.",
    "javascript": f"Install Deno's kernel: {deno_spec.INSTALL} (its kernelspec is registered "
                  "at first use).",
}


class KernelFactory(ResourceProvider):
    """Kernels for `eval`: one per (run, language), started lazily, from a warm pool."""

    resource = Resource.KERNELS

    kernel_names = Dict(
        default_value={"python": "python3", "javascript": deno_spec.KERNEL_NAME},
        help="Kernelspec used for each eval language on the host.",
    ).tag(config=True)
    sandbox_kernel_names = Dict(
        default_value={},
        help="Kernelspec per language that runs inside an already running sandbox (a kernel "
        "provisioner or wrapper attaching to it). Used when the spec is installed; the factory "
        "never boots a sandbox. Results say where each cell ran.",
    ).tag(config=True)
    warm_pool = Dict(
        default_value={"python": 1},
        help="Kernels kept started and ready per language, so a new run's first eval does not "
        "wait for a kernel to start. Filled after the first eval of that language.",
    ).tag(config=True)
    warm_at_first_run = Bool(
        False, help="Fill the warm pool when the first run is created instead of after the "
        "first eval, so even the first run's first eval skips a kernel start (e.g. on Binder).",
    ).tag(config=True)
    idle_timeout_seconds = Float(
        300.0, help="A cell is interrupted after this long with no output; the clock stands "
        "still while a tool() call of the cell is in flight.",
    ).tag(config=True)
    bridge_timeout_seconds = Float(
        600.0, help="Longest a tool() call from a cell may take.",
    ).tag(config=True)
    max_bridge_frame_bytes = Int(
        100 * 1024 * 1024, help="Largest tool() request a kernel on this machine sends over "
        "its Unix socket to the server; a bigger request goes over the kernel's stdin channel "
        "instead, and the server closes a socket connection that announces more.",
    ).tag(config=True)
    start_timeout_seconds = Float(
        60.0, help="Longest a kernel may take to start and answer.",
    ).tag(config=True)
    syntax_check_timeout_seconds = Float(
        10.0, help="Longest Deno may take to find the syntax error of a JavaScript cell that "
        "its kernel rejected with only 'Execution failed'.",
    ).tag(config=True)
    max_images = Int(8, help="Most images one eval result carries.").tag(config=True)
    max_eval_cells_kept = Int(
        1000, help="Python eval cells whose code a run keeps (the newest), so a debugger "
        "attached to its kernel can set breakpoints in them and name them where it stops.",
    ).tag(config=True)
    max_kernels = Int(
        32, help="Most kernels alive at once (warm ones included); starting one more is refused.",
    ).tag(config=True)
    embedded_python_transport = Enum(
        ["ipc", "tcp"], "ipc", help="ZeroMQ transport of Python kernels started embedded: "
        "'ipc' (no ports, no plain-text traffic other users could read; the sockets go in a "
        "private folder under /tmp, short enough for a socket path) or 'tcp' on loopback. "
        "Deno's kernel supports only tcp.",
    ).tag(config=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._embedded: dict[str, AsyncMultiKernelManager] = {}
        self._embedded_specs = KernelSpecManager(parent=self)
        self._ipc_dir: str | None = None
        self._sessions: set[KernelSession] = set()
        # Users' kernels borrowed by runs (never started or stopped here): kernel id -> run.
        self._borrowed: dict[str, Run] = {}
        self._borrowed_sessions: set[KernelSession] = set()
        self._pool: dict[str, list[asyncio.Task[KernelSession]]] = {}
        self._closing = False
        # Notebook sessions a run started (the notebook had none): kernel id -> session id.
        self._notebook_sessions: dict[str, str] = {}

    # -- ResourceProvider -----------------------------------------------------------------

    def attach(self, run: Run, options: RunOptions) -> RunInterpreters:
        if self.warm_at_first_run and not self._pool:
            for language in self.warm_pool:
                self._refill(language)
        user_kernel = None
        if options.kernel_id is not None:  # checked by find_user_kernel just before
            user_kernel = UserKernel(options.kernel_id, options.notebook)
            self._borrowed[options.kernel_id] = run
        limits = InterpreterLimits(
            max_output_chars=self.runtime.max_output_chars, max_images=self.max_images,
            idle_timeout_seconds=self.idle_timeout_seconds,
            syntax_check_timeout_seconds=self.syntax_check_timeout_seconds,
            max_eval_cells_kept=self.max_eval_cells_kept,
        )
        return RunInterpreters(self, limits, run, user_kernel)

    async def release(self, run: Run, handle: RunInterpreters) -> None:  # noqa: ARG002
        await handle.close()
        if handle.user_kernel is not None:
            self._borrowed.pop(handle.user_kernel.kernel_id, None)

    async def release_idle(self) -> None:
        """End the warm kernels: a run's next first eval starts one (and refills the pool)."""
        pending = [task for tasks in self._pool.values() for task in tasks]
        self._pool.clear()
        warm = []
        for task in pending:  # one still starting is waited for, then ended
            with contextlib.suppress(Exception):
                warm.append(await asyncio.wait_for(asyncio.shield(task),
                                                   self.start_timeout_seconds))
        await asyncio.gather(*(self.stop(session) for session in warm), return_exceptions=True)
        if not self.runtime.runs:
            await self._end_unwatched_notebook_sessions()

    async def _end_unwatched_notebook_sessions(self) -> None:
        """No run is open: end the notebook sessions runs started that no one has open in
        JupyterLab (no browser connection) and that run nothing; the notebook's next run,
        or the user opening it, starts a kernel again."""
        manager = self.runtime.kernel_manager
        sessions = getattr(self.runtime.parent, "session_manager", None)
        if manager is None or sessions is None:
            self._notebook_sessions.clear()
            return
        connections = getattr(manager, "_kernel_connections", None)
        for kernel_id, session_id in list(self._notebook_sessions.items()):
            if kernel_id not in manager.list_kernel_ids():
                self._notebook_sessions.pop(kernel_id, None)
                continue
            kernel = manager.get_kernel(kernel_id)
            if (not isinstance(connections, dict) or connections.get(kernel_id, 0) > 0
                    or getattr(kernel, "execution_state", "idle") != "idle"):
                continue  # someone watches it, or it runs a cell: the user's now
            self._notebook_sessions.pop(kernel_id, None)
            try:
                await ensure_async(sessions.delete_session(session_id))
            except (KeyError, OSError, RuntimeError, HTTPError) as exc:
                self.log.warning("could not end the idle notebook session %s: %s",
                                 session_id, exc)

    async def shutdown(self) -> None:
        self._closing = True
        pending = [task for tasks in self._pool.values() for task in tasks]
        self._pool.clear()
        for task in pending:
            with contextlib.suppress(Exception):
                self._sessions.add(await asyncio.wait_for(asyncio.shield(task),
                                                          self.start_timeout_seconds))
        sessions = [*self._sessions, *self._borrowed_sessions]
        await asyncio.gather(*(self.stop(session) for session in sessions),
                             return_exceptions=True)
        for manager in self._embedded.values():
            with contextlib.suppress(Exception):
                await manager.shutdown_all(now=True)
        if self._ipc_dir is not None:
            await asyncio.to_thread(shutil.rmtree, self._ipc_dir, True)

    async def status(self) -> dict[str, Any]:
        languages = {}
        for language in LANGUAGES:
            try:
                name, where = await self._placement(language)
                languages[language] = {"available": True, "kernel_name": name, "where": where}
            except KernelError as exc:
                languages[language] = {"available": False, "reason": status_reason(exc)}
        return {
            "hosted": self.runtime.kernel_manager is not None,
            "languages": languages,
            "kernels": len(self._sessions),
            "warm": {lang: sum(t.done() and not t.cancelled() and t.exception() is None
                               for t in tasks)
                     for lang, tasks in self._pool.items()},
            "warming": {lang: sum(not t.done() for t in tasks)
                        for lang, tasks in self._pool.items()},
            "user_kernels": [{"kernel_id": kernel_id, "notebook": run.options.notebook,
                              "run_id": run.id} for kernel_id, run in self._borrowed.items()],
        }

    # -- users' kernels -------------------------------------------------------------------

    async def find_user_kernel(self, *, kernel_id: str | None,
                               notebook: Path | None) -> UserKernel:
        """Check a run's `kernel_id` / `notebook` (an absolute path) before it is created.

        Synchronous after its last await, so no other run can borrow the kernel before the
        run being created attaches it. Its refusals are the runtime's UserKernelRefused.
        """
        found = await find_user_kernel(self.runtime, kernel_id=kernel_id, notebook=notebook)
        holder = self._borrowed.get(found.kernel_id)
        if holder is not None and not holder.closed:
            raise KernelBorrowed(found.kernel_id, holder.id)
        return found

    async def borrow(self, user_kernel: UserKernel) -> KernelSession:
        """A session on a user's kernel, with the bridge installed (no chdir: the user's
        relative paths keep working)."""
        manager = self.runtime.kernel_manager
        kernel_id = user_kernel.kernel_id
        if not await self._running(manager, kernel_id):
            raise UserKernelNotRunning(kernel_id, self.start_timeout_seconds)
        kernel = manager.get_kernel(kernel_id)
        handle = KernelHandle(manager, user_kernel.kernel_id, kernel.kernel_name, "python",
                              "gateway" if self._remote(manager) else "host", owned=False,
                              notebook=user_kernel.notebook)
        channels = (GatewayChannels(user_kernel.kernel_id, self.log) if self._remote(manager)
                    else ZmqChannels(_client_of_its_own(kernel), self.log))
        session = KernelSession(handle, channels, bridge_timeout=self.bridge_timeout_seconds,
                                max_frame_bytes=self.max_bridge_frame_bytes, log=self.log)
        self._borrowed_sessions.add(session)
        try:
            # Installing the bridge queues behind a cell the user is running: same budget.
            await session.start("", max(self.start_timeout_seconds, self.idle_timeout_seconds))
        except BaseException as exc:
            await self.stop(session)
            if isinstance(exc, KernelError | asyncio.CancelledError):
                raise
            raise UserKernelSilent(user_kernel.kernel_id, str(exc)) from None
        return session

    # -- notebooks' kernels ---------------------------------------------------------------

    async def notebook_kernel(self, api_path: str, kernel_name: str | None,
                              cwd: Path) -> KernelSession:
        """A session on the kernel of the notebook `api_path`, where its cells run.

        Hosted: the kernel of the notebook's session, as JupyterLab shows it; when the
        notebook has none, a session is started through the server's session manager, as
        JupyterLab would, so that the human's view attaches to that kernel when it opens.
        The session is borrowed (never shut down by a run) and has no bridge: the cells are
        the human's. Embedded (no server): a kernel of the run's own, in the notebook's folder.
        """
        manager = self.runtime.kernel_manager
        sessions = getattr(self.runtime.parent, "session_manager", None)
        if manager is None or sessions is None:
            return await self._start("python", cwd, bridge=False)
        found = [s for s in await ensure_async(sessions.list_sessions())
                 if s.get("path") == api_path and s.get("kernel")]
        if found:
            kernel_id = str(found[0]["kernel"]["id"])
        else:
            try:
                model = await asyncio.wait_for(ensure_async(sessions.create_session(
                    path=api_path, name=api_path.rsplit("/", 1)[-1], type="notebook",
                    kernel_name=kernel_name)), self.start_timeout_seconds)
            except (asyncio.TimeoutError, OSError, RuntimeError, NoSuchKernel, HTTPError,
                    KeyError) as exc:
                name = kernel_name or "the default kernel"
                raise KernelDidNotStart("notebook", name, str(exc) or type(exc).__name__,
                                        self._hint("python", manager), started=False) from None
            kernel_id = str(model["kernel"]["id"])
            self._notebook_sessions[kernel_id] = str(model["id"])
        if not await self._running(manager, kernel_id):
            raise UserKernelNotRunning(kernel_id, self.start_timeout_seconds)
        kernel = manager.get_kernel(kernel_id)
        language = await kernel_spec_language(manager.kernel_spec_manager, kernel.kernel_name)
        remote = self._remote(manager)
        handle = KernelHandle(manager, kernel_id, kernel.kernel_name, language,
                              "gateway" if remote else "host", owned=False, notebook=api_path)
        channels = (GatewayChannels(kernel_id, self.log) if remote
                    else ZmqChannels(_client_of_its_own(kernel), self.log))
        session = KernelSession(handle, channels, bridge_timeout=self.bridge_timeout_seconds,
                                max_frame_bytes=self.max_bridge_frame_bytes, log=self.log)
        self._borrowed_sessions.add(session)
        try:
            await session.start("", self.start_timeout_seconds, bridge=False)
        except BaseException as exc:
            await self.stop(session)
            if isinstance(exc, KernelError | asyncio.CancelledError):
                raise
            raise UserKernelSilent(kernel_id, str(exc)) from None
        return session

    async def restart(self, session: KernelSession) -> None:
        """Restart the kernel under `session` (the server's restart, which JupyterLab's
        view follows); the session is stopped, as its interpreter is gone."""
        manager = session.handle.manager
        await self.stop(session)
        if session.owned:  # the run's own kernel is shut down: the next one starts fresh
            return
        try:
            await asyncio.wait_for(ensure_async(manager.restart_kernel(session.kernel_id)),
                                   self.start_timeout_seconds)
        except (asyncio.TimeoutError, OSError, RuntimeError, KeyError, HTTPError) as exc:
            raise UserKernelNotRunning(session.kernel_id, self.start_timeout_seconds) from exc

    # -- kernels for runs -----------------------------------------------------------------

    async def acquire(self, language: str, run: Run) -> KernelSession:
        """A kernel bound to `run`: a warm one when the pool has it, else a new one."""
        session = None
        if run.sandbox.confines("eval"):
            # Confined: a kernel of its own, started under the run's policy (warm ones are not).
            return await self._start(language, run.cwd, sandbox=run.sandbox)
        pool = self._pool.get(language, [])
        while pool and session is None:
            task = pool.pop(0)
            try:
                session = await task
            except Exception:
                self.log.warning("a warm %s kernel failed to start", language, exc_info=True)
        if session is not None and session.dead:
            await self.stop(session)
            session = None
        if session is None:
            session = await self._start(language, run.cwd)
        else:
            try:
                await session.bind(run, self.start_timeout_seconds)
            except BaseException:
                await self.stop(session)
                raise
        # Refill only now: on two cores a second kernel starting beside this one slows it.
        self._refill(language)
        return session

    async def prewarm(self) -> None:
        """Fill the warm pool now and wait until its kernels are ready."""
        for language in self.warm_pool:
            self._refill(language)
        tasks = [task for tasks in self._pool.values() for task in tasks]
        await asyncio.gather(*tasks, return_exceptions=True)

    def _refill(self, language: str) -> None:
        pool = self._pool.setdefault(language, [])
        while (not self._closing and len(pool) < int(self.warm_pool.get(language, 0))
               and len(self._sessions) + sum(not t.done() for t in pool) < self.max_kernels):
            pool.append(asyncio.ensure_future(self._start(language, self.runtime.root_path)))

    async def _running(self, manager: Any, kernel_id: str) -> bool:
        """Whether the server runs `kernel_id`, waiting a while for its restarter to bring a
        dead one back (a kernel killed under a cell is restarted by the server)."""
        deadline = asyncio.get_running_loop().time() + self.start_timeout_seconds
        while kernel_id in manager.list_kernel_ids():
            with contextlib.suppress(KeyError):
                if await ensure_async(manager.get_kernel(kernel_id).is_alive()):
                    return True
            if asyncio.get_running_loop().time() > deadline:
                break
            await asyncio.sleep(_RESTART_POLL_SECONDS)
        return False

    async def stop(self, session: KernelSession) -> None:
        """Shut a kernel down, or leave a user's one (bounded; never raises)."""
        self._sessions.discard(session)
        self._borrowed_sessions.discard(session)
        await session.shutdown()

    async def _start(self, language: str, cwd: Any, *, bridge: bool = True,
                     sandbox: SandboxView | None = None) -> KernelSession:
        if len(self._sessions) >= self.max_kernels:
            raise TooManyKernels(self.max_kernels)
        oom_before = oom_kills()
        try:
            return await self._start_kernel(language, cwd, bridge=bridge, sandbox=sandbox)
        except KernelDidNotStart as exc:
            cause = memory_cause(oom_before)
            if not cause:
                raise
            # Not an installation problem: the machine ran out of memory while it started.
            raise KernelDidNotStart(language, exc.kernel_name, exc.reason + cause,
                                    _MEMORY_HINT, started=exc.started) from None

    async def _start_kernel(self, language: str, cwd: Any, *, bridge: bool,
                            sandbox: SandboxView | None) -> KernelSession:
        kernel_name, where = await self._placement(language)
        manager = self._manager(language)
        kwargs: dict[str, Any] = {"kernel_name": kernel_name}
        policy = sandbox.policy("eval") if sandbox is not None else None
        if sandbox is not None and policy is not None:
            if self._remote(manager):
                raise KernelDidNotStart(language, kernel_name, "this run is sandboxed, and "
                                        "kernels of a gateway cannot be confined here",
                                        "Create the run with sandbox 'off' for eval.",
                                        started=False)
            if self.runtime.kernel_manager is None:  # embedded: our provisioner confines
                launch_kernels_off_the_loop(self)
            kwargs["env"] = {**os.environ, **sandbox.env("eval"), SANDBOX_ENV: policy}
        if self.runtime.kernel_manager is not None:  # the server wants an API path
            kwargs["path"] = cwd.relative_to(self.runtime.root_path).as_posix()
        else:
            kwargs["cwd"] = str(cwd)
        try:
            kernel_id = await asyncio.wait_for(ensure_async(manager.start_kernel(**kwargs)),
                                               self.start_timeout_seconds)
        except (asyncio.TimeoutError, OSError, RuntimeError, NoSuchKernel, HTTPError) as exc:
            raise KernelDidNotStart(language, kernel_name, str(exc),
                                    self._hint(language, manager), started=False) from None
        kernel = manager.get_kernel(kernel_id)
        if policy is not None and not getattr(kernel.provisioner, "sandboxed", False):
            # Another provisioner started it (a kernelspec's own): it runs unconfined. End it.
            with contextlib.suppress(Exception):
                await ensure_async(manager.shutdown_kernel(kernel_id, now=True))
            raise KernelDidNotStart(language, kernel_name, "this run is sandboxed, but the "
                                    "kernel's provisioner is not agent-tools' own, so it could "
                                    "not be confined", "Create the run with sandbox 'off' for "
                                    "eval, or use a kernelspec without a provisioner of its own.",
                                    started=False)
        ready = getattr(kernel, "ready", None)
        if (getattr(manager, "use_pending_kernels", False) and isinstance(ready, asyncio.Future)
                and not ready.done()):
            try:  # a server with pending kernels answers before the kernel is up
                await asyncio.wait_for(asyncio.shield(ready), self.start_timeout_seconds)
            except BaseException as exc:
                with contextlib.suppress(Exception):
                    await ensure_async(manager.shutdown_kernel(kernel_id, now=True))
                if isinstance(exc, asyncio.CancelledError):
                    raise
                raise KernelDidNotStart(language, kernel_name, repr(exc),
                                        self._hint(language, manager), started=False) from None
        handle = KernelHandle(manager, kernel_id, kernel_name, language, where)
        channels = (GatewayChannels(kernel_id, self.log) if self._remote(manager)
                    else ZmqChannels(kernel.client(), self.log))
        session = KernelSession(handle, channels, bridge_timeout=self.bridge_timeout_seconds,
                                max_frame_bytes=self.max_bridge_frame_bytes, log=self.log)
        self._sessions.add(session)
        try:
            await session.start(str(cwd), self.start_timeout_seconds, bridge=bridge)
        except BaseException as exc:
            await self.stop(session)
            if isinstance(exc, KernelError | asyncio.CancelledError):
                raise
            raise KernelDidNotStart(language, kernel_name, str(exc),
                                    self._hint(language, manager), started=True) from None
        return session

    async def _placement(self, language: str) -> tuple[str, str]:
        """(kernelspec name, where it runs) for `language`; `unavailable` when none fits."""
        if language not in LANGUAGES:
            raise UnknownLanguage(language, LANGUAGES)
        specs = self._kernel_spec_manager()
        remote = self._remote(self.runtime.kernel_manager)
        sandbox = self.sandbox_kernel_names.get(language)
        if sandbox and await _has_spec(specs, sandbox):
            return sandbox, "gateway" if remote else "sandbox"
        name = self.kernel_names.get(language, "")
        if not name or not (await _has_spec(specs, name) or (
                name == deno_spec.KERNEL_NAME and not remote
                and await asyncio.to_thread(deno_spec.register_at_first_use, name)
                and await _has_spec(specs, name))):
            raise KernelNotInstalled(language, name,
                                     self._hint(language, self.runtime.kernel_manager))
        return name, "gateway" if remote else "host"

    def _manager(self, language: str) -> Any:
        if self.runtime.kernel_manager is not None:
            return self.runtime.kernel_manager
        transport = self.embedded_python_transport if language == "python" else "tcp"
        if transport not in self._embedded:
            config = Config(self.config)
            config.KernelManager.transport = transport
            # Connection files in Jupyter's runtime directory, not the current one. IPC
            # sockets go beside their connection file, and a socket path past 104-108 bytes
            # fails ("File name too long") under a long home or TMPDIR (macOS's): those go in
            # a short private folder (mkdtemp: mode 0700) under /tmp instead.
            if transport == "ipc":
                connection_dir = self._ipc_dir = tempfile.mkdtemp(
                    prefix="agent-tools-", dir="/tmp" if os.path.isdir("/tmp") else None)
                # Kernels' connection files (their keys): denied as the runtime directory is.
                deny_folders(connection_dir)
            else:
                connection_dir = jupyter_runtime_dir()
                os.makedirs(connection_dir, exist_ok=True)
            self._embedded[transport] = AsyncMultiKernelManager(
                config=config, log=self.log, connection_dir=connection_dir,
                kernel_spec_manager=self._embedded_specs,
            )
        return self._embedded[transport]

    @staticmethod
    def _remote(manager: Any) -> bool:
        """Whether `manager` starts its kernels on a remote kernel gateway."""
        return isinstance(manager, GatewayMappingKernelManager)

    def _hint(self, language: str, manager: Any) -> str:
        if self._remote(manager):
            return ("Check that the kernel gateway (c.GatewayClient.url) is up and can start this "
                    "kernel; status shows the kernels it offers.")
        return _INSTALL_HINT.get(language, "")

    def _kernel_spec_manager(self) -> Any:
        hosted = self.runtime.kernel_manager
        if hosted is not None:
            return hosted.kernel_spec_manager
        return self._embedded_specs


async def _has_spec(specs: Any, name: str) -> bool:
    try:  # a gateway's spec manager answers asynchronously
        spec = await ensure_async(specs.get_kernel_spec(name))
    except (NoSuchKernel, KeyError):
        return False
    except HTTPError as exc:  # only a gateway's spec manager asks over HTTP
        raise GatewayUnreachable(str(exc.log_message or exc)) from None
    return spec is not None


def _client_of_its_own(kernel: Any) -> Any:
    """A client of a user's kernel with a session of its own.

    A kernel manager's clients share its session, and with it the identity of their shell
    and stdin sockets: the kernel would then answer the user's other clients of that manager
    (server-side execution, another extension) on the run's sockets, and the run's on
    theirs, and a closed run would leave them without replies.
    """
    own = Session(key=kernel.session.key, signature_scheme=kernel.session.signature_scheme)
    return kernel.client(session=own)
