"""agent-tools in JupyterHub single-user servers, through the hub's proxy, OAuth and scopes.

One hub for the module (conftest.py); alice's default and named (`work`) servers, bob's and
carol's are spawned together at the start. Every request goes through the hub's proxy at
`/user/<name>/...`, as a browser or an agent outside the hub would send it; the browser test
drives Debian's chromium (as tests/lab does), the culling test runs jupyterhub-idle-culler.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from hub_helpers import REPO, TOKEN_CACHE_SECONDS, Hub, agent_api
from process_helpers import ended

pytestmark = pytest.mark.hub

ALICE, ALICE_WORK, BOB = "/user/alice/", "/user/alice/work/", "/user/bob/"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]
MCP_HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "hub-test", "version": "1"}}}


@pytest.fixture(scope="module")
def servers(hub: Hub) -> Hub:
    """alice's default server, her named server `work`, bob's and carol's: spawned at once."""
    wanted = [("alice", ""), ("alice", "work"), ("bob", ""), ("carol", "")]
    for user, name in wanted:
        hub.request_spawn(user, name)
    for user, name in wanted:
        hub.wait_ready(user, name)
    return hub


@pytest.fixture(scope="module")
def tokens(servers: Hub) -> dict[str, str]:
    """Hub API tokens (the hub's own, made through its REST API)."""
    hub = servers
    return {
        "alice": hub.token("alice", ["access:servers!user=alice"]),
        "alice_default_only": hub.token("alice", ["access:servers!server=alice/"]),
        "alice_no_access": hub.token("alice", ["read:users!user=alice"]),
        "bob": hub.token("bob", ["access:servers!user=bob"]),
    }


def with_token(hub: Hub, token: str | None) -> httpx.Client:
    headers = {"Authorization": f"token {token}"} if token else {}
    return httpx.Client(base_url=hub.url, headers=headers, timeout=120)


@pytest.fixture(scope="module")
def alice(servers: Hub, tokens: dict[str, str]) -> Iterator[httpx.Client]:
    with with_token(servers, tokens["alice"]) as client:
        yield client


def run_ids(client: httpx.Client, prefix: str) -> set[str]:
    """The open runs (ended ones stay listed, from the run store)."""
    response = agent_api(client, prefix, "GET", "runs")
    assert response.status_code == 200, response.text
    return {run["id"] for run in response.json() if run["state"] == "open"}


def mcp_open(client: httpx.Client, url: str, headers: dict[str, str] | None = None,
             **kwargs: Any) -> httpx.Response:
    return client.post(url, content=json.dumps(INITIALIZE),
                       headers={**MCP_HEADERS, **(headers or {})}, **kwargs)


def mcp_json(response: httpx.Response) -> dict[str, Any]:
    """A JSON-RPC answer, sent as one JSON body or as one server-sent event."""
    if response.headers["content-type"].startswith("text/event-stream"):
        [data] = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data)
    return response.json()


# -- alice's own credentials work through the proxy -----------------------------------------


