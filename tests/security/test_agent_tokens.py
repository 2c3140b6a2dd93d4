"""Agent tokens: minted by the user, each with a ceiling and an expiry; they reach the agent-tools
routes only, open and join runs only within their ceiling, and see only the runs opened with them.

A real Jupyter server (in-process, and a child process for restarts), the real CLI, MCP's SDK
client.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import httpx
import httpx2
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.websocket import websocket_connect

from jupyter_agent_tools.agent_tokens import Ceiling, TokenStore
from jupyter_agent_tools.runtime import Approvals, Surface
from jupyter_agent_tools.testing.server import JupyterServerProcess

BIN = Path(sys.executable).parent
WAIT = 60  # seconds: a bound on waits that should end soon, never an assertion
_MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
_INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "t", "version": "0"}}}


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "jupyter"), "agent-tools", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def url(jp_http_port, jp_base_url, http_server_client):
    def make(path: str, **query: str) -> str:
        suffix = f"?{urlencode(query)}" if query else ""
        return f"http://localhost:{jp_http_port}{jp_base_url}{path}{suffix}"
    return make


@pytest.fixture
def user(jp_serverapp, jp_asyncio_loop):
    """The user's client: the server's own token."""
    token = jp_serverapp.identity_provider.token
    client = httpx.AsyncClient(headers={"Authorization": f"token {token}"}, timeout=WAIT)
    yield client
    jp_asyncio_loop.run_until_complete(client.aclose())


@pytest.fixture
def data(jp_root_dir):
    (Path(jp_root_dir) / "data" / "sub").mkdir(parents=True)
    (Path(jp_root_dir) / "data" / "a.txt").write_text("in data\n")
    (Path(jp_root_dir) / "secret.txt").write_text("outside data\n")
    return Path(jp_root_dir) / "data"


@pytest.fixture
def mint(user, url):
    async def make(**ceiling) -> tuple[str, str]:
        body = {"label": "test", "surface": "readonly", "approvals": "ask", **ceiling}
        created = await user.post(url("agent-tools/api/tokens"), json=body)
        assert created.status_code == 201, created.text
        return created.json()["id"], created.json()["token"]
    return make


def agent(token: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(headers={"Authorization": f"token {token}"}, timeout=WAIT)


# -- the CLI -----------------------------------------------------------------------------------


def test_cli_creates_lists_and_revokes_tokens_stored_hashed(tmp_path):
    store = tmp_path / "data" / "tokens.sqlite3"
    created = cli("token", "--file", str(store), "create", "--surface", "readonly",
                  "--approvals", "ask", "--cwd", "data/", "--expires", "7d", "--label", "ci",
                  cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip()
    assert token.startswith("jat_") and "\n" not in token
    assert "surface readonly" in created.stderr and "'data'" in created.stderr
    # Stored hashed, in a file only its user may read.
    assert token.encode() not in store.read_bytes()
    assert token.split("_", 2)[2].encode() not in store.read_bytes()  # the secret (it may hold "_")
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    listed = cli("token", "--file", str(store), "list", "--json", cwd=tmp_path)
    [entry] = json.loads(listed.stdout)
    assert token not in listed.stdout
    assert (entry["label"], entry["surface"], entry["approvals"], entry["cwd"]) == \
        ("ci", "readonly", "ask", "data")
    assert 7 * 86_400 - 60 < entry["expires_at"] - time.time() <= 7 * 86_400
    assert TokenStore(store).verify(token) is not None
    revoked = cli("token", "--file", str(store), "revoke", entry["id"], cwd=tmp_path)
    assert revoked.returncode == 0 and entry["id"] in revoked.stdout
    assert TokenStore(store).verify(token) is None
    assert json.loads(cli("token", "--file", str(store), "list", "--json", cwd=tmp_path).stdout) == []
    assert cli("token", "--file", str(store), "revoke", entry["id"], cwd=tmp_path).returncode == 1
    # Bad usage: exit 2, nothing made.
    for bad in (["--surface", "everything", "--approvals", "ask"],
                ["--surface", "full", "--approvals", "ask", "--cwd", "../up"],
                ["--surface", "full", "--approvals", "ask", "--expires", "soon"]):
        assert cli("token", "--file", str(store), "create", *bad, cwd=tmp_path).returncode == 2
    assert TokenStore(store).tokens() == []


def test_the_cli_writes_jupyters_data_directory_by_default(tmp_path):
    env_data = tmp_path / "jupyter-data"
    created = subprocess.run(
        [str(BIN / "jupyter"), "agent-tools", "token", "create", "--surface", "plan",
         "--approvals", "deny"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "JUPYTER_DATA_DIR": str(env_data)})
    assert created.returncode == 0, created.stderr
    store = env_data / "agent_tools" / "tokens.sqlite3"
    assert TokenStore(store).verify(created.stdout.strip()) is not None


# -- minting, over HTTP ----------------------------------------------------------------------


async def test_the_user_mints_lists_and_revokes_tokens_in_jupyters_data_dir(
        user, url, mint, jp_data_dir, jp_root_dir):
    token_id, token = await mint(surface="plan", approvals="deny", cwd="data/", space="lab",
                                 expires_seconds=3600)
    listed = (await user.get(url("agent-tools/api/tokens"))).json()
    assert [t["id"] for t in listed] == [token_id] and token not in json.dumps(listed)
    assert (listed[0]["surface"], listed[0]["cwd"], listed[0]["space"]) == ("plan", "data", "lab")
    store = Path(jp_data_dir) / "agent_tools" / "tokens.sqlite3"
    assert TokenStore(store).verify(token) is not None
    assert not store.resolve().is_relative_to(Path(jp_root_dir).resolve())
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    bad = await user.post(url("agent-tools/api/tokens"),
                          json={"surface": "full", "approvals": "auto", "cwd": "/etc"})
    assert bad.status_code == 400 and "relative to the server root" in bad.text
    assert (await user.delete(url(f"agent-tools/api/tokens/{token_id}"))).status_code == 204
    assert (await user.delete(url(f"agent-tools/api/tokens/{token_id}"))).status_code == 404
    assert (await user.get(url("agent-tools/api/tokens"))).json() == []


async def test_an_agent_token_cannot_mint_list_or_revoke_tokens(mint, url):
    token_id, token = await mint(surface="full", approvals="auto")
    async with agent(token) as http:
        for method, path, body in [("POST", "agent-tools/api/tokens",
                                    {"surface": "full", "approvals": "auto"}),
                                   ("GET", "agent-tools/api/tokens", None),
                                   ("DELETE", f"agent-tools/api/tokens/{token_id}", None)]:
            refused = await http.request(method, url(path), json=body)
            assert refused.status_code == 403, (method, path, refused.text)
            assert refused.json()["error"]["code"] == "permission_denied"


# -- the ceiling -------------------------------------------------------------------------------


async def test_a_run_gets_the_ceiling_and_cannot_ask_for_more(mint, url, data, runtime_of):
    _, token = await mint(surface="readonly", approvals="ask", cwd="data")
    async with agent(token) as http:
        runs = url("agent-tools/api/runs")
        for body, named in [({"surface": "full"}, "surface 'full' is wider"),
                            ({"surface": "plan"}, "surface 'plan' is wider"),
                            ({"approvals": "auto"}, "approvals 'auto' is less strict"),
                            ({"cwd": "."}, "cwd '.' is outside"),
                            ({"cwd": "data/../"}, "outside"),
                            ({"notebook": "../secret.ipynb"}, "notebook"),
                            ({"kernel_id": "k"}, "kernel_id")]:
            refused = await http.post(runs, json=body)
            assert refused.status_code == 403, (body, refused.text)
            message = refused.json()["error"]["message"]
            assert named in message, message
            assert "ceiling allows surface readonly, approvals ask | deny, cwd 'data'" in message
        assert runtime_of.runs == {}
        opened = await http.post(runs, json={})
        assert opened.status_code == 201, opened.text
        run = opened.json()
        assert (run["surface"], run["approvals"], run["cwd"]) == ("readonly", "ask", "data")
        assert "write" not in run["tools"] and "bash" not in run["tools"]
        stricter = await http.post(runs, json={"approvals": "deny", "cwd": "data/sub"})
        assert stricter.status_code == 201, stricter.text
        assert (stricter.json()["approvals"], stricter.json()["cwd"]) == ("deny", "data/sub")
        # The run is confined to the ceiling's folder like any run to its cwd... and its calls
        # go through the usual dispatch: reading inside works.
        read = await http.post(url(f"agent-tools/api/runs/{run['id']}/calls"),
                               json={"tool": "read", "args": {"path": "a.txt"}})
        assert read.json()["ok"] and "in data" in read.json()["text"]


async def test_a_link_in_the_ceilings_folder_does_not_lead_out(mint, url, data, runtime_of):
    (data / "out").symlink_to(data.parent)
    _, token = await mint(surface="full", approvals="auto", cwd="data")
    async with agent(token) as http:
        refused = await http.post(url("agent-tools/api/runs"), json={"cwd": "data/out"})
        assert refused.status_code == 403 and "outside the ceiling" in refused.text
    assert runtime_of.runs == {}


async def test_a_space_in_the_ceiling_is_the_only_one(mint, url, data):
    _, token = await mint(surface="full", approvals="auto", space="lab")
    async with agent(token) as http:
        refused = await http.post(url("agent-tools/api/runs"), json={"space": "other.ipynb"})
        assert refused.status_code == 403 and "space 'other.ipynb'" in refused.text
        opened = await http.post(url("agent-tools/api/runs"), json={})
        assert opened.status_code == 201 and opened.json()["space"] == "lab"


async def test_a_token_sees_only_the_runs_opened_with_it(mint, url, user, data, runtime_of):
    _, token = await mint(surface="full", approvals="auto")
    _, other_token = await mint(surface="full", approvals="auto")
    async with agent(token) as http, agent(other_token) as other:
        users_run = (await user.post(url("agent-tools/api/runs"),
                                     json={"conversation_id": "users"})).json()["id"]
        mine = (await http.post(url("agent-tools/api/runs"), json={})).json()["id"]
        listed = (await http.get(url("agent-tools/api/runs"))).json()
        assert [run["id"] for run in listed] == [mine]
        for method, path, body in [
                ("GET", f"agent-tools/api/runs/{users_run}", None),
                ("DELETE", f"agent-tools/api/runs/{users_run}", None),
                ("POST", f"agent-tools/api/runs/{users_run}/calls",
                 {"tool": "read", "args": {"path": "secret.txt"}}),
                ("GET", f"agent-tools/api/runs/{users_run}/transcript", None),
                ("POST", f"agent-tools/api/runs/{users_run}/mcp", _INITIALIZE)]:
            refused = await http.request(method, url(path), json=body, headers=_MCP_HEADERS)
            assert refused.status_code == 403, (method, path, refused.text)
            assert "not opened with this agent token" in refused.text
        refused = await other.get(url(f"agent-tools/api/runs/{mine}"))
        assert refused.status_code == 403
        # Nor may it name another's conversation (its transcript, its debug session).
        joined = await http.post(url("agent-tools/api/runs"), json={"conversation_id": "users"})
        assert joined.status_code == 403 and "conversation" in joined.text
        assert users_run in runtime_of.runs
        assert (await http.get(url(f"agent-tools/api/runs/{mine}"))).status_code == 200
        assert (await http.delete(url(f"agent-tools/api/runs/{mine}"))).status_code == 204


async def test_an_agent_token_answers_no_card_and_is_no_human(mint, url, data, jp_http_port,
                                                              jp_base_url):
    _, token = await mint(surface="full", approvals="ask", space="lab")
    async with agent(token) as http:
        run = (await http.post(url("agent-tools/api/runs"), json={})).json()
        cards = await http.get(url(f"agent-tools/api/runs/{run['id']}/questions"))
        assert cards.status_code == 200
        answer = await http.post(url(f"agent-tools/api/runs/{run['id']}/questions/1"),
                                 json={"skip": True})
        assert answer.status_code == 403
        assert (await http.get(url(f"agent-tools/api/runs/{run['id']}/edits"))).status_code == 200
        resolve = await http.post(url(f"agent-tools/api/runs/{run['id']}/edits/edit_1"),
                                  json={"action": "accept"})
        assert resolve.status_code == 403 and "agent token" in resolve.text
    request = HTTPRequest(f"ws://localhost:{jp_http_port}{jp_base_url}agent-tools/api/spaces/lab/"
                          "events", headers={"Authorization": f"token {token}"})
    with pytest.raises(HTTPClientError) as refused:
        await websocket_connect(request)
    assert refused.value.code == 403


async def test_an_agent_token_reaches_no_other_route_of_the_server(mint, url, data):
    _, token = await mint(surface="full", approvals="auto")
    async with agent(token) as http:
        assert (await http.get(url("agent-tools/api/status"))).status_code == 200
        for method, path in [("GET", "api/contents"), ("GET", "api/contents/secret.txt"),
                             ("PUT", "api/contents/made.txt"), ("GET", "api/kernels"),
                             ("POST", "api/kernels"), ("GET", "api/sessions"),
                             ("GET", "api/terminals"), ("POST", "api/terminals"),
                             ("GET", "api/kernelspecs"), ("GET", "api/me"),
                             ("GET", "api/config/notebook")]:
            response = await http.request(method, url(path), json={} if method != "GET" else None)
            assert response.status_code in (401, 403), (method, path, response.status_code)
            assert "outside data" not in response.text
        # As ?token= too.
        response = await http.get(url("api/contents", token=token), headers={"Authorization": ""})
        assert response.status_code in (401, 403)
    assert not (data.parent / "made.txt").exists()


async def test_revoked_and_expired_tokens_are_401_naming_where_tokens_come_from(
        mint, url, user, data, jp_data_dir):
    token_id, token = await mint(surface="full", approvals="auto")
    late_id, late = await mint(surface="full", approvals="auto")
    store = Path(jp_data_dir) / "agent_tools" / "tokens.sqlite3"
    with sqlite3.connect(store) as connection:  # as if its time had come
        connection.execute("UPDATE tokens SET expires_at = ? WHERE id = ?",
                           (time.time() - 1, late_id))
    async with agent(token) as http, agent(late) as expired:
        run = (await http.post(url("agent-tools/api/runs"), json={})).json()["id"]
        assert (await user.delete(url(f"agent-tools/api/tokens/{token_id}"))).status_code == 204
        for client in (http, expired):
            for method, path in [("GET", f"agent-tools/api/runs/{run}"),
                                 ("POST", "agent-tools/api/runs"),
                                 ("GET", "agent-tools/api/status")]:
                refused = await client.request(method, url(path),
                                               json={} if method == "POST" else None)
                assert refused.status_code == 401, (method, path, refused.text)
                assert refused.headers["WWW-Authenticate"].startswith("Bearer")
                assert "jupyter agent-tools token create" in refused.json()["error"]["message"]
        listed = (await user.get(url("agent-tools/api/tokens"))).json()
        assert [(t["id"], t["expired"]) for t in listed] == [(late_id, True)]


async def test_a_token_the_cli_makes_and_revokes_is_seen_by_the_running_server(
        url, data, jp_data_dir, jp_root_dir):
    store = Path(jp_data_dir) / "agent_tools" / "tokens.sqlite3"
    made = await asyncio.to_thread(cli, "token", "--file", str(store), "create", "--surface",
                                   "readonly", "--approvals", "ask", "--cwd", "data/",
                                   cwd=Path(jp_root_dir))
    token = made.stdout.strip()
    async with agent(token) as http:
        opened = await http.post(url("agent-tools/api/runs"), json={"surface": "full"})
        assert opened.status_code == 403 and "surface readonly" in opened.text
        assert (await http.post(url("agent-tools/api/runs"), json={})).status_code == 201
        [entry] = json.loads((await asyncio.to_thread(
            cli, "token", "--file", str(store), "list", "--json", cwd=Path(jp_root_dir))).stdout)
        await asyncio.to_thread(cli, "token", "--file", str(store), "revoke", entry["id"],
                                cwd=Path(jp_root_dir))
        assert (await http.post(url("agent-tools/api/runs"), json={})).status_code == 401


# -- over MCP ----------------------------------------------------------------------------------


async def test_over_mcp_a_session_is_within_the_ceiling(mint, url, data, runtime_of):
    _, token = await mint(surface="readonly", approvals="ask", cwd="data")
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=WAIT) as http:
        for query, named in [({"surface": "full"}, "surface 'full' is wider"),
                             ({"approvals": "auto"}, "approvals 'auto' is less strict"),
                             ({"cwd": "."}, "cwd '.' is outside")]:
            refused = await http.post(url("agent-tools/mcp", **query), json=_INITIALIZE,
                                      headers=_MCP_HEADERS)
            assert refused.status_code == 403, refused.text
            error = refused.json()["error"]
            assert named in error["message"] and "ceiling allows surface readonly" in error["message"]
            assert error["data"]["code"] == "permission_denied" and refused.json()["id"] == 1
        async with streamable_http_client(url("agent-tools/mcp"), http_client=http) as (
                read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert "read" in names and not names & {"write", "edit", "bash", "eval"}
            result = await session.call_tool("read", {"path": "a.txt"})
            assert not result.is_error and "in data" in result.content[0].text
            [run] = runtime_of.runs.values()
            assert (run.surface, run.gate.policy, run.describe()["cwd"]) == \
                (Surface.READONLY, Approvals.ASK, "data")
            # Its run is the token's: the per-run routes answer it.
            described = await http.get(url(f"agent-tools/api/runs/{run.id}"))
            assert described.status_code == 200 and described.json()["space"] == "lab"
    # And with ?token= (clients that cannot set a header): the same ceiling.
    async with httpx2.AsyncClient(timeout=WAIT) as http:
        refused = await http.post(url("agent-tools/mcp", surface="full", token=token),
                                  json=_INITIALIZE, headers=_MCP_HEADERS)
        assert refused.status_code == 403
        async with streamable_http_client(url("agent-tools/mcp", token=token, cwd="data/sub"),
                                          http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            assert "write" not in {tool.name for tool in listed.tools}


async def test_over_mcp_the_agents_client_does_not_answer_its_own_permission_cards(
        mint, url, data, runtime_of):
    """An `ask` ceiling means the user approves: the card goes to the space, never back to the
    agent's client by elicitation (which could allow it itself)."""
    _, token = await mint(surface="full", approvals="ask", space="lab")
    elicited: list[object] = []

    async def allow(context, params):
        elicited.append(params)
        return types.ElicitResult(action="accept", content={"answer": "Allow once"})

    panel = await runtime_of.connect_human("lab")
    try:
        async with httpx2.AsyncClient(headers={"Authorization": f"token {token}"},
                                      timeout=WAIT) as http, \
                streamable_http_client(url("agent-tools/mcp"), http_client=http) as (
                    read, write), \
                ClientSession(read, write, elicitation_callback=allow) as session:
            await session.initialize()
            call = asyncio.ensure_future(
                session.call_tool("write", {"path": "data/new.txt", "content": "x\n"}))
            card = await panel.next_card(timeout=WAIT)
            deny = next(o["label"] for o in card["options"] if o["label"].startswith("Deny"))
            await panel.answer(card["id"], answer=deny)
            result = await asyncio.wait_for(call, WAIT)
        assert result.is_error and elicited == []
        assert not (data / "new.txt").exists()
    finally:
        await panel.close()


