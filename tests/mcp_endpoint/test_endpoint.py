"""agent-tools/mcp with the MCP SDK's own client against a real Jupyter server: a run per session."""

from __future__ import annotations

import asyncio
import base64
import json
import os

import httpx2
import psutil
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from jupyter_agent_tools.runtime import Resource

PROJECT = {
    "pyproject.toml": "[project]\nname = 'demo'\nversion = '0'\n",
    "shapes.py": ("class Shape:\n    def area(self) -> float:\n        return 0.0\n\n\n"
                  "class Square(Shape):\n    def __init__(self, side: float) -> None:\n"
                  "        self.side = side\n\n    def area(self) -> float:\n"
                  "        return self.side * self.side\n"),
    "main.py": ("from shapes import Square\n\nsquare = Square(2.0)\n"
                "print(square.area())\n"),
}


@pytest.fixture
def project(jp_root_dir):
    directory = jp_root_dir / "proj"
    directory.mkdir()
    for name, text in PROJECT.items():
        (directory / name).write_text(text)
    return directory


def mcp_runs(runtime):
    return [run for run in runtime.runs.values() if run.options.origin.value == "mcp"]


def open_sessions(serverapp) -> dict:
    """The server's open MCP sessions (its endpoint exists once a request needed it)."""
    endpoint = serverapp.web_app.settings.get("agent_tools_mcp")
    return {} if endpoint is None else endpoint.sessions


async def test_a_session_is_a_run_that_sees_its_surface(mcp_session, runtime_of, project):
    async with mcp_session(cwd="proj") as full:
        full_tools = {tool.name: tool for tool in (await full.list_tools()).tools}
        # Listing tools made no run: its first call does, and it sees what was listed.
        assert mcp_runs(runtime_of) == []
        assert not (await full.call_tool("glob", {"pattern": "*.py"})).is_error
        [run] = mcp_runs(runtime_of)
        assert run.describe()["origin"] == "mcp" and run.describe()["cwd"] == "proj"
        assert run.space == "lab"  # cards go to the JupyterLab panel by default
        assert set(full_tools) == set(run.tool_names())
        assert {"write", "bash", "eval", "ask_user"} <= set(full_tools)
        schemas = {schema["name"]: schema for schema in run.schemas(format="json")}
        assert full_tools["read"].input_schema == schemas["read"]["parameters"]
        assert full_tools["read"].description == schemas["read"]["description"]
        assert "path" in full_tools["read"].input_schema["properties"]
        assert full_tools["read"].annotations.read_only_hint is True
        assert full_tools["write"].annotations.read_only_hint is False
        async with mcp_session(cwd="proj", surface="plan") as plan:
            plan_tools = {tool.name for tool in (await plan.list_tools()).tools}
            assert plan_tools and not {"write", "edit", "bash", "eval"} & plan_tools
            assert {"read", "grep", "ast_grep"} <= plan_tools
            refused = await plan.call_tool("write", {"path": "x.py", "content": "x"})
            assert refused.is_error and refused.structured_content["error"]["code"] == "unknown_tool"
            assert len(mcp_runs(runtime_of)) == 2  # two sessions, two runs
            plan_run = next(r for r in mcp_runs(runtime_of) if r.surface.value == "plan")
            assert set(plan_run.tool_names()) == plan_tools
        assert len(mcp_runs(runtime_of)) == 1
    assert mcp_runs(runtime_of) == []  # leaving the session (DELETE) closed its run


async def test_read_grep_and_ast_grep_results(mcp_session, project):
    async with mcp_session(cwd="proj") as session:
        read = await session.call_tool("read", {"path": "main.py", "limit": 2})
        assert not read.is_error
        assert "from shapes import Square" in read.content[0].text
        assert read.structured_content["path"] == "main.py"

        grep = await session.call_tool("grep", {"pattern": "def area"})
        assert not grep.is_error and "shapes.py" in grep.content[0].text

        found = await session.call_tool("ast_grep", {"pattern": "def $NAME(self) -> float: $$$",
                                                     "language": "python"})
        assert not found.is_error, found.content[0].text
        matches = found.structured_content["matches"]
        assert len(matches) == 2 and {m["file"] for m in matches} == {"shapes.py"}