def test_a_hub_token_with_access_scope_reaches_the_api_and_mcp(servers, alice):
    status = agent_api(alice, ALICE, "GET", "status")
    assert status.status_code == 200, status.text
    assert status.json()["root_dir"].endswith("/home/alice")
    # The OpenAPI document names the server's base URL, the hub's prefix.
    openapi = agent_api(alice, ALICE, "GET", "openapi.json").json()
    assert openapi["servers"] == [{"url": "/user/alice"}]

    created = agent_api(alice, ALICE, "POST", "runs", {"cwd": "."})
    assert created.status_code == 201, created.text
    run_id = created.json()["id"]
    called = agent_api(alice, ALICE, "POST", f"runs/{run_id}/calls",
                       {"tool": "write", "args": {"path": "hello.py", "content": "print(1)\n"}})
    assert called.status_code == 200 and called.json()["ok"], called.text
    assert agent_api(alice, ALICE, "DELETE", f"runs/{run_id}").status_code == 204

    opened = mcp_open(alice, f"{ALICE}agent-tools/mcp?cwd=.&surface=plan")
    assert opened.status_code == 200, opened.text
    assert mcp_json(opened)["result"]["serverInfo"]["name"] == "jupyter-agent-tools"
    session = {"mcp-session-id": opened.headers["mcp-session-id"], **MCP_HEADERS}
    listed = alice.post(f"{ALICE}agent-tools/mcp", headers=session, content=json.dumps(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    names = {tool["name"] for tool in mcp_json(listed)["result"]["tools"]}
    assert "read" in names and "write" not in names  # a plan session
    called = alice.post(f"{ALICE}agent-tools/mcp", headers=session, content=json.dumps(
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "glob", "arguments": {"pattern": "*.py"}}}))
    assert called.status_code == 200, called.text  # its first call made the session's run
    [mcp_run] = [run for run in agent_api(alice, ALICE, "GET", "runs").json()
                 if run["origin"] == "mcp"]
    # The links the session hands its client carry the hub's prefix.
    instructions = mcp_json(opened)["result"]["instructions"]
    assert "/user/alice/lab " in instructions, instructions
    assert f"/user/alice/agent-tools/api/runs/{mcp_run['id']}" in instructions, instructions
    assert alice.delete(f"{ALICE}agent-tools/mcp", headers=session).status_code in (200, 204)
    assert mcp_run["id"] not in run_ids(alice, ALICE)


def test_the_docs_mcp_settings_entry_opens_a_session_through_the_hub(servers, alice):
    """docs/jupyterhub.md's `mcp_settings.json` entry, with this hub's address and an agent
    token alice minted in her server (with her hub token)."""
    docs = (REPO / "docs" / "jupyterhub.md").read_text()
    section = docs.split("## jupyter-ai and other MCP clients\n", 1)[1]
    [entry] = json.loads(section.split("```json\n", 1)[1].split("```", 1)[0])["mcp_servers"]
    url = entry["url"].replace("https://hub.example.org", servers.url)
    [header] = entry["headers"]
    minted = agent_api(alice, ALICE, "POST", "tokens", {"surface": "full", "approvals": "ask"})
    assert minted.status_code == 201, minted.text
    value = header["value"].split("<", 1)[0] + minted.json()["token"]
    with httpx.Client(timeout=120, headers={header["name"]: value}) as client:
        opened = mcp_open(client, url)
        assert opened.status_code == 200, opened.text
        assert client.delete(url, headers={
            "mcp-session-id": opened.headers["mcp-session-id"]}).status_code in (200, 204)


def test_an_agent_token_reaches_its_users_agent_tools_only(servers, alice):
    """Agent tokens are a layer inside alice's server: minted with her hub token, good on her
    server's agent-tools routes within their ceiling, not on her files' API or bob's server."""
    minted = agent_api(alice, ALICE, "POST", "tokens", {"surface": "readonly", "approvals": "ask"})
    assert minted.status_code == 201, minted.text
    with with_token(servers, minted.json()["token"]) as agent:
        refused = agent_api(agent, ALICE, "POST", "runs", {"surface": "full"})
        assert refused.status_code == 403 and "ceiling" in refused.text
        opened = agent_api(agent, ALICE, "POST", "runs", {})
        assert opened.status_code == 201, opened.text
        assert (opened.json()["surface"], opened.json()["approvals"]) == ("readonly", "ask")
        assert agent.get(f"{ALICE}api/contents").status_code in (401, 403)
        assert agent_api(agent, BOB, "POST", "runs", {}).status_code in (401, 403)
        assert agent_api(agent, ALICE, "GET", "tokens").status_code == 403
        assert agent_api(agent, ALICE, "DELETE", f"runs/{opened.json()['id']}").status_code == 204


