"""agent-tools/mcp with the MCP SDK's own client against a real Jupyter server: a run per session."""

from __future__ import annotations

import asyncio
import base64
import json
import os

import httpx2
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


async def test_a_session_is_a_run_that_sees_its_surface(mcp_session, runtime_of, project):
    async with mcp_session(cwd="proj") as full:
        full_tools = {tool.name: tool for tool in (await full.list_tools()).tools}
        [run] = mcp_runs(runtime_of)
        assert run.describe()["origin"] == "mcp" and run.describe()["cwd"] == "proj"
        assert run.space == "lab"  # cards go to the JupyterLab panel by default
        assert set(full_tools) == set(run.tool_names())
        assert {"write", "bash", "eval", "ask_user"} <= set(full_tools)
        assert full_tools["read"].input_schema["properties"]["path"]
        assert full_tools["read"].annotations.read_only_hint is True
        assert full_tools["write"].annotations.read_only_hint is False
        async with mcp_session(cwd="proj", surface="plan") as plan:
            plan_tools = {tool.name for tool in (await plan.list_tools()).tools}
            assert plan_tools and not {"write", "edit", "bash", "eval"} & plan_tools
            assert {"read", "grep", "ast_grep"} <= plan_tools
            refused = await plan.call_tool("write", {"path": "x.py", "content": "x"})
            assert refused.is_error and refused.structured_content["error"]["code"] == "unknown_tool"
            assert len(mcp_runs(runtime_of)) == 2  # two sessions, two runs
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
        assert "[not_found]" in missing.content[0].text
        outside = await session.call_tool("read", {"path": "../../etc/passwd"})
        assert outside.structured_content["error"]["code"] == "path_outside_root"
        bad = await session.call_tool("grep", {"no_such_argument": 1})
        assert bad.is_error and bad.structured_content["error"]["code"] == "invalid_arguments"


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


async def test_no_token_is_403_and_creates_no_run(mcp_url, runtime_of):
    before = len(runtime_of.runs)
    async with httpx2.AsyncClient() as http:
        response = await http.post(mcp_url(), json=_initialize(), headers=_MCP_HEADERS)
    assert response.status_code == 403
    assert len(runtime_of.runs) == before


async def test_bad_query_is_400_with_the_code_and_creates_no_run(mcp_url, auth_headers, runtime_of):
    async with httpx2.AsyncClient(headers=auth_headers) as http:
        for query, code in [({"surface": "everything"}, "invalid_arguments"),
                            ({"vibe": "maybe"}, "invalid_arguments"),
                            ({"colour": "red"}, "invalid_arguments"),
                            ({"cwd": "../.."}, "path_outside_root"),
                            ({"cwd": "no/such/dir"}, "not_found")]:
            response = await http.post(mcp_url(**query), json=_initialize(), headers=_MCP_HEADERS)
            assert 400 <= response.status_code < 500, (query, response.status_code)
            error = response.json()["error"]
            assert error["data"]["code"] == code, (query, error)
    assert runtime_of.runs == {}


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


async def test_a_run_token_works_on_its_run_route_only(mcp_url, runtime_of, api):
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
    assert len(runtime_of.runs) == 1


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
        [run] = mcp_runs(runtime_of)
        while not run.transcript.entries():  # the call is in progress
            await asyncio.sleep(0.05)
        code, _ = await api("DELETE", f"runs/{run.id}")
        assert code == 204
        answer = await asyncio.wait_for(pending, 30)
    assert answer.status_code == 404
    assert answer.json()["error"]["message"]


async def test_deep_undecodable_or_oversized_bodies_get_4xx_never_5xx(mcp_url, auth_headers,
                                                                      runtime_of):
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
    assert len(runtime_of.runs) == 1  # only the session opened above