async def test_errors_are_is_error_with_the_code(mcp_session, project):
    async with mcp_session(cwd="proj") as session:
        missing = await session.call_tool("read", {"path": "nope.py"})
        assert missing.is_error and missing.structured_content["error"]["code"] == "not_found"
        message = missing.structured_content["error"]["message"]
        assert "nope.py" in message
        assert missing.content[0].text == f"Error [not_found]: {message}"
        outside = await session.call_tool("read", {"path": "../../etc/passwd"})
        assert outside.structured_content["error"]["code"] == "path_outside_root"
        bad = await session.call_tool("grep", {"no_such_argument": 1})
        assert bad.is_error and bad.structured_content["error"]["code"] == "invalid_arguments"
        # Taken at their JSON type: a string is no boolean, a float no integer.
        for args in [{"path": "main.py", "outputs": 1}, {"path": "main.py", "offset": 2.0}]:
            coerced = await session.call_tool("read", args)
            assert coerced.structured_content["error"]["code"] == "invalid_arguments", args


async def test_lsp_through_mcp(mcp_session, project):
    async with mcp_session(cwd="proj") as session:
        definition = await session.call_tool("lsp", {"action": "definition", "file": "main.py",
                                                     "line": 4, "symbol": "area"})
        assert not definition.is_error, definition.content[0].text
        assert definition.structured_content["locations"][0]["path"] == "shapes.py"


async def test_eval_figure_arrives_as_image_and_delete_stops_the_kernel(
        mcp_session, runtime_of, project):
    async with mcp_session(cwd="proj") as session:
        result = await session.call_tool("eval", {
            "description": "plot a small line chart here",
            "code": "import os\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\n"
                    "plt.show()\nos.getpid()"})
        assert not result.is_error, result.content
        images = [block for block in result.content if block.type == "image"]
        assert len(images) == 1 and images[0].mime_type == "image/png"
        assert base64.b64decode(images[0].data).startswith(b"\x89PNG")
        pid = int(result.content[0].text.strip().splitlines()[-1])
        os.kill(pid, 0)  # the run's kernel is alive
        [run] = mcp_runs(runtime_of)
        assert Resource.KERNELS in run.resources
    with pytest.raises(ProcessLookupError):  # the DELETE answered once the kernel was gone
        os.kill(pid, 0)
    assert run.closed and mcp_runs(runtime_of) == []


def listening_addresses() -> set[tuple[str, int]]:
    """The addresses this process (the test and its in-process Jupyter server) listens on."""
    return {(c.laddr.ip, c.laddr.port) for c in psutil.Process().net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN}


async def test_the_endpoint_is_on_the_servers_port_and_opens_no_socket(
        mcp_session, mcp_url, jp_http_port, project):
    before = listening_addresses()
    assert jp_http_port in {port for _, port in before}
    assert mcp_url().startswith(f"http://localhost:{jp_http_port}/")
    async with mcp_session(cwd="proj") as session:
        read = await session.call_tool("read", {"path": "main.py"})
        assert not read.is_error
        assert listening_addresses() == before