def test_alice_s_browser_session_through_the_hub_s_oauth(servers):
    with servers.login("alice") as browser:
        # Logged in to the hub, not yet to her server: an API call is refused (401 saying what
        # to send, no redirect for an API), the lab page starts the hub's OAuth dance,
        # followed like a browser, which ends with the server's own cookie; the panel's API
        # calls then ride on it.
        assert not [c for c in browser.cookies.jar if c.name.startswith("jupyterhub-user-")]
        refused = browser.get(f"{ALICE}agent-tools/api/status")
        assert refused.status_code == 401 and "Authorization" in refused.json()["error"]["message"]
        lab = browser.get(f"{ALICE}lab")
        assert lab.status_code == 200, lab.history
        assert any("/hub/api/oauth2/authorize" in str(r.url) for r in lab.history), lab.history
        assert [c.path for c in browser.cookies.jar if c.name == "jupyterhub-user-alice"] == [ALICE]
        assert browser.get(f"{ALICE}agent-tools/api/status").status_code == 200
        # A browser POST carries the server's XSRF cookie back (the lab page set it).
        xsrf = {"X-XSRFToken": browser.cookies.get("_xsrf", path=ALICE) or ""}
        created = agent_api(browser, ALICE, "POST", "runs", {"cwd": "."}, headers=xsrf)
        assert created.status_code == 201, created.text
        opened = mcp_open(browser, f"{ALICE}agent-tools/mcp", headers=xsrf)
        assert opened.status_code == 200, opened.text
        browser.delete(f"{ALICE}agent-tools/mcp", headers={
            "mcp-session-id": opened.headers["mcp-session-id"], **xsrf})
        assert agent_api(browser, ALICE, "DELETE", f"runs/{created.json()['id']}",
                         headers=xsrf).status_code == 204


def test_named_servers_serve_their_own_runtime(servers, tokens, alice):
    status = agent_api(alice, ALICE_WORK, "GET", "status")
    assert status.status_code == 200, status.text
    created = agent_api(alice, ALICE_WORK, "POST", "runs", {})
    assert created.status_code == 201, created.text
    run_id = created.json()["id"]
    assert run_id in run_ids(alice, ALICE_WORK)
    assert run_id not in run_ids(alice, ALICE)  # each server has its own runs
    assert mcp_open(alice, f"{ALICE_WORK}agent-tools/mcp").status_code == 200
    # A token for alice's default server only does not open her named one.
    with with_token(servers, tokens["alice_default_only"]) as default_only:
        assert agent_api(default_only, ALICE, "GET", "status").status_code == 200
        before = run_ids(alice, ALICE_WORK)
        assert agent_api(default_only, ALICE_WORK, "POST", "runs", {}).status_code == 403
        assert mcp_open(default_only, f"{ALICE_WORK}agent-tools/mcp").status_code == 403
        assert run_ids(alice, ALICE_WORK) == before


# -- everyone else is refused, and nothing is made ------------------------------------------


def refused_everywhere(client: httpx.Client, alice: httpx.Client, run_id: str,
                       **kwargs: Any) -> None:
    """`client` gets 401/403 on every route of alice's server, and nothing changes there."""
    before = run_ids(alice, ALICE)
    attempts = [
        agent_api(client, ALICE, "GET", "status", **kwargs),
        agent_api(client, ALICE, "GET", "runs", **kwargs),
        agent_api(client, ALICE, "POST", "runs", {"cwd": "."}, **kwargs),
        agent_api(client, ALICE, "GET", f"runs/{run_id}/transcript", **kwargs),
        agent_api(client, ALICE, "POST", f"runs/{run_id}/calls",
                  {"tool": "write", "args": {"path": "pwned.txt", "content": "x"}}, **kwargs),
        agent_api(client, ALICE, "DELETE", f"runs/{run_id}", **kwargs),
        mcp_open(client, f"{ALICE}agent-tools/mcp", **kwargs),
        mcp_open(client, f"{ALICE}agent-tools/api/runs/{run_id}/mcp", **kwargs),
    ]
    for response in attempts:
        assert response.status_code in (401, 403), (response.request.url, response.status_code)
        assert run_id not in response.text
    assert run_ids(alice, ALICE) == before
    transcript = agent_api(alice, ALICE, "GET", f"runs/{run_id}/transcript").json()
    assert [entry["tool"] for entry in transcript] == ["glob"]


