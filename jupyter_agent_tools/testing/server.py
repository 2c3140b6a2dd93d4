"""A real `jupyter server` with the agent-tools extension, on loopback, in a child process.

What the regression plugin, the tour test and notebooks' kernels talk to. The server gets a
fresh token, an OS-chosen port on 127.0.0.1, and its own runtime directory (so it never shows
up among the user's running servers); stopping it sends SIGTERM (the server releases every
run) and kills the whole process group if it lingers, so nothing it started outlives it.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from ..client import AgentToolsClient
from ..processes import signal_process_group

#: Environment variables a notebook kernel reads to find the server (see `regression_run`).
ENV_URL, ENV_TOKEN, ENV_ROOT = "JUPYTER_SERVER_URL", "JUPYTER_TOKEN", "AGENT_TOOLS_ROOT_DIR"


class ServerStartError(RuntimeError):
    """The server did not come up; the message carries the tail of its log."""


class JupyterServerProcess:
    """Start with `start()` (or `with`), talk to it through `client()`, stop with `stop()`."""

    def __init__(self, root_dir: Path | str, *, startup_timeout: float = 90.0,
                 extra_args: list[str] | None = None, env: dict[str, str] | None = None,
                 launcher: list[str] | None = None) -> None:
        self.root_dir = Path(root_dir).resolve()
        #: Run before the server, which it must `exec` (same pid): e.g. a shell that moves
        #: itself into a memory cgroup first.
        self.launcher = list(launcher or [])
        self.startup_timeout = startup_timeout
        self.extra_args = list(extra_args or [])
        self.extra_env = dict(env or {})
        self.token = secrets.token_hex(24)
        self.url = ""
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._log_path: Path | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> JupyterServerProcess:
        self._scratch = tempfile.TemporaryDirectory(prefix="agent-tools-server-")
        scratch = Path(self._scratch.name)
        runtime_dir = scratch / "runtime"
        runtime_dir.mkdir()
        self._log_path = scratch / "server.log"
        env = {**os.environ, **self.extra_env, "JUPYTER_RUNTIME_DIR": str(runtime_dir)}
        argv = [
            *self.launcher,
            sys.executable, "-m", "jupyter_server",
            "--ServerApp.ip=127.0.0.1",
            "--ServerApp.port=0",
            "--ServerApp.port_retries=0",
            "--ServerApp.open_browser=False",
            "--ServerApp.allow_root=True",
            f"--ServerApp.root_dir={self.root_dir}",
            f"--IdentityProvider.token={self.token}",
            "--ServerApp.jpserver_extensions=jupyter_agent_tools=True",
            *self.extra_args,
        ]
        if not any(arg.startswith("--Runtime.run_store_path") for arg in self.extra_args):
            # Not the user's own data directory: a run store of its own, gone with it.
            argv.append(f"--Runtime.run_store_path={scratch / 'runs.sqlite3'}")
        if not any(arg.startswith("--AgentTokens.path") for arg in self.extra_args):
            # Nor the user's agent tokens: a token file of its own.
            argv.append(f"--AgentTokens.path={scratch / 'tokens.sqlite3'}")
        with open(self._log_path, "wb") as log:
            # A session of its own: stop() can reach every process the server started.
            self._process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, env=env,
                                             start_new_session=True)
        try:
            self.url = self._wait_until_ready(runtime_dir)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_until_ready(self, runtime_dir: Path) -> str:
        assert self._process is not None
        deadline = time.monotonic() + self.startup_timeout
        info_file = runtime_dir / f"jpserver-{self._process.pid}.json"
        url = ""
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise ServerStartError(f"jupyter server exited with {self._process.returncode}.\n"
                                       f"{self.log_tail()}")
            if not url and info_file.exists():
                try:
                    url = json.loads(info_file.read_text())["url"]
                except (ValueError, KeyError):
                    url = ""  # written but not complete yet
            if url and self._answers_status(url):
                return url
            time.sleep(0.1)
        raise ServerStartError(f"jupyter server did not answer within {self.startup_timeout:.0f} s."
                               f"\n{self.log_tail()}")

    def _answers_status(self, url: str) -> bool:
        try:
            response = httpx.get(url.rstrip("/") + "/agent-tools/api/status",
                                 headers={"Authorization": f"token {self.token}"}, timeout=10)
        except httpx.HTTPError:
            return False
        return response.status_code == 200

    def terminate(self, timeout: float = 30.0) -> None:
        """SIGTERM the server process alone and wait until it exits, as a graceful stop does
        it (its log stays readable until `stop`, which removes its scratch folder)."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            self._process.wait(timeout)

    def crash(self) -> None:
        """`kill -9` the server process alone, as a crash would end it (what it started is
        left running until `stop`, which also removes its scratch folder)."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()

    def stop(self, timeout: float = 30.0) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        if process is not None:
            signal_process_group(process.pid)  # what is left: servers, kernels, adapters
            process.wait()
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None

    def __enter__(self) -> JupyterServerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- talking to it ------------------------------------------------------------------------

    def client(self, timeout: float = 600.0) -> AgentToolsClient:
        return AgentToolsClient(self.url, self.token, timeout=timeout)

    @property
    def runtime_dir(self) -> Path | None:
        """The server's own runtime directory (its kernels' connection files), while it runs."""
        return Path(self._scratch.name) / "runtime" if self._scratch is not None else None

    def kernel_env(self) -> dict[str, str]:
        """What a kernel needs to reach this server (read by `regression_run`)."""
        return {ENV_URL: self.url, ENV_TOKEN: self.token, ENV_ROOT: str(self.root_dir)}

    def log_tail(self, max_chars: int = 4_000) -> str:
        if self._log_path is None or not self._log_path.exists():
            return "(no server log)"
        text = self._log_path.read_text(errors="replace")
        return text[-max_chars:]

