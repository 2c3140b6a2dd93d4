"""The OpenAPI document: generated from the route table and the models, held to what is served."""

from __future__ import annotations

import re

import pytest
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest
from tornado.web import RequestHandler
from tornado.websocket import websocket_connect

from jupyter_agent_tools.http.events import EVENT_MODELS
from jupyter_agent_tools.http.openapi import openapi_document, route_template
from jupyter_agent_tools.http.routes import RouteNotFoundHandler

_FAKE = {"{id}": "0" * 32, "{qid}": "q1", "{edit_id}": "edit_1", "{space}": "lab",
         "{token_id}": "0" * 16}


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
              if "agent-tools/" in rule.matcher.regex.pattern
              and rule.target is not RouteNotFoundHandler}
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
            assert refused.value.code == 401, template
            assert refused.value.response.headers["WWW-Authenticate"].startswith("Bearer")
            checked += 1
            continue
        for method in item:
            body = "{}" if method in ("post", "put", "patch") else None
            response = await client.fetch(
                HTTPRequest(url, method=method.upper(), body=body, allow_nonstandard_methods=True),
                raise_error=False,
            )
            assert response.code == 401, (method, template, response.code)
            assert response.headers["WWW-Authenticate"].startswith("Bearer"), (method, template)
            checked += 1
    assert checked >= 10


async def test_the_document_declares_the_token_security_schemes(api):
    document = await _document(api)
    schemes = document["components"]["securitySchemes"]
    assert schemes["token"] == {**schemes["token"], "type": "apiKey", "in": "header",
                                "name": "Authorization"}
    assert schemes["tokenQuery"]["in"] == "query" and schemes["tokenQuery"]["name"] == "token"
    assert {"token": []} in document["security"]


async def test_every_operation_declares_the_errors_it_can_answer(api):
    document = await _document(api)
    for path, item in document["paths"].items():
        for method, operation in item.items():
            statuses = set(operation["responses"])
            assert "403" in statuses, (method, path)
            assert "401" in statuses, (method, path)
            if "{" in path:
                assert "404" in statuses, (method, path)
            if "requestBody" in operation:
                assert {"400", "413"} <= statuses, (method, path)
            for status, response in operation["responses"].items():
                if status.startswith("4"):
                    schema = response["content"]["application/json"]["schema"]
                    shapes = {ref["$ref"].rsplit("/", 1)[1]
                              for ref in schema.get("anyOf", [schema])}
                    # MCP refuses in JSON-RPC; the server's auth and unknown paths do not.
                    assert shapes <= {"ErrorResponse", "McpRefusal"}, (path, status, shapes)
                    assert ("McpRefusal" in shapes) == (path.endswith("/mcp") and status != "403")
                    assert ("ErrorResponse" in shapes) == (not path.endswith("/mcp")
                                                           or status == "403"
                                                           or ("{" in path and status == "404"))
    create = document["paths"]["/agent-tools/api/runs"]["post"]
    assert set(create["responses"]) == {"201", "400", "401", "403", "404", "409", "413"}


async def test_bodies_answers_and_events_are_components(api):
    schemas = (await _document(api))["components"]["schemas"]
    run_request = schemas["RunRequest"]
    assert run_request["additionalProperties"] is False
    assert run_request["properties"]["origin"]["enum"] == ["http", "notebook"]
    assert "origin" in schemas["RunDescriptor"]["properties"]
    for name in ("CallResult", "QuestionCard", "StagedEdit", "TranscriptEntry", "ErrorResponse"):
        assert name in schemas
    kinds = {model.__name__ for model in EVENT_MODELS}
    assert kinds <= set(schemas)
    assert schemas["Event"]["discriminator"]["propertyName"] == "type"


async def test_the_document_without_a_server_is_the_served_one(api):
    served = await _document(api)
    offline = openapi_document()
    assert offline["paths"] == served["paths"]
    assert offline["components"] == served["components"]


def test_every_route_passes_jupyter_servers_own_authentication_check(jp_serverapp):
    # jupyter_server warns of a route method with no authentication mark (and refuses to serve
    # it when allow_unauthenticated_access is off): every method of ours has one.
    ours = [(rule.matcher, rule.target)
            for rule in jp_serverapp.web_app.default_router.rules[0].target.rules
            if "agent-tools" in rule.matcher.regex.pattern]
    assert len(ours) >= 10
    missing = [line for matcher, handler in ours
               for line in jp_serverapp.web_app._check_handler_auth(matcher, handler)]
    assert missing == []