async def test_over_mcp_a_token_reaches_only_its_own_sessions(mint, url, data, jp_serverapp):
    _, token = await mint(surface="full", approvals="auto")
    _, other = await mint(surface="full", approvals="auto")
    users = {"Authorization": f"token {jp_serverapp.identity_provider.token}"}

    async def opened(headers: dict[str, str]) -> str:
        async with httpx2.AsyncClient(headers=headers, timeout=WAIT) as http:
            response = await http.post(url("agent-tools/mcp"), json=_INITIALIZE,
                                       headers=_MCP_HEADERS)
            assert response.status_code == 200, response.text
            return response.headers["Mcp-Session-Id"]

    async def tools_list(headers: dict[str, str], session_id: str) -> int:
        async with httpx2.AsyncClient(headers=headers, timeout=WAIT) as http:
            response = await http.post(url("agent-tools/mcp"), headers={
                **_MCP_HEADERS, "Mcp-Session-Id": session_id,
                "Mcp-Protocol-Version": "2025-06-18"},
                json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            return response.status_code

    users_session = await opened(users)
    tokens_session = await opened({"Authorization": f"token {token}"})
    assert await tools_list({"Authorization": f"token {token}"}, tokens_session) == 200
    assert await tools_list({"Authorization": f"token {token}"}, users_session) == 404
    assert await tools_list({"Authorization": f"token {other}"}, tokens_session) == 404


# -- what lasts --------------------------------------------------------------------------------


async def test_tokens_survive_a_restart_and_a_store_in_the_root_is_refused(tmp_path):
    root = tmp_path / "root"
    (root / "data").mkdir(parents=True)
    store = tmp_path / "jupyter-data" / "agent_tools" / "tokens.sqlite3"
    made = await asyncio.to_thread(cli, "token", "--file", str(store), "create", "--surface",
                                   "plan", "--approvals", "ask", "--cwd", "data",
                                   cwd=tmp_path)
    token = made.stdout.strip()
    for _ in range(2):  # the same file, a new server
        server = JupyterServerProcess(root, extra_args=[f"--AgentTokens.path={store}"])
        await asyncio.to_thread(server.start)
        try:
            async with httpx.AsyncClient(headers={"Authorization": f"token {token}"},
                                         timeout=WAIT) as http:
                opened = await http.post(server.url.rstrip("/") + "/agent-tools/api/runs",
                                         json={})
                assert opened.status_code == 201, (opened.text, server.log_tail())
                assert (opened.json()["surface"], opened.json()["cwd"]) == ("plan", "data")
        finally:
            await asyncio.to_thread(server.stop)
    # A token file inside the root, where agents could read it: not used at all.
    inside = root / "tokens.sqlite3"
    TokenStore(inside).create("x", Ceiling(Surface.FULL, Approvals.AUTO))
    server = JupyterServerProcess(root, extra_args=[f"--AgentTokens.path={inside}"])
    await asyncio.to_thread(server.start)
    try:
        _, token_in_root = TokenStore(inside).create("y", Ceiling(Surface.FULL, Approvals.AUTO))
        base = server.url.rstrip("/") + "/agent-tools/api/"
        async with httpx.AsyncClient(timeout=WAIT) as http:
            refused = await http.post(base + "runs", json={},
                                      headers={"Authorization": f"token {token_in_root}"})
            assert refused.status_code == 401
            minted = await http.post(base + "tokens", json={"surface": "full", "approvals": "auto"},
                                     headers={"Authorization": f"token {server.token}"})
            assert minted.status_code == 409 and "inside the server root" in minted.text
    finally:
        await asyncio.to_thread(server.stop)


async def test_in_a_root_that_holds_jupyters_data_dir_no_file_tool_reaches_the_tokens(tmp_path):
    """A server started in the home folder: the token file is under its root, but no file tool
    reads, writes or finds it (path_denied), and agent tokens work."""
    home = tmp_path / "home"
    data = home / ".local" / "share" / "jupyter"
    (home / "project").mkdir(parents=True)
    env = {**os.environ, "JUPYTER_DATA_DIR": str(data)}
    made = await asyncio.to_thread(
        subprocess.run, [str(BIN / "jupyter"), "agent-tools", "token", "create", "--surface",
                         "full", "--approvals", "auto"],
        cwd=home, capture_output=True, text=True, timeout=120, env=env)
    token = made.stdout.strip()
    store = data / "agent_tools" / "tokens.sqlite3"
    assert store.exists() and store.resolve().is_relative_to(home.resolve())
    server = JupyterServerProcess(home, extra_args=["--AgentTokens.path="],
                                  env={"JUPYTER_DATA_DIR": str(data)})
    await asyncio.to_thread(server.start)
    try:
        base = server.url.rstrip("/") + "/agent-tools/api/"
        async with httpx.AsyncClient(headers={"Authorization": f"token {token}"},
                                     timeout=WAIT) as http:
            opened = await http.post(base + "runs", json={})
            assert opened.status_code == 201, (opened.text, server.log_tail())
            calls = base + f"runs/{opened.json()['id']}/calls"
            relative = str(store.relative_to(home))
            for tool, args in [("read", {"path": relative}),
                               ("write", {"path": relative, "content": "x"}),
                               ("read", {"path": str(store.parent.relative_to(home))})]:
                result = (await http.post(calls, json={"tool": tool, "args": args})).json()
                assert result["error"]["code"] == "path_denied", (tool, result)
            found = (await http.post(calls, json={"tool": "glob", "args": {
                "pattern": "**/*.sqlite3", "hidden": True}})).json()
            assert "tokens.sqlite3" not in json.dumps(found), found
            assert (await http.post(base + "runs", json={})).status_code == 201  # unchanged
    finally:
        await asyncio.to_thread(server.stop)