async def test_a_session_can_eval_in_the_users_kernel(mcp_session, runtime_of, jp_serverapp):
    kernels = jp_serverapp.kernel_manager
    kernel_id = await kernels.start_kernel(kernel_name="python3")
    # The user's client of that kernel from the server side, as server-side execution
    # (jupyter-server-nbmodel) or another extension connects: through the kernel manager.
    user = kernels.get_kernel(kernel_id).client()
    user.start_channels()
    try:
        # Until the kernel answers on every channel: an IOPub message sent before the client's
        # subscription is in place is lost, and with it the end of the first execution.
        await user.wait_for_ready(timeout=60)
        reply = await user.execute_interactive("frame_rows = 42", timeout=60)
        assert reply["content"]["status"] == "ok"
        async with mcp_session(kernel_id=kernel_id) as session:
            seen = await session.call_tool("eval", {"code": "frame_rows + 1",
                                                    "description": "look at the user's frame"})
            assert not seen.is_error and seen.content[0].text == "43", seen.content
            [run] = mcp_runs(runtime_of)
            assert run.describe()["kernel_id"] == kernel_id
            # The user's client still gets its own replies (its sockets are not the run's).
            reply = await user.execute_interactive("frame_rows += 0", timeout=60)
            assert reply["content"]["status"] == "ok"
        # The session closed its run; the user's kernel runs on, its variables kept.
        assert mcp_runs(runtime_of) == [] and await kernels.get_kernel(kernel_id).is_alive()
        reply = await user.execute_interactive("assert frame_rows == 42", timeout=60)
        assert reply["content"]["status"] == "ok"
    finally:
        user.stop_channels()
        await kernels.shutdown_kernel(kernel_id)


async def test_no_token_is_401_and_creates_no_run(mcp_url, runtime_of):
    before = len(runtime_of.runs)
    async with httpx2.AsyncClient() as http:
        response = await http.post(mcp_url(), json=_initialize(), headers=_MCP_HEADERS)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert len(runtime_of.runs) == before


async def test_every_query_option_reaches_the_run(mcp_session, runtime_of, project):
    async with mcp_session(cwd="proj", approvals="deny", space="review", vibe="true",
                           conversation_id="chat-7") as session:
        assert "vibe_spawn" in {tool.name for tool in (await session.list_tools()).tools}
        assert not (await session.call_tool("glob", {"pattern": "*"})).is_error
        [run] = mcp_runs(runtime_of)
        described = run.describe()
        assert {key: described[key] for key in ("cwd", "approvals", "space", "vibe",
                                                "conversation_id", "origin")} == {
            "cwd": "proj", "approvals": "deny", "space": "review", "vibe": True,
            "conversation_id": "chat-7", "origin": "mcp"}
        assert "vibe_spawn" in {tool.name for tool in (await session.list_tools()).tools}
        # approvals=deny is the run's gate: a write-tier call through MCP is refused by it.
        refused = await session.call_tool("write", {"path": "x.txt", "content": "x\n"})
        assert refused.is_error
        assert refused.structured_content["error"]["code"] == "permission_denied"
        assert not (project / "x.txt").exists()


async def test_the_token_may_be_in_the_url_with_the_options(mcp_session, runtime_of, project,
                                                             jp_serverapp):
    """For a client that cannot set headers: jupyter_server reads `?token=`; it is no option."""
    token = jp_serverapp.identity_provider.token
    async with mcp_session(headers={}, cwd="proj", surface="plan", token=token) as session:
        assert "write" not in {tool.name for tool in (await session.list_tools()).tools}
        assert not (await session.call_tool("glob", {"pattern": "*"})).is_error
        [run] = mcp_runs(runtime_of)
        assert run.describe()["cwd"] == "proj" and run.surface.value == "plan"


async def test_bad_query_is_refused_as_post_runs_refuses_it_before_any_session(
        mcp_url, auth_headers, runtime_of, jp_serverapp, api):
    async with httpx2.AsyncClient(headers=auth_headers) as http:
        for query, code in [({"surface": "everything"}, "invalid_arguments"),
                            ({"approvals": "sometimes"}, "invalid_arguments"),
                            ({"vibe": "maybe"}, "invalid_arguments"),
                            ({"space": ""}, "invalid_arguments"),
                            ({"conversation_id": "c" * 10_000}, "invalid_arguments"),
                            ({"colour": "red"}, "invalid_arguments"),
                            ({"cwd": "../.."}, "path_outside_root"),
                            ({"cwd": "no/such/dir"}, "not_found")]:
            response = await http.post(mcp_url(**query), json=_initialize(), headers=_MCP_HEADERS)
            error = response.json()["error"]
            assert error["data"]["code"] == code, (query, error)
            assert code in error["message"] and "mcp-session-id" not in response.headers
            # The same values as a POST runs body: the same status and code.
            status, body = await api("POST", "runs", query)
            assert (response.status_code, code) == (status, body["error"]["code"]), query
            if code != "not_found":  # a bad value; a directory that does not exist is a 404
                assert response.status_code == 400, query
    assert runtime_of.runs == {}
    assert open_sessions(jp_serverapp) == {}


