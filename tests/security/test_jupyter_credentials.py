"""Jupyter's own credentials are out of reach of every file tool (`path_denied`, counted as
`denied` by searches), and a request without a valid token answers 401 saying what to send.

A real server whose root is a home folder, as it is when someone runs `jupyter lab` in ~: its
runtime directory (server info and kernel connection files) and `.jupyter/` (the config that
holds its token, jupyter-ai's `mcp_settings.json`) are under the root.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

SECRET = "f0e1d2c3b4a5968778695a4b3c2d1e0f"  # the token and signing key the files hold
_MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def jp_root_dir(jp_home_dir):
    """The server's root is the home folder."""
    return jp_home_dir


@pytest.fixture
def jp_runtime_dir(jp_home_dir):
    """Jupyter's runtime directory where it is by default: under the home folder."""
    directory = jp_home_dir / ".local" / "share" / "jupyter" / "runtime"
    directory.mkdir(parents=True)
    return directory


@pytest.fixture
def jp_config_dir(jp_home_dir):
    directory = jp_home_dir / ".jupyter"
    directory.mkdir()
    return directory


@pytest.fixture
def home(jp_serverapp, jp_home_dir, jp_runtime_dir, jp_config_dir) -> Path:
    """The home folder with the files a user's server has there, and a project."""
    token = jp_serverapp.identity_provider.token
    assert Path(jp_serverapp.runtime_dir).resolve() == jp_runtime_dir.resolve()
    (jp_runtime_dir / "jpserver-4242.json").write_text(json.dumps(
        {"url": "http://localhost:8888/", "token": token, "secret": SECRET, "pid": 4242}))
    (jp_runtime_dir / "jpserver-4242-open.html").write_text(f"<a href='?token={SECRET}'>")
    (jp_runtime_dir / "kernel-0a1b2c.json").write_text(json.dumps(
        {"shell_port": 50001, "key": SECRET, "signature_scheme": "hmac-sha256"}))
    (jp_runtime_dir / "kernel-0a1b2c.py").write_text(f"key = {SECRET!r}\n")
    (jp_config_dir / "mcp_settings.json").write_text(json.dumps({"mcpServers": {"agent-tools": {
        "url": "http://localhost:8888/agent-tools/mcp",
        "headers": [{"name": "Authorization", "value": f"token {SECRET}"}]}}}))
    (jp_config_dir / "jupyter_server_config.json").write_text(json.dumps(
        {"IdentityProvider": {"token": SECRET}}))
    (jp_config_dir / "jupyter_server_config.py").write_text(
        f"c.IdentityProvider.token = {SECRET!r}\n")
    project = jp_home_dir / "project"
    project.mkdir()
    (project / "main.py").write_text(f"TOKEN_NAME = 'not the {SECRET[:8]}'\nvalue = 1\n")
    (project / "jupyter_server_config.py").write_text(f"c.ServerApp.token = {SECRET!r}\n")
    (project / ".jupyter").mkdir()
    (project / ".jupyter" / "mcp_settings.json").write_text(f'{{"token": "{SECRET}"}}')
    (project / "runtime-link").symlink_to(jp_runtime_dir)
    (project / "key-link.json").symlink_to(jp_runtime_dir / "kernel-0a1b2c.json")
    return jp_home_dir


@pytest.fixture
def call(api, home):
    """`await call(surface)` → a function calling tools in a new run of that surface."""

    async def open_run(surface: str):
        code, run = await api("POST", "runs", {"surface": surface})
        assert code == 201, run

        async def tool(name: str, args: dict) -> dict:
            code, result = await api("POST", f"runs/{run['id']}/calls",
                                     {"tool": name, "args": args})
            assert code == 200, result
            assert SECRET not in json.dumps(result), (name, args)
            return result

        return tool

    return open_run


DENIED_PATHS = [
    ".local/share/jupyter/runtime/jpserver-4242.json",
    ".local/share/jupyter/runtime/kernel-0a1b2c.json",
    ".local/share/jupyter/runtime",
    ".jupyter/mcp_settings.json",
    ".jupyter/jupyter_server_config.json",
    ".jupyter/jupyter_server_config.py",
    "project/jupyter_server_config.py",
    "project/.jupyter/mcp_settings.json",
    "project/runtime-link/kernel-0a1b2c.json",  # through a link into the runtime directory
    "project/key-link.json",
]


def _denied(result: dict) -> bool:
    return result["ok"] is False and result["error"]["code"] == "path_denied"


