"""A real JupyterHub on loopback: its proxy, SimpleLocalProcessSpawner, DummyAuthenticator.

One hub per module (starting it and spawning servers is the slow part). Users alice, bob and
carol (carol's server is the one the idle-culler test may cull); single-user servers run
`jupyterhub-singleuser` from this interpreter with this checkout first on PYTHONPATH, so they
load the agent-tools extension under test. The hub's database, cookie secret and the users'
homes live in a temporary directory; the configurable-http-proxy is the npm one scripts/setup.sh
installs under .tools/node.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

import jupyter_agent_tools
from jupyter_agent_tools.processes import signal_process_group

pytest.importorskip("jupyterhub", reason="jupyterhub is in the test extra")

REPO = Path(jupyter_agent_tools.__file__).resolve().parents[1]
USERS = ("alice", "bob", "carol")
#: Seconds between the single-user servers' activity reports to the hub (default 300).
ACTIVITY_INTERVAL_SECONDS = 1
#: Seconds between the agent-tools extension's checks for work in flight (default 60).
AGENT_ACTIVITY_INTERVAL_SECONDS = 1
#: Seconds a single-user server trusts the hub's last answer about a token (default 300).
TOKEN_CACHE_SECONDS = 2
#: Generous: a spawn imports jupyter_server, JupyterLab and our runtime on 2 shared cores.
SPAWN_TIMEOUT_SECONDS = 90.0

HUB_CONFIG = """
c = get_config()  # noqa: F821 - jupyterhub's config loader provides it
settings = {settings!r}
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = settings["port"]
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = settings["hub_port"]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:%d" % settings["proxy_api_port"]
c.ConfigurableHTTPProxy.command = [settings["proxy"]]
c.ConfigurableHTTPProxy.auth_token = settings["proxy_token"]
c.JupyterHub.db_url = "sqlite:///" + settings["state"] + "/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = settings["state"] + "/cookie_secret"
c.JupyterHub.pid_file = settings["state"] + "/jupyterhub.pid"
c.JupyterHub.allow_named_servers = True
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = settings["password"]
c.Authenticator.allowed_users = set(settings["users"])
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = settings["state"] + "/home/{{username}}"
c.Spawner.cmd = [settings["python"], "-m", "jupyterhub.singleuser"]
c.Spawner.args = [
    "--ServerApp.allow_root=True",
    "--ServerApp.open_browser=False",
    # What this module does not test costs start-up time (four servers on two cores).
    "--ServerApp.jpserver_extensions=jupyter_collaboration=False",
    "--ServerApp.jpserver_extensions=jupyter_server_ydoc=False",
    "--ServerApp.jpserver_extensions=jupyter_server_fileid=False",
    "--ServerApp.jpserver_extensions=jupyter_lsp=False",
    "--ServerApp.jpserver_extensions=jupyter_server_terminals=False",
    "--ServerApp.jpserver_extensions=notebook_shim=False",
    "--LabApp.news_url=None",
    "--LabApp.expose_app_in_browser=True",
    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    "--AgentToolsApp.activity_interval_seconds=%d" % settings["agent_activity_interval"],
    # A server keeps the hub's word on a token this long (default 300 s): a revoked or expired
    # token works until then. docs/jupyterhub.md advises lowering it; the tests see it work.
    "--HubOAuth.cache_max_age=%d" % settings["token_cache_seconds"],
]
c.Spawner.environment = {{
    "PATH": settings["path"],
    "PYTHONPATH": settings["pythonpath"],
    "JUPYTERHUB_ACTIVITY_INTERVAL": str(settings["activity_interval"]),
    "JUPYTER_CONFIG_PATH": settings["jupyter_config"],
}}
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
# The hub's own poll of the proxy's routes stays out of the tests' windows.
c.JupyterHub.last_activity_interval = 3600
c.JupyterHub.services = [{{"name": "test-admin", "api_token": settings["admin_token"]}},
                        {{"name": "culler", "api_token": settings["culler_token"]}}]