async def test_a_request_for_an_unknown_session_is_404(mcp_url, auth_headers):
    async with httpx2.AsyncClient(headers=auth_headers) as http:
        response = await http.post(
            mcp_url(), json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            headers={**_MCP_HEADERS, "Mcp-Session-Id": "0" * 32})
    assert response.status_code == 404


async def test_malformed_requests_get_4xx_never_5xx(mcp_url, auth_headers, runtime_of):
    async with httpx2.AsyncClient(headers=auth_headers) as http:
        answers = [
            await http.post(mcp_url(), content=b"{not json", headers=_MCP_HEADERS),
            await http.post(mcp_url(), json=[1, 2], headers=_MCP_HEADERS),
            await http.post(mcp_url(), json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                            headers=_MCP_HEADERS),
            await http.get(mcp_url(), headers={"Accept": "text/event-stream"}),
            await http.delete(mcp_url(), headers={"Mcp-Session-Id": "f" * 32}),
            await http.post(mcp_url(f"agent-tools/api/runs/{'0' * 32}/mcp"), json=_initialize(),
                            headers=_MCP_HEADERS),
        ]
        # The sessionless 2026 protocol is told to use the handshake (clients then fall back).
        modern = await http.post(mcp_url(), json={"jsonrpc": "2.0", "id": 1,
                                                  "method": "server/discover"},
                                 headers={**_MCP_HEADERS, "Mcp-Protocol-Version": "2026-07-28"})
    assert [a.status_code for a in answers] == [400, 400, 400, 400, 404, 404]
    assert modern.status_code == 400 and modern.json()["error"]["code"] == -32022
    assert runtime_of.runs == {}


async def test_two_sessions_are_isolated_runs(mcp_session, runtime_of, project):
    async with mcp_session(cwd="proj") as first, mcp_session(cwd="proj") as second:
        await first.call_tool("write", {"path": "only_first.txt", "content": "1\n"})
        await first.call_tool("eval", {"description": "set a variable in this kernel",
                                       "code": "secret = 41"})
        seen = await second.call_tool("eval", {"description": "look for that variable here",
                                               "code": "'secret' in globals()"})
        assert seen.content[0].text.strip() == "False"
        first_run, second_run = mcp_runs(runtime_of)
        assert first_run.id != second_run.id
        assert [e.tool for e in first_run.transcript.entries()] == ["write", "eval"]
        assert [e.tool for e in second_run.transcript.entries()] == ["eval"]
        assert {e.origin for e in first_run.transcript.entries()} == {"mcp"}


async def test_closing_the_run_ends_its_session(mcp_session, runtime_of, api):
    async with mcp_session() as session:
        assert not (await session.call_tool("glob", {"pattern": "*"})).is_error
        [run] = mcp_runs(runtime_of)
        code, _ = await api("DELETE", f"runs/{run.id}")
        assert code == 204
        with pytest.raises(Exception):  # noqa: B017 - the SDK's error for a session that ended
            await session.list_tools()


async def test_the_run_route_serves_an_existing_run_and_leaves_it_open(mcp_session, api):
    code, run = await api("POST", "runs", {"surface": "plan"})
    async with mcp_session(f"agent-tools/api/runs/{run['id']}/mcp") as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert tools == set(run["tools"])
        result = await session.call_tool("glob", {"pattern": "*"})
        assert not result.is_error
    code, described = await api("GET", f"runs/{run['id']}")
    assert code == 200 and described["origin"] == "http"  # the run is still there
    code, transcript = await api("GET", f"runs/{run['id']}/transcript")
    assert [entry["origin"] for entry in transcript] == ["mcp"]