@pytest.mark.parametrize("surface", ["readonly", "full"])
async def test_reads_and_searches_are_refused_or_leave_them_out(call, home, surface):
    tool = await call(surface)
    for path in [*DENIED_PATHS, str(home / DENIED_PATHS[0])]:
        refused = await tool("read", {"path": path})
        assert _denied(refused), (path, refused)
        assert "credentials" in refused["error"]["message"]
    # A tool's own path argument, for each tool that takes one.
    assert _denied(await tool("grep", {"pattern": "token", "path": ".jupyter/mcp_settings.json"}))
    assert _denied(await tool("glob", {"pattern": "*", "path": ".local/share/jupyter/runtime"}))
    assert _denied(await tool("ast_grep", {"pattern": "c.IdentityProvider.token = $V",
                                           "path": ".jupyter/jupyter_server_config.py"}))
    assert _denied(await tool("lsp", {"action": "symbols",
                                      "file": ".jupyter/jupyter_server_config.py"}))
    if surface == "full":  # a readonly run has no notebook tool
        assert _denied(await tool("notebook", {"action": "run_all",
                                               "path": ".local/share/jupyter/runtime/x.ipynb"}))

    # Searches from the home folder: the rest is found, the credentials left out and counted
    # (with `hidden`: they are in hidden folders, which searches otherwise skip).
    hidden = {"hidden": True}
    skipping = await tool("grep", {"pattern": SECRET[:8]})
    assert [m["file"] for m in skipping["data"]["matches"]] == ["project/main.py"], skipping
    assert skipping["data"]["skipped"]["hidden"] >= 2, skipping["data"]["skipped"]
    found = await tool("grep", {"pattern": SECRET[:8]} | hidden)
    assert found["ok"], found
    assert [m["file"] for m in found["data"]["matches"]] == ["project/main.py"], found
    assert found["data"]["skipped"]["denied"] >= 5, found["data"]["skipped"]
    assert "denied" in found["text"]
    with_glob = await tool("grep", {"pattern": SECRET[:8], "glob": "*.json"} | hidden)
    assert with_glob["data"]["matches"] == [] and with_glob["data"]["skipped"]["denied"] >= 1
    listed = await tool("glob", {"pattern": "**/*"} | hidden)
    files = listed["data"]["files"]
    assert "project/main.py" in files, files
    assert not [f for f in files if "runtime" in f or "config" in f or "mcp_settings" in f], files
    assert listed["data"]["skipped"]["denied"] >= 5, listed["data"]["skipped"]
    # Starting above the runtime directory: the walk does not enter it.
    below = await tool("glob", {"pattern": "**/*", "path": ".local/share/jupyter"})
    assert below["data"]["files"] == [] and below["data"]["skipped"]["denied"] == 1, below
    below = await tool("grep", {"pattern": SECRET[:8], "path": ".local"})
    assert below["data"]["matches"] == [] and below["data"]["skipped"]["denied"] == 1, below
    ast = await tool("ast_grep", {"pattern": "$C.token = $V", "language": "python"} | hidden)
    assert ast["ok"] and ast["data"]["matches"] == [], ast
    assert ast["data"]["skipped"]["denied"] >= 1, ast["data"]["skipped"]
    value = await tool("ast_grep", {"pattern": "value = $V", "language": "python"})
    assert [m["file"] for m in value["data"]["matches"]] == ["project/main.py"], value


async def test_writes_are_refused_and_change_nothing(call, home):
    tool = await call("full")
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file() and not p.is_symlink()}
    for path in DENIED_PATHS:
        if path.endswith("runtime"):
            continue
        assert _denied(await tool("write", {"path": path, "content": "{}"})), path
        assert _denied(await tool("edit", {"path": path, "old_string": SECRET,
                                           "new_string": "x"})), path
    for new in [".local/share/jupyter/runtime/kernel-evil.json", "elsewhere/jupyter_config.py",
                "elsewhere/jupyter_server_config.d/evil.json", "p/.jupyter/mcp_settings.json"]:
        assert _denied(await tool("write", {"path": new, "content": "{}"})), new
        assert not (home / new).exists()
    assert _denied(await tool("notebook", {"action": "insert", "source": "1",
                                           "path": ".jupyter/jupyter_server_config.json"}))
    for target in [".local/share/jupyter/runtime/kernel-x.json", "a/jupyter_config.json"]:
        assert _denied(await tool("apply_patch", {
            "patch": f"--- /dev/null\n+++ b/{target}\n@@ -0,0 +1 @@\n+{{}}\n"})), target
    after = {p: p.read_bytes() for p in home.rglob("*") if p.is_file() and not p.is_symlink()}
    assert after == before


