"""A small HTTP client for the agent-tools API: what notebooks, workers and scripts use.

    client = AgentToolsClient.discover()          # the running Jupyter server
    run = client.create_run(cwd=".", surface="full")
    result = run.call("read", {"path": "README.md"})
    assert result.ok, result.error
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import httpx

from .runtime.results import ToolResult


class AgentToolsHTTPError(RuntimeError):
    """A route answered with an HTTP error; `code` and `message` come from its JSON body."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"HTTP {status} [{code}]: {message}")
        self.status = status
        self.code = code
        self.message = message


class AgentToolsClient:
    """Talks to agent-tools/api/ on one Jupyter server with a token."""

    def __init__(self, url: str, token: str = "", *, timeout: float = 600.0) -> None:
        self.url = url.rstrip("/") + "/"
        self.token = token
        headers = {"Authorization": f"token {token}"} if token else {}
        self._http = httpx.Client(base_url=self.url + "agent-tools/api/", headers=headers,
                                  timeout=timeout)

    @classmethod
    def discover(cls, url: str | None = None, token: str | None = None) -> AgentToolsClient:
        """Find the server: explicit arguments, else JUPYTER_SERVER_URL / JUPYTER_TOKEN, else
        the newest running server of this user (jupyter_server's runtime files)."""
        url = url or os.environ.get("JUPYTER_SERVER_URL")
        token = token if token is not None else os.environ.get("JUPYTER_TOKEN")
        if not url:
            from jupyter_server.serverapp import list_running_servers

            servers = sorted(list_running_servers(), key=lambda s: s.get("pid", 0))
            if not servers:
                raise RuntimeError(
                    "No running Jupyter server found. Start one (jupyter lab) or pass url= and token=."
                )
            # In a notebook kernel, the server that started it (our parent) is the one.
            parent = [s for s in servers if s.get("pid") == os.getppid()]
            info = (parent or servers)[-1]
            url, token = info["url"], token if token is not None else info.get("token", "")
        return cls(url, token or "")

    def request(self, method: str, path: str, body: dict[str, Any] | None = None,
                **params: Any) -> Any:
        response = self._http.request(method, path, json=body, params=params or None)
        if response.status_code >= 400:
            try:
                error = response.json().get("error") or {}
            except ValueError:
                error = {}
            raise AgentToolsHTTPError(response.status_code, error.get("code", "http_error"),
                                      error.get("message", response.text[:500]))
        return response.json() if response.content else None

    def status(self) -> dict[str, Any]:
        return self.request("GET", "status")

    def create_run(self, **options: Any) -> RemoteRun:
        """Create a run (options as in the contract: cwd, surface, approvals, space, ...;
        `origin="notebook"` for a notebook's run, "http" otherwise)."""
        descriptor = self.request("POST", "runs", options)
        return RemoteRun(self, descriptor["id"], descriptor)

    def attach_run(self, run_id: str) -> RemoteRun:
        return RemoteRun(self, run_id, self.request("GET", f"runs/{run_id}"))

    def close(self) -> None:
        self._http.close()


@dataclass
class RemoteRun:
    """A run on the server, called over HTTP."""

    client: AgentToolsClient
    id: str
    descriptor: dict[str, Any]

    def call(self, tool: str, args: dict[str, Any] | None = None) -> ToolResult:
        payload = self.client.request("POST", f"runs/{self.id}/calls", {"tool": tool, "args": args or {}})
        return ToolResult.from_json(payload)

    def tool_names(self) -> list[str]:
        return sorted(s["name"] for s in self.schemas())

    def schemas(self, format: str = "json") -> list[dict[str, Any]]:
        return self.client.request("GET", f"runs/{self.id}/tools", format=format)

    def transcript(self) -> list[dict[str, Any]]:
        return self.client.request("GET", f"runs/{self.id}/transcript")

    def questions(self) -> list[dict[str, Any]]:
        return self.client.request("GET", f"runs/{self.id}/questions")

    def answer(self, question_id: str, **answer: Any) -> Any:
        """Answer a card: answer="label" / answer=[...] / text="..." / skip=True."""
        return self.client.request("POST", f"runs/{self.id}/questions/{question_id}", answer)

    def edits(self) -> list[dict[str, Any]]:
        return self.client.request("GET", f"runs/{self.id}/edits")

    def close(self) -> None:
        self.client.request("DELETE", f"runs/{self.id}")
