"""The HTTP and WebSocket API over a real Jupyter server with the extension enabled."""

from __future__ import annotations

import json
import re

import pytest
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest
from tornado.web import RequestHandler
from tornado.websocket import websocket_connect

from jupyter_agent_tools.openapi import route_template

_FAKE = {"{id}": "0" * 32, "{qid}": "q1", "{edit_id}": "edit_1", "{space}": "lab"}


def _concrete(template: str) -> str:
    return re.sub(r"\{\w+\}", lambda m: _FAKE[m.group(0)], template)


async def _document(api):
    code, document = await api("GET", "openapi.json")
    assert code == 200
    return document


async def test_openapi_documents_exactly_the_served_routes_and_methods(api, jp_serverapp):
    document = await _document(api)
    served = {route_template(rule.matcher.regex.pattern.lstrip("/").rstrip("$")): rule.target
              for rule in jp_serverapp.web_app.default_router.rules[0].target.rules
              if "agent-tools/" in rule.matcher.regex.pattern}
    served = {path.replace(jp_serverapp.base_url.rstrip("/"), "", 1): handler
              for path, handler in served.items()}
    assert set(document["paths"]) == set(served)
    for path, item in document["paths"].items():
        handler = served[path]
        implemented = {m for m in ("get", "post", "delete", "put", "patch")
                       if getattr(handler, m) is not getattr(RequestHandler, m)}
        assert set(item) == implemented, (path, set(item), implemented)


async def test_every_route_refuses_requests_without_a_token(api, jp_base_url, jp_http_port):
    document = await _document(api)
    client = AsyncHTTPClient()
    base = f"http://localhost:{jp_http_port}{jp_base_url}"
    checked = 0
    for template, item in document["paths"].items():
        url = base + _concrete(template).lstrip("/")
        if template.endswith("/events"):
            with pytest.raises(HTTPClientError) as refused:
                await websocket_connect(url.replace("http://", "ws://"))
            assert refused.value.code == 403
            checked += 1
            continue
        for method in item:
            body = "{}" if method in ("post", "put", "patch") else None
            response = await client.fetch(
                HTTPRequest(url, method=method.upper(), body=body, allow_nonstandard_methods=True),
                raise_error=False,
            )
            assert response.code == 403, (method, template, response.code)
            checked += 1
    assert checked >= 10


async def test_run_lifecycle_over_http(api, jp_root_dir):
    (jp_root_dir / "notes.txt").write_text("alpha\nbeta\n")
    code, run = await api("POST", "runs", {"cwd": ".", "surface": "full"})
    assert code == 201 and {"read", "write", "bash"} <= set(run["tools"])
    run_id = run["id"]
    code, listed = await api("GET", "runs")
    assert code == 200 and [r["id"] for r in listed] == [run_id]
    code, described = await api("GET", f"runs/{run_id}")
    assert described["cwd"] == "." and described["surface"] == "full"

    code, result = await api("POST", f"runs/{run_id}/calls", {"tool": "read", "args": {"path": "notes.txt"}})
    assert code == 200 and result["ok"] and "beta" in result["text"]
    assert result["blocks"] == [{"type": "text", "text": result["text"]}]
    code, failed = await api("POST", f"runs/{run_id}/calls", {"tool": "read", "args": {"path": "../x"}})
    assert code == 200 and failed["ok"] is False and failed["error"]["code"] == "path_outside_root"

    code, transcript = await api("GET", f"runs/{run_id}/transcript")
    assert [(e["tool"], e["ok"], e["origin"]) for e in transcript] == [("read", True, "http"), ("read", False, "http")]

    code, schemas = await api("GET", f"runs/{run_id}/tools", format="openai")
    assert code == 200 and all(s["type"] == "function" for s in schemas)
    code, error = await api("GET", f"runs/{run_id}/tools", format="yaml")
    assert code == 400 and error["error"]["code"] == "invalid_arguments"

    code, _ = await api("DELETE", f"runs/{run_id}")
    assert code == 204
    code, gone = await api("GET", f"runs/{run_id}")
    assert code == 404 and gone["error"]["code"] == "not_found" and "traceback" not in gone


async def test_bad_requests_get_json_errors(api):
    code, error = await api("POST", "runs", {"surface": "everything"})
    assert code == 400 and error["error"]["code"] == "invalid_arguments"
    code, error = await api("POST", "runs", {"cwd": "../.."})
    assert code == 400 and error["error"]["code"] == "path_outside_root"
    code, error = await api("POST", "runs", {"colour": "red"})
    assert code == 400 and "colour" in error["error"]["message"]
    code, run = await api("POST", "runs", {"surface": "plan"})
    code, result = await api("POST", f"runs/{run['id']}/calls", {"tool": "write", "args": {"path": "a", "content": ""}})
    assert code == 200 and result["error"]["code"] == "unknown_tool"
    code, error = await api("POST", f"runs/{run['id']}/calls", {"args": {}})
    assert code == 400


async def test_status_reports_tools_and_resources(api):
    code, status = await api("GET", "status")
    assert code == 200 and "read" in status["tools"] and "resources" in status
    assert status["tool_load_errors"] == {}


async def test_run_events_stream_calls(api, jp_ws_fetch, jp_root_dir):
    (jp_root_dir / "a.txt").write_text("a\n")
    _, run = await api("POST", "runs", {})
    ws = await jp_ws_fetch("agent-tools", "api", "runs", run["id"], "events")
    # the stream is live once the handler subscribed; a call made now must be seen
    for _ in range(50):
        code, _ = await api("POST", f"runs/{run['id']}/calls", {"tool": "read", "args": {"path": "a.txt"}})
        message = json.loads(await ws.read_message())
        if message["type"] == "call_started":
            break
    finished = json.loads(await ws.read_message())
    assert finished["type"] == "call_finished" and finished["ok"] is True
    assert finished["tool"] == "read" and finished["label"] == "read a.txt"
    ws.close()


async def test_one_runs_events_are_not_anothers(api, jp_ws_fetch):
    with pytest.raises(HTTPClientError) as missing:
        await jp_ws_fetch("agent-tools", "api", "runs", "f" * 32, "events")
    assert missing.value.code == 404