@pytest.fixture(scope="module")
def alice_run(alice: httpx.Client) -> str:
    """A run of alice's with one call in its transcript: what others must not see or touch."""
    run_id = agent_api(alice, ALICE, "POST", "runs", {}).json()["id"]
    agent_api(alice, ALICE, "POST", f"runs/{run_id}/calls",
              {"tool": "glob", "args": {"pattern": "*"}})
    return run_id


@pytest.mark.parametrize("who", ["bob", "alice_no_access", "nobody"])
def test_other_tokens_are_refused_and_create_nothing(servers, tokens, alice, alice_run, who):
    with with_token(servers, tokens.get(who)) as client:
        refused_everywhere(client, alice, alice_run)


def test_an_expired_token_is_refused(servers, alice, alice_run):
    token = servers.token("alice", ["access:servers!user=alice"], expires_in=1)
    time.sleep(2)
    with with_token(servers, token) as client:
        refused_everywhere(client, alice, alice_run)


def test_a_token_expired_or_revoked_after_use_is_refused_once_the_server_asks_again(
        servers, alice, alice_run):
    """The server keeps the hub's answer on a token for HubOAuth.cache_max_age (2 s here; 300
    by default, which docs/jupyterhub.md says to lower): past that, it asks again, and is told no."""
    expiring = servers.token("alice", ["access:servers!user=alice"], expires_in=2)
    revoked = servers.token_model("alice", ["access:servers!user=alice"])
    with with_token(servers, expiring) as first, with_token(servers, revoked["token"]) as second:
        for client in (first, second):
            assert agent_api(client, ALICE, "GET", "runs").status_code == 200
        servers.revoke("alice", revoked["id"])
        time.sleep(TOKEN_CACHE_SECONDS + 1.5)
        for client in (first, second):
            refused_everywhere(client, alice, alice_run)


def test_bob_s_browser_session_is_refused_on_alice_s_server(servers, alice, alice_run):
    with servers.login("bob") as browser:
        assert browser.get(f"{BOB}lab").status_code == 200  # his own server: the OAuth dance
        assert browser.get(f"{BOB}agent-tools/api/status").status_code == 200
        # The hub does not let him log in to alice's, and his cookie does not open it.
        assert browser.get(f"{ALICE}lab").status_code == 403
        assert not [c for c in browser.cookies.jar if c.name == "jupyterhub-user-alice"]
        refused_everywhere(browser, alice, alice_run)


def test_a_request_from_bob_s_server_is_refused(servers, tokens, alice, alice_run):
    """bob's agent, inside bob's server, uses the token its server holds against alice's."""
    probe = (
        "import httpx, json, os; h = {'Authorization': 'token ' + os.environ['JUPYTERHUB_API_TOKEN']}; "
        f"u = '{servers.url}{ALICE}agent-tools/api/'; "
        "print(json.dumps([httpx.get(u + 'runs', headers=h).status_code, "
        "httpx.post(u + 'runs', headers=h, json={}).status_code]))"
    )
    with with_token(servers, tokens["bob"]) as bob:
        run_id = agent_api(bob, BOB, "POST", "runs", {}).json()["id"]
        before = run_ids(alice, ALICE)
        result = agent_api(bob, BOB, "POST", f"runs/{run_id}/calls", {"tool": "bash", "args": {
            "command": f"{sys.executable} -c \"{probe}\""}}).json()
        assert result["ok"], result
        assert json.loads(result["text"].strip().splitlines()[-1]) == [403, 403]
        assert run_ids(alice, ALICE) == before
        # And no run of alice's shows on bob's server (each server has its own runtime).
        assert alice_run not in run_ids(bob, BOB)


# -- the URLs we hand out carry the server's prefix -----------------------------------------