async def test_the_run_route_refuses_options_it_would_ignore(mcp_url, auth_headers, api):
    _, run = await api("POST", "runs", {"surface": "full"})
    async with httpx2.AsyncClient(headers=auth_headers) as http:
        refused = await http.post(mcp_url(f"agent-tools/api/runs/{run['id']}/mcp", surface="plan"),
                                  json=_initialize(), headers=_MCP_HEADERS)
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["data"]["code"] == "invalid_arguments" and "['surface']" in error["message"]
    assert "mcp-session-id" not in refused.headers


async def test_a_run_token_works_on_its_run_route_only(mcp_url, runtime_of, api, jp_serverapp):
    _, run = await api("POST", "runs", {})
    token = runtime_of.run_tokens.issue(run["id"])
    headers = {"Authorization": f"token {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        refused = await http.post(mcp_url(), json=_initialize(), headers=_MCP_HEADERS)
        assert refused.status_code == 403
        async with streamable_http_client(mcp_url(f"agent-tools/api/runs/{run['id']}/mcp"),
                                          http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            assert (await session.list_tools()).tools
        # Not another run's route: a token is bound to its own run.
        _, other = await api("POST", "runs", {})
        elsewhere = await http.post(mcp_url(f"agent-tools/api/runs/{other['id']}/mcp"),
                                    json=_initialize(), headers=_MCP_HEADERS)
        assert elsewhere.status_code == 403
    assert set(runtime_of.runs) == {run["id"], other["id"]}
    assert open_sessions(jp_serverapp) == {}


_MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _initialize() -> dict:
    return json.loads(json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}}))


async def test_a_call_is_answered_in_json_unless_it_asks_for_progress(mcp_url, auth_headers, project):
    """One JSON body per answer (cheaper, keeps the connection); a call with a progress token
    gets an event stream, where its progress is said before its answer."""
    async with httpx2.AsyncClient(headers=auth_headers, timeout=60) as http:
        opened = await http.post(mcp_url(cwd="proj"), json=_initialize(), headers=_MCP_HEADERS)
        assert opened.headers["content-type"].startswith("application/json")
        assert opened.json()["result"]["serverInfo"]["name"] == "jupyter-agent-tools"
        headers = {**_MCP_HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"],
                   "Mcp-Protocol-Version": "2025-11-25"}
        await http.post(mcp_url(), json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                        headers=headers)

        def call(request_id: int, meta: dict | None = None) -> dict:
            params: dict = {"name": "read", "arguments": {"path": "main.py"}}
            if meta is not None:
                params["_meta"] = meta
            return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}

        plain = await http.post(mcp_url(), json=call(2), headers=headers)
        assert plain.status_code == 200
        assert plain.headers["content-type"].startswith("application/json")
        assert "Square(2.0)" in plain.json()["result"]["content"][0]["text"]

        streamed = await http.post(mcp_url(), json=call(3, {"progressToken": "p1"}),
                                   headers=headers)
        assert streamed.headers["content-type"].startswith("text/event-stream")
        events = [json.loads(line.removeprefix("data: ")) for line in streamed.text.splitlines()
                  if line.startswith("data: ") and line != "data: "]
        assert events[-1]["id"] == 3 and "Square(2.0)" in events[-1]["result"]["content"][0]["text"]
        await http.delete(mcp_url(), headers=headers)


