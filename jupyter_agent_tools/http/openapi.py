"""The OpenAPI 3.1 document, generated from the route table and the handlers' models.

Each handler class declares its `operations` (base.Operation); paths and path parameters
come from the route regexes, bodies and answers from the pydantic models, so the document
cannot drift from what is served. Tests hold served routes and the document to each other,
and schemathesis holds the answers to the document.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from pydantic import TypeAdapter
from tornado import web

from .._version import __version__
from .base import Operation
from .events import EVENT_ADAPTER, EVENT_MODELS, AnyEvent
from .models import ErrorResponse
from .routes import HANDLER_MODULES, load_routes

REF_TEMPLATE = "#/components/schemas/{model}"
_GROUP = re.compile(r"\(\?P<(\w+)>([^)]*)\)")

_ERROR_DESCRIPTIONS = {
    400: "Invalid input: a body or query that does not fit the model, or a bad value",
    401: "No valid token (missing, wrong, expired or revoked); `WWW-Authenticate: Bearer`, and "
         "the message says which header to send and where a token comes from",
    403: "Not authorized for this resource (or a browser POST without its XSRF token)",
    404: "No such run, card, edit or directory",
    406: "The Accept header does not take what the route answers",
    409: "The current state refuses it (a closed card, the run limit reached)",
    413: "The body is larger than c.AgentToolsApp.max_request_bytes, or holds more JSON values "
         "than c.AgentToolsApp.max_request_values",
}
_SUCCESS_DESCRIPTIONS = {200: "OK", 101: "Switching protocols (WebSocket)", 201: "Created",
                         202: "Accepted; no body", 204: "Done; no body"}

SECURITY_SCHEMES = {
    "token": {
        "type": "apiKey", "in": "header", "name": "Authorization",
        "description": "`Authorization: token <token>` (or `Bearer <token>`): an agent token "
                       "(`jat_…`, minted by the user with a ceiling; the routes an agent uses, "
                       "its own runs only), the server's token, or a run token (on its own "
                       "run's routes only).",
    },
    "tokenQuery": {
        "type": "apiKey", "in": "query", "name": "token",
        "description": "The server's token as `?token=`, or an agent token on agent-tools/mcp "
                       "(run tokens are accepted only in the header).",
    },
}


def _parameter_name(group: str) -> str:
    return "id" if group == "run_id" else group


def route_template(pattern: str) -> str:
    """The OpenAPI path of a handler's URL regex: `runs/(?P<run_id>...)` → `/runs/{id}`."""
    path = _GROUP.sub(lambda m: "{" + _parameter_name(m.group(1)) + "}", pattern)
    return "/" + path.replace("\\.", ".")


def _path_parameters(pattern: str) -> list[dict[str, Any]]:
    return [{"name": _parameter_name(name), "in": "path", "required": True,
             "schema": {"type": "string", "pattern": f"^{regex}$"}}
            for name, regex in _GROUP.findall(pattern)]


def _undocumented_operations(handler: type) -> dict[str, Operation]:
    """A handler from a plug-in without `operations`: its verbs, with its docstring."""
    summary = (handler.__doc__ or handler.__name__).strip().splitlines()[0]
    return {method: Operation(summary, {200: Any})
            for method in ("get", "post", "put", "patch", "delete")
            if getattr(handler, method) is not getattr(web.RequestHandler, method)}


def _documented_routes(handlers: Iterable[tuple[Any, ...]]) -> list[tuple[str, dict[str, Operation]]]:
    from .base import RouteNotFoundHandler

    routes = []
    for pattern, handler, *_ in handlers:
        if handler is RouteNotFoundHandler:
            continue
        operations = getattr(handler, "operations", None) or _undocumented_operations(handler)
        routes.append((pattern, operations))
    return routes