async def test_over_mcp_a_readonly_run_cannot_read_them(mcp_url, auth_headers, home):
    async with httpx2.AsyncClient(headers=auth_headers, timeout=60) as http, \
            streamable_http_client(mcp_url(surface="readonly"), http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        refused = await session.call_tool("read", {"path": ".jupyter/mcp_settings.json"})
        assert refused.is_error and refused.structured_content["error"]["code"] == "path_denied"
        found = await session.call_tool("grep", {"pattern": SECRET[:8], "hidden": True})
        assert SECRET not in json.dumps(found.model_dump(mode="json"))
        assert found.structured_content["skipped"]["denied"] >= 5


# -- 401 for a missing or wrong token ---------------------------------------------------------


def _mcp_error(exc: BaseException) -> MCPError:
    """The MCPError the SDK raised, out of the exception groups of its task groups."""
    while len(getattr(exc, "exceptions", ())) == 1:  # an ExceptionGroup of one
        exc = exc.exceptions[0]
    assert isinstance(exc, MCPError), repr(exc)
    return exc


def _says_what_to_send(message: str) -> bool:
    return "Authorization: token <token>" in message and "jupyter server list" in message \
        and "Connect an agent" in message and "_xsrf" not in message


@pytest.mark.parametrize("token", [None, "wrong-token"])
async def test_api_without_a_valid_token_is_401_saying_what_to_send(
        mcp_url, runtime_of, token):
    headers = {} if token is None else {"Authorization": f"token {token}"}
    before = set(runtime_of.runs)
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        for method, path in [("POST", "agent-tools/api/runs"), ("GET", "agent-tools/api/runs"),
                             ("DELETE", "agent-tools/api/runs/" + "0" * 32)]:
            response = await http.request(method, mcp_url(path), json={} if method == "POST"
                                          else None)
            assert response.status_code == 401, (method, path, response.text)
            assert response.headers["WWW-Authenticate"].startswith("Bearer")
            error = response.json()["error"]
            assert error["code"] == "permission_denied" and _says_what_to_send(error["message"])
        # ?token= that is wrong: the same.
        response = await http.post(mcp_url("agent-tools/api/runs", token="nope"), json={})
        assert response.status_code == 401
    assert set(runtime_of.runs) == before


@pytest.mark.parametrize("token", [None, "wrong-token"])
async def test_mcp_without_a_valid_token_is_401_the_client_shows(mcp_url, runtime_of, token):
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    before = set(runtime_of.runs)
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        raw = await http.post(mcp_url(), headers=_MCP_HEADERS, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}})
        assert raw.status_code == 401 and raw.headers["WWW-Authenticate"].startswith("Bearer")
        assert raw.headers["Content-Type"].startswith("application/json")
        assert _says_what_to_send(raw.json()["error"]["message"])
        with pytest.raises(Exception) as refused:
            async with streamable_http_client(mcp_url(), http_client=http) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
        error = _mcp_error(refused.value)
        assert _says_what_to_send(error.message), error
    assert set(runtime_of.runs) == before


async def test_a_browser_session_still_needs_xsrf(jp_serverapp, mcp_url, runtime_of):
    """A cookie-authenticated POST without the XSRF token is refused (403), as before; with it,
    it goes through."""
    token = jp_serverapp.identity_provider.token
    before = set(runtime_of.runs)
    async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as browser:
        login = mcp_url("login")
        page = await browser.get(login)
        xsrf = browser.cookies.get("_xsrf") or page.cookies.get("_xsrf")
        assert xsrf
        logged_in = await browser.post(login, data={"password": token, "_xsrf": xsrf})
        assert logged_in.status_code in (302, 303), logged_in.text
        assert (await browser.get(mcp_url("agent-tools/api/runs"))).status_code == 200
        forged = await browser.post(mcp_url("agent-tools/api/runs"), json={})
        assert forged.status_code == 403, forged.text
        assert "xsrf" in forged.text.lower()
        forged_mcp = await browser.post(mcp_url(), headers=_MCP_HEADERS, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
        assert forged_mcp.status_code == 403
        assert set(runtime_of.runs) == before
        allowed = await browser.post(mcp_url("agent-tools/api/runs"), json={},
                                     headers={"X-XSRFToken": xsrf})
        assert allowed.status_code == 201, allowed.text