async def test_a_json_answer_cut_short_by_the_run_closing_is_404_not_5xx(mcp_url, auth_headers,
                                                                          runtime_of, api):
    async with httpx2.AsyncClient(headers=auth_headers, timeout=60) as http:
        opened = await http.post(mcp_url(), json=_initialize(), headers=_MCP_HEADERS)
        headers = {**_MCP_HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"],
                   "Mcp-Protocol-Version": "2025-11-25"}
        await http.post(mcp_url(), json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                        headers=headers)
        call = http.post(mcp_url(), headers=headers, json={
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "bash", "arguments": {"command": "sleep 30"}}})
        pending = asyncio.ensure_future(call)
        while not mcp_runs(runtime_of) or not mcp_runs(runtime_of)[0].transcript.entries():
            await asyncio.sleep(0.05)  # until the call is in progress (its run made for it)
        [run] = mcp_runs(runtime_of)
        code, _ = await api("DELETE", f"runs/{run.id}")
        assert code == 204
        answer = await asyncio.wait_for(pending, 30)
        after = await http.post(mcp_url(), headers=headers, json={
            "jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    # Either the session's end (404) or, when the run's jobs ended first, the call's own
    # answer that its run closed: never a 5xx. Then the session is over.
    if answer.status_code == 404:
        assert answer.json()["id"] == 2 and answer.json()["error"]["message"]
        assert answer.json()["error"]["data"]["code"] == "not_found"
    else:
        assert answer.status_code == 200, answer.text
        result = answer.json()["result"]
        assert result["isError"] and result["structuredContent"]["error"]["code"] == "not_found"
    assert after.status_code == 404 and after.json()["id"] == 3, after.text


async def test_deep_undecodable_or_oversized_bodies_get_4xx_never_5xx(mcp_url, auth_headers,
                                                                      runtime_of, jp_serverapp):
    deep = b"[" * 100_000 + b"]" * 100_000
    async with httpx2.AsyncClient(headers=auth_headers, timeout=60) as http:
        opened = await http.post(mcp_url(), json=_initialize(), headers=_MCP_HEADERS)
        session = {**_MCP_HEADERS, "Mcp-Session-Id": opened.headers["Mcp-Session-Id"]}
        answers = {
            "deep, no session": await http.post(mcp_url(), content=deep, headers=_MCP_HEADERS),
            "deep, in a session": await http.post(mcp_url(), content=deep, headers=session),
            "not UTF-8": await http.post(mcp_url(), content=b'{"method": "\xff\xfe"}',
                                         headers=_MCP_HEADERS),
            "not UTF-8, in a session": await http.post(mcp_url(), content=b'{"a": "\xff"}',
                                                       headers=session),
            "over the size limit": await http.post(
                mcp_url(), content=b'{"x": "' + b"a" * (5 * 2**20) + b'"}', headers=session),
        }
        document = (await http.get(mcp_url("agent-tools/api/openapi.json"))).json()
    statuses = {what: answer.status_code for what, answer in answers.items()}
    assert all(400 <= status < 500 for status in statuses.values()), statuses
    declared = document["paths"]["/agent-tools/mcp"]["post"]["responses"]
    assert {str(status) for status in statuses.values()} <= set(declared), statuses
    too_big = answers["over the size limit"]
    assert too_big.status_code == 413 and "max_request_bytes" in too_big.json()["error"]["message"]
    # Only the session opened above, which holds no run: it has called no tool.
    assert len(open_sessions(jp_serverapp)) == 1 and runtime_of.runs == {}


async def test_a_notebook_is_filled_and_run_through_mcp_with_its_figure_as_an_image(
        mcp_session, jp_root_dir, jp_serverapp):
    import nbformat
    from nbformat.v4 import new_notebook

    path = jp_root_dir / "plots.ipynb"
    nbformat.write(new_notebook(metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}}), path)
    async with mcp_session() as session:
        result = await session.call_tool("notebook", {
            "action": "insert", "path": "plots.ipynb", "run": True,
            "source": "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\n"
                      "plt.show()"})
        assert not result.is_error, result.content
        images = [block for block in result.content if block.type == "image"]
        assert len(images) == 1 and base64.b64decode(images[0].data).startswith(b"\x89PNG")
        kernel_id = result.structured_content["kernel_id"]
    # Saved in the notebook, whose own kernel outlives the MCP session (it is the notebook's).
    outputs = nbformat.read(path, 4).cells[0].outputs
    assert any("image/png" in output.get("data", {}) for output in outputs)
    assert kernel_id in jp_serverapp.kernel_manager.list_kernel_ids()