def _schemas(routes: list[tuple[str, dict[str, Operation]]]) -> tuple[dict[Any, Any], dict[str, Any]]:
    """Every model's JSON schema in one pass (consistent names), and the shared definitions."""
    inputs: list[tuple[Any, Any, TypeAdapter[Any]]] = [
        (ErrorResponse, "serialization", TypeAdapter(ErrorResponse))]
    inputs += [(model, "serialization", TypeAdapter(model)) for model in EVENT_MODELS]
    inputs.append((AnyEvent, "serialization", EVENT_ADAPTER))
    for _, operations in routes:
        for operation in operations.values():
            for model in (operation.body, operation.query):
                if model is not None:
                    inputs.append((model, "validation", TypeAdapter(model)))
            answers = [*operation.responses.values(), operation.error_body]
            inputs += [(annotation, "serialization", TypeAdapter(annotation))
                       for annotation in answers if annotation is not None]
    unique = list({(key, mode): (key, mode, adapter) for key, mode, adapter in inputs}.values())
    by_key, definitions = TypeAdapter.json_schemas(unique, ref_template=REF_TEMPLATE)
    return by_key, definitions.get("$defs", {})


def _json_content(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def _operation(pattern: str, operation: Operation, schemas: dict[Any, Any],
               definitions: dict[str, Any]) -> dict[str, Any]:
    parameters = _path_parameters(pattern)
    if operation.query is not None:
        query = schemas[(operation.query, "validation")]
        query = definitions[query["$ref"].rsplit("/", 1)[1]] if "$ref" in query else query
        parameters += [{"name": name, "in": "query", "required": False, "schema": schema}
                       for name, schema in query["properties"].items()]
    responses: dict[str, Any] = {}
    for status, annotation in operation.responses.items():
        responses[str(status)] = {"description": _SUCCESS_DESCRIPTIONS.get(status, "OK")}
        if annotation is not None:
            responses[str(status)]["content"] = _json_content(schemas[(annotation, "serialization")])
        if operation.headers:
            responses[str(status)]["headers"] = {
                name: {"description": header.description, "required": True,
                       "schema": {"type": header.type}}
                for name, header in operation.headers.items()}
    # What the server answers before the handler's own code.
    served = {401, 403}
    if operation.body is not None:
        served |= {400, 413}
    if operation.query is not None or operation.websocket:
        served.add(400)
    if parameters and any(p["in"] == "path" for p in parameters):
        served.add(404)  # also the JSON 404 of a path no route serves
    error_schema = schemas[(ErrorResponse, "serialization")]
    for status in sorted(served | operation.errors):
        shapes = []
        # A 401 is the protocol's own error where the route has one (an MCP client shows it).
        own = status in operation.errors or status == 401
        if own and operation.error_body is not None:
            shapes.append(schemas[(operation.error_body, "serialization")])
        if (status in served and status != 401) or operation.error_body is None:
            shapes.append(error_schema)
        schema = shapes[0] if len(shapes) == 1 else {"anyOf": shapes}
        responses[str(status)] = {"description": _ERROR_DESCRIPTIONS[status],
                                  "content": _json_content(schema)}
    document: dict[str, Any] = {"summary": operation.summary, "responses": responses}
    if parameters:
        document["parameters"] = parameters
    if operation.body is not None:
        document["requestBody"] = {
            "required": operation.body_required,
            "content": _json_content(schemas[(operation.body, "validation")]),
        }
    return document


def openapi_document(base_url: str = "/",
                     handlers: Iterable[tuple[Any, ...]] | None = None) -> dict[str, Any]:
    """The document of `handlers` (a route table); with none, of the default handler modules.

    Every route is documented with every status it can answer; components hold the request,
    response and WebSocket event models.
    """
    if handlers is None:
        handlers = load_routes(HANDLER_MODULES)
    routes = _documented_routes(handlers)
    schemas, definitions = _schemas(routes)
    # The frames of the WebSocket routes: one model per kind, told apart by `type`.
    definitions = {**definitions, "Event": schemas[(AnyEvent, "serialization")]}
    paths: dict[str, dict[str, Any]] = {}
    for pattern, operations in routes:
        item = paths.setdefault(route_template(pattern), {})
        for method, operation in operations.items():
            item[method] = _operation(pattern, operation, schemas, definitions)
    return {
        "openapi": "3.1.0",
        "info": {"title": "jupyter-agent-tools", "version": __version__,
                 "description": "The agent-tools HTTP API. Errors are `{error: {code, message}}` "
                                "with a contract error code; tool failures are `ok: false` "
                                "results with status 200."},
        "servers": [{"url": base_url.rstrip("/") or "/"}],
        "security": [{"token": []}, {"tokenQuery": []}],
        "paths": paths,
        "components": {"schemas": definitions, "securitySchemes": SECURITY_SCHEMES},
    }