c.JupyterHub.load_roles = [
    {{"name": "test-admin", "services": ["test-admin"],
      "scopes": ["admin:users", "admin:servers", "tokens", "read:users:activity"]}},
    # The idle culler's scopes, as its README gives them, confined to carol's servers so
    # that it cannot stop the servers the other tests use.
    {{"name": "culler", "services": ["culler"],
      "scopes": ["list:users!user=carol", "read:users:activity!user=carol",
                 "read:servers!user=carol", "delete:servers!user=carol"]}},
]
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Hub:
    """A running JupyterHub: its public URL, an admin client, and helpers over its REST API.

    `users` are the hub's allowed users; `server_config` is merged (section by section) into
    the single-user servers' JSON config (benchmarks/bench_hub.py uses both)."""

    def __init__(self, state: Path, users: Sequence[str] = USERS,
                 server_config: dict[str, dict[str, Any]] | None = None) -> None:
        self.state = state
        self.users = tuple(users)
        self.server_config = server_config or {}
        self.password = secrets.token_hex(8)
        self.admin_token = secrets.token_hex(24)
        self.culler_token = secrets.token_hex(24)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.api_url = f"{self.url}/hub/api"
        self.log_path = state / "hub.log"
        self._process: subprocess.Popen[bytes] | None = None
        self.admin = httpx.Client(base_url=self.api_url, timeout=60,
                                  headers={"Authorization": f"token {self.admin_token}"})

    def start(self) -> Hub:
        proxy = shutil.which("configurable-http-proxy") or str(
            REPO / ".tools/node/node_modules/.bin/configurable-http-proxy")
        if not os.access(proxy, os.X_OK):
            pytest.skip("configurable-http-proxy is absent: run scripts/setup.sh (npm)")
        settings = {
            "port": self.port, "hub_port": free_port(), "proxy_api_port": free_port(),
            "proxy": proxy, "proxy_token": secrets.token_hex(24), "state": str(self.state),
            "password": self.password, "users": list(self.users), "python": sys.executable,
            "path": os.environ.get("PATH", "/usr/bin:/bin"),
            "pythonpath": os.pathsep.join(
                [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]),
            "activity_interval": ACTIVITY_INTERVAL_SECONDS,
            "token_cache_seconds": TOKEN_CACHE_SECONDS,
            "agent_activity_interval": AGENT_ACTIVITY_INTERVAL_SECONDS,
            "admin_token": self.admin_token, "culler_token": self.culler_token,
        }
        # The single-user servers' own config: workers are tests/workers' scripted program,
        # which reaches its server at JUPYTER_SERVER_URL (with the hub's prefix) by itself.
        jupyter_config = self.state / "jupyter-config"
        jupyter_config.mkdir()
        worker = [sys.executable, str(REPO / "tests/workers/scripted_agent.py")]
        server_config: dict[str, dict[str, Any]] = {
            "WorkerPool": {"backend": "command"},
            "CommandBackend": {"argv": {"fast": worker, "good": worker}}}
        for section, values in self.server_config.items():
            server_config[section] = {**server_config.get(section, {}), **values}
        (jupyter_config / "jupyter_server_config.json").write_text(json.dumps(server_config))
        settings["jupyter_config"] = str(jupyter_config)
        config = self.state / "jupyterhub_config.py"
        config.write_text(HUB_CONFIG.format(settings=settings))
        with open(self.log_path, "wb") as log:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "jupyterhub", "-f", str(config)], cwd=self.state,
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True)
        self._wait(lambda: httpx.get(f"{self.api_url}/", timeout=5).status_code == 200,
                   "the hub to answer")
        return self

    def stop(self) -> None:
        if self._process is None:
            return
        # The hub stops the servers it spawned, then itself. Each server runs in a session of
        # its own: one the hub failed to stop is killed by its group, as the hub's own is.
        server_pids = []
        with contextlib.suppress(httpx.HTTPError):
            for user in self.admin.get("/users").json():
                server_pids += [int(server["state"]["pid"]) for server
                                in user.get("servers", {}).values() if server.get("state")]
        self._process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(30)
        for pgid in [self._process.pid, *server_pids]:
            signal_process_group(pgid)
        self._process = None
        self.admin.close()

    def log_tail(self, chars: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:]

    def _wait(self, ready: Any, what: str, timeout: float = SPAWN_TIMEOUT_SECONDS) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process is not None and self._process.poll() is not None:
                raise AssertionError(f"the hub exited while waiting for {what}:\n{self.log_tail()}")
            try:
                if ready():
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}:\n{self.log_tail()}")

    # -- the hub's REST API ------------------------------------------------------------------

    def user(self, name: str) -> dict[str, Any]:
        response = self.admin.get(f"/users/{name}")
        response.raise_for_status()
        return response.json()

    def server(self, user: str, server: str = "") -> dict[str, Any] | None:
        return self.user(user)["servers"].get(server)

    def wait_activity_since(self, user: str, moment: datetime, server: str = "") -> None:
        """Until the hub has heard of `user`'s server being active at `moment` or later (the
        single-user server reports once an activity interval has passed)."""
        def heard() -> bool:
            reported = (self.server(user, server) or {}).get("last_activity")
            return reported is not None and datetime.fromisoformat(
                reported.replace("Z", "+00:00")) >= moment
        self._wait(heard, f"the hub to hear of {user}'s activity since {moment}")

    def request_spawn(self, user: str, server: str = "") -> None:
        path = f"/users/{user}/servers/{server}" if server else f"/users/{user}/server"
        response = self.admin.post(path)
        assert response.status_code in (201, 202), response.text

    def wait_ready(self, user: str, server: str = "") -> dict[str, Any]:
        self._wait(lambda: (self.server(user, server) or {}).get("ready"),
                   f"{user}'s server {server!r} to be ready")
        info = self.server(user, server)
        assert info is not None
        return info

    def spawn(self, user: str, server: str = "") -> dict[str, Any]:
        self.request_spawn(user, server)
        return self.wait_ready(user, server)

    def stop_server(self, user: str, server: str = "") -> None:
        path = f"/users/{user}/servers/{server}" if server else f"/users/{user}/server"
        response = self.admin.delete(path)
        assert response.status_code in (202, 204), response.text
        self.wait_stopped(user, server)

    def wait_stopped(self, user: str, server: str = "",
                     timeout: float = SPAWN_TIMEOUT_SECONDS) -> None:
        self._wait(lambda: self.server(user, server) is None,
                   f"{user}'s server {server!r} to stop", timeout)

    def token(self, user: str, scopes: list[str], expires_in: int | None = None) -> str:
        """A new API token of `user`, limited to `scopes`."""
        return self.token_model(user, scopes, expires_in)["token"]

    def token_model(self, user: str, scopes: list[str],
                    expires_in: int | None = None) -> dict[str, Any]:
        """A new API token of `user` as the hub describes it: `token`, `id`, `expires_at`..."""
        body: dict[str, Any] = {"scopes": scopes, "note": "agent-tools hub test"}
        if expires_in is not None:
            body["expires_in"] = expires_in
        response = self.admin.post(f"/users/{user}/tokens", json=body)
        assert response.status_code == 201, response.text
        return response.json()

    def revoke(self, user: str, token_id: str) -> None:
        response = self.admin.delete(f"/users/{user}/tokens/{token_id}")
        assert response.status_code == 204, response.text

    @contextmanager
    def login(self, user: str) -> Iterator[httpx.Client]:
        """A browser-like client logged in to the hub as `user` (it keeps and sends cookies,
        and follows redirects, the hub's OAuth ones among them). Logged in to the hub only:
        a server's own cookie comes from the OAuth dance on the first visit."""
        with httpx.Client(base_url=self.url, follow_redirects=True, timeout=60) as client:
            client.get("/hub/login")
            response = client.post("/hub/login", data={
                "username": user, "password": self.password,
                "_xsrf": client.cookies.get("_xsrf", path="/hub/") or ""},
                follow_redirects=False)
            assert response.status_code == 302, response.text[:500]
            yield client


def agent_api(client: httpx.Client, prefix: str, method: str, path: str,
              body: Any = None, **kwargs: Any) -> httpx.Response:
    """`method` on `{prefix}agent-tools/api/{path}` (prefix is a server's, e.g. /user/alice/)."""
    content = None if body is None else json.dumps(body)
    return client.request(method, f"{prefix}agent-tools/api/{path}", content=content, **kwargs)