def test_a_kernel_finds_its_server_under_the_hub_prefix(alice):
    """A notebook's `open_panel()` in the user's kernel finds its server (with the prefix) and
    joins a space over its WebSocket; the cell's `tool()` bridge works too."""
    run_id = agent_api(alice, ALICE, "POST", "runs", {}).json()["id"]
    agent_api(alice, ALICE, "POST", f"runs/{run_id}/calls",
              {"tool": "write", "args": {"path": "found.py", "content": "x = 1\n"}})
    code = ("from jupyter_agent_tools.notebook import open_panel\n"
            "session = open_panel(space='hub-notebook', display=False)\n"
            "print(session.client.url, session.link.connected.is_set())\n"
            "session.close(close_run=True)\n"
            "print(tool('glob', {'pattern': '*.py'}).text)\n")
    result = agent_api(alice, ALICE, "POST", f"runs/{run_id}/calls", {"tool": "eval", "args": {
        "code": code, "description": "find the server from inside the kernel"}}).json()
    assert result["ok"], result
    url, connected = result["text"].splitlines()[0].split()
    assert url.endswith("/user/alice/") and connected == "True", result["text"]
    assert "found.py" in result["text"]
    agent_api(alice, ALICE, "DELETE", f"runs/{run_id}")


def test_a_worker_process_reaches_its_run_under_the_hub_prefix(alice):
    """A command worker gets JUPYTER_SERVER_URL (the server's URL with /user/alice/) and its
    run token, and calls its tools there, past the hub's proxy."""
    parent = agent_api(alice, ALICE, "POST", "runs", {"vibe": True}).json()["id"]
    spawned = agent_api(alice, ALICE, "POST", f"runs/{parent}/calls", {"tool": "vibe_spawn",
        "args": {"label": "look", "brief": 'call glob {"pattern": "*.py"}'}}).json()
    assert spawned["ok"], spawned
    waited = agent_api(alice, ALICE, "POST", f"runs/{parent}/calls", {
        "tool": "vibe_wait", "args": {"worker_id": "w1", "timeout_seconds": 60}}).json()
    assert waited["data"]["status"] == "done", waited
    assert "glob: ok" in waited["data"]["result"], waited
    agent_api(alice, ALICE, "DELETE", f"runs/{parent}")


# -- the JupyterLab panel at /user/alice/lab, in chromium -----------------------------------


@pytest.fixture
def jp_asyncio_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """pytest-jupyter's autouse loop, not made this thread's loop: Playwright's sync API runs
    its own on this thread (as in tests/lab)."""
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def in_background(call: Any) -> concurrent.futures.Future:
    """A blocking HTTP call (an agent waiting on a card) on a thread of its own."""
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    future = executor.submit(call)
    executor.shutdown(wait=False)
    return future


def test_the_panel_in_alice_s_lab_answers_a_card_and_accepts_an_edit(servers, alice):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra")
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is absent: run scripts/setup.sh as root (apt-get install chromium)")
    # No "get notified about Jupyter news?" toast over the panel.
    settings = servers.state / "home/alice/.jupyter/lab/user-settings/@jupyterlab/apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    agent_api(alice, ALICE, "POST", "runs", {}).json()  # the server is up and answering
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
            page.set_default_timeout(60_000)
            page.goto(f"{servers.url}/hub/login?next=/user/alice/lab")
            page.fill("input[name=username]", "alice")
            page.fill("input[name=password]", servers.password)
            page.click("input[type=submit]")
            page.wait_for_url(f"{servers.url}/user/alice/lab**")
            page.wait_for_function("() => window.jupyterapp && window.jupyterapp.commands"
                                   ".hasCommand('agent-tools:open-panel')")
            page.evaluate("async () => { await window.jupyterapp.commands.execute("
                          "'agent-tools:open-panel'); }")
            panel = page.locator("#agent-tools-panel")
            panel.wait_for()

            run_id = agent_api(alice, ALICE, "POST", "runs", {"space": "lab"}).json()["id"]
            deadline = time.monotonic() + 60
            while agent_api(alice, ALICE, "GET", "status").json()["resources"]["questions"][
                    "humans"].get("lab", 0) < 1:
                assert time.monotonic() < deadline, "the lab never joined space 'lab'"
                time.sleep(0.2)
            question = in_background(lambda: agent_api(
                alice, ALICE, "POST", f"runs/{run_id}/calls", {"tool": "ask_user", "args": {
                    "question": "Which colour for the plot?",
                    "options": [{"label": "Red"}, {"label": "Blue"}]}}).json())
            card = panel.locator(".jp-AgentTools-card", has_text="Which colour for the plot?")
            card.get_by_role("button", name="Blue").click()
            answered = question.result(timeout=60)
            assert answered["ok"] and answered["data"]["answer"] == "Blue", answered

            agent_api(alice, ALICE, "POST", f"runs/{run_id}/calls", {"tool": "write", "args": {
                "path": "shapes.py", "content": "def area(w, h):\n    print(w * h)\n"}})
            staged = agent_api(alice, ALICE, "POST", f"runs/{run_id}/calls", {
                "tool": "ast_edit", "args": {"pattern": "print($A)", "rewrite": "log($A)",
                                             "path": "shapes.py", "language": "python"}}).json()
            assert staged["ok"], staged
            edit_id = staged["data"]["edit_id"]
            panel.locator(f".jp-AgentTools-run[data-run-id='{run_id}']").click()
            edit = panel.locator(f".jp-AgentTools-edit[data-edit-id='{edit_id}']")
            edit.locator(".jp-AgentTools-diff-add", has_text="log(w * h)").wait_for()
            edit.get_by_role("button", name="Accept").click()
            panel.locator(f".jp-AgentTools-edit[data-edit-id='{edit_id}']"
                          "[data-status='accepted']").wait_for()
        finally:
            browser.close()
    read = agent_api(alice, ALICE, "POST", f"runs/{run_id}/calls",
                     {"tool": "read", "args": {"path": "shapes.py"}}).json()
    assert "log(w * h)" in read["text"], read
    transcript = agent_api(alice, ALICE, "GET", f"runs/{run_id}/transcript").json()
    assert [entry["tool"] for entry in transcript] == [
        "ask_user", "write", "ast_edit", "resolve", "read"]
    agent_api(alice, ALICE, "DELETE", f"runs/{run_id}")


# -- activity: a working agent keeps its server, an idle one is culled ----------------------


def test_a_working_agent_is_not_culled_and_an_idle_one_is(servers: Hub):
    """jupyterhub-idle-culler (from PyPI, against the hub's API) with a 10 s timeout: carol's
    agent evaluates for 20 s with no browser open and keeps her server; once her run is idle,
    the culler stops it. (A failure prints the culler's log, the activity the hub heard and
    the hub's log.)"""
    hub = servers
    timeout, eval_seconds = 10, 20
    with with_token(hub, hub.token("carol", ["access:servers!user=carol"])) as carol:
        set_up = datetime.now(timezone.utc)
        run_id = agent_api(carol, "/user/carol/", "POST", "runs", {}).json()["id"]
        # Start the kernel first: its start-up messages are activity of their own.
        agent_api(carol, "/user/carol/", "POST", f"runs/{run_id}/calls", {"tool": "eval", "args": {
            "code": "1", "description": "start the kernel before the long cell"}})
        # The hub hears of activity an interval late. Carol's server was idle for as long as
        # the tests before took (once 15 s: culled at the culler's first look, before the
        # report of these calls came): start the culler once the hub knows of them.
        hub.wait_activity_since("carol", set_up)
        outcome: dict[str, Any] = {}

        def long_eval() -> None:
            outcome["response"] = agent_api(
                carol, "/user/carol/", "POST", f"runs/{run_id}/calls", {"tool": "eval", "args": {
                    "code": f"import time; time.sleep({eval_seconds}); print('done')",
                    "description": "a long silent computation with no output"}})

        worker = threading.Thread(target=long_eval)
        worker.start()
        culler = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub_idle_culler", f"--timeout={timeout}",
             "--cull-every=1", f"--url={hub.api_url}"],
            env={"JUPYTERHUB_API_TOKEN": hub.culler_token, "PATH": "/usr/bin:/bin"},
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        reported: list[str] = []
        try:
            while worker.is_alive():
                server = hub.server("carol")
                assert server is not None and server["ready"], "culled while the agent worked"
                reported.append(server["last_activity"])
                time.sleep(1)
            worker.join()
            response = outcome["response"]
            # Culled mid-call, the hub answers for the vanished server with its error page.
            if response.status_code != 200:
                culler.terminate()
                log = culler.communicate(timeout=30)[0].decode(errors="replace")
                pytest.fail(f"the call was cut off ({response.status_code}); the hub heard "
                            f"{reported}; the culler said:\n{log}\nthe hub's log ends:\n"
                            f"{hub.log_path.read_text(errors='replace')[-6000:]}")
            assert response.json()["ok"] and "done" in response.json()["text"], response.text
            # The hub heard of activity all along, while no request or kernel message came.
            assert len(set(reported)) >= eval_seconds // 3, reported
            # Now the run is idle (still open): the culler stops the server as usual.
            hub.wait_stopped("carol", timeout=timeout + 30)
        finally:
            culler.terminate()
            log = culler.communicate(timeout=30)[0].decode(errors="replace")
        assert "Culling server carol" in log, log


# -- faults: a restart leaves no process behind and no half-alive run -----------------------


def test_a_server_restarted_by_the_hub_leaves_no_orphans(servers, alice):
    """A run holding a kernel, a language server and a stopped debuggee when the hub stops the
    server: every process goes with it, and after the restart the run is reported gone."""
    run_id = agent_api(alice, ALICE, "POST", "runs", {"conversation_id": "c"}).json()["id"]
    for tool, args in [
        ("write", {"path": "pyproject.toml", "content": "[project]\nname = 'demo'\n"}),
        ("write", {"path": "app.py", "content": "total = 0\nfor i in range(3):\n    total += i\n"}),
        ("eval", {"code": "40 + 2", "description": "start a kernel for this run"}),
        ("lsp", {"action": "diagnostics", "file": "app.py"}),
        ("debug", {"action": "breakpoints", "file": "app.py", "lines": [3]}),
        ("debug", {"action": "launch", "program": "app.py"}),
    ]:
        result = agent_api(alice, ALICE, "POST", f"runs/{run_id}/calls",
                           {"tool": tool, "args": args}).json()
        assert result["ok"], result
    opened = mcp_open(alice, f"{ALICE}agent-tools/api/runs/{run_id}/mcp")
    assert opened.status_code == 200, opened.text
    session = {"mcp-session-id": opened.headers["mcp-session-id"], **MCP_HEADERS}
    server_pid = int(servers.server("alice")["state"]["pid"])
    children = psutil.Process(server_pid).children(recursive=True)
    commands = " ".join(" ".join(child.cmdline()) for child in children)
    for part in ("ipykernel", "basedpyright", "debugpy"):
        assert part in commands, commands

    servers.stop_server("alice")
    assert ended(server_pid, within_seconds=30)
    for child in children:
        assert ended(child.pid, within_seconds=30), child
    servers.spawn("alice")
    # The run is kept in the run store, ended by the restart, with its transcript.
    gone = agent_api(alice, ALICE, "GET", f"runs/{run_id}")
    assert gone.status_code == 200 and gone.json()["state"] == "ended", gone.text
    assert gone.json()["ended_by"] == "restart"
    transcript = agent_api(alice, ALICE, "GET", f"runs/{run_id}/transcript").json()
    assert [entry["tool"] for entry in transcript][:3] == ["write", "write", "eval"]
    assert run_ids(alice, ALICE) == set()
    # The MCP client's old session is gone too: it opens a new one (a new run).
    stale = alice.post(f"{ALICE}agent-tools/api/runs/{run_id}/mcp", headers=session,
                       content=json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    assert stale.status_code == 404, stale.text

