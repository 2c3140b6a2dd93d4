"""The OpenAPI 3 description of every route under agent-tools/api/ (tests hold it to the routes)."""

from __future__ import annotations

import re
from typing import Any

from . import __version__

_RUN_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
_ERROR = {
    "description": "An error: {error: {code, message}}",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}


def _json(description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": schema or {"type": "object"}}},
    }


def _op(summary: str, responses: dict[str, Any], *, params=(), body=None) -> dict[str, Any]:
    op: dict[str, Any] = {"summary": summary, "responses": {**responses, "403": _json("Not authenticated or not authorized")}}
    if params:
        op["parameters"] = list(params)
    if body is not None:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
    return op


PATHS: dict[str, dict[str, Any]] = {
    "/agent-tools/api/status": {
        "get": _op("Languages, debug adapters, kernels: available or why not",
                   {"200": _json("Status")}),
    },
    "/agent-tools/api/openapi.json": {
        "get": _op("This document", {"200": _json("OpenAPI 3 document")}),
    },
    "/agent-tools/api/runs": {
        "get": _op("List runs", {"200": _json("Runs", {"type": "array", "items": {"$ref": "#/components/schemas/Run"}})}),
        "post": _op("Create a run", {"201": _json("The run", {"$ref": "#/components/schemas/Run"}), "400": _ERROR},
                    body={"$ref": "#/components/schemas/RunRequest"}),
    },
    "/agent-tools/api/runs/{id}": {
        "get": _op("Describe a run", {"200": _json("The run", {"$ref": "#/components/schemas/Run"}), "404": _ERROR}, params=[_RUN_ID]),
        "delete": _op("Close a run, releasing everything it holds", {"204": {"description": "Closed"}, "404": _ERROR}, params=[_RUN_ID]),
    },
    "/agent-tools/api/runs/{id}/tools": {
        "get": _op("Schemas of the tools visible to the run", {"200": _json("Schemas", {"type": "array"}), "404": _ERROR},
                   params=[_RUN_ID, {"name": "format", "in": "query", "schema": {"type": "string", "enum": ["json", "openai", "anthropic"]}}]),
    },
    "/agent-tools/api/runs/{id}/calls": {
        "post": _op("Call a tool (tool failures are ok: false, not HTTP errors)",
                    {"200": _json("The result", {"$ref": "#/components/schemas/Result"}), "404": _ERROR},
                    params=[_RUN_ID],
                    body={"type": "object", "required": ["tool"], "properties": {"tool": {"type": "string"}, "args": {"type": "object"}}}),
    },
    "/agent-tools/api/runs/{id}/transcript": {
        "get": _op("Every call of the run: tool, label, args, ok, duration", {"200": _json("Transcript", {"type": "array"}), "404": _ERROR}, params=[_RUN_ID]),
    },
    "/agent-tools/api/runs/{id}/events": {
        "get": _op("WebSocket: calls, questions, staged/resolved edits, workers", {"101": {"description": "Switching protocols"}, "404": _ERROR}, params=[_RUN_ID]),
    },
    "/agent-tools/api/runs/{id}/questions": {
        "get": _op("Pending question cards", {"200": _json("Cards", {"type": "array"}), "404": _ERROR}, params=[_RUN_ID]),
    },
    "/agent-tools/api/runs/{id}/questions/{qid}": {
        "post": _op("Answer or skip a card", {"200": _json("The card, answered"), "400": _ERROR, "404": _ERROR, "409": _ERROR},
                    params=[_RUN_ID, {"name": "qid", "in": "path", "required": True, "schema": {"type": "string"}}],
                    body={"type": "object", "properties": {"answer": {}, "text": {"type": "string"}, "skip": {"type": "boolean"}}}),
    },
    "/agent-tools/api/runs/{id}/edits": {
        "get": _op("Staged edits and their diffs", {"200": _json("Edits", {"type": "array"}), "404": _ERROR}, params=[_RUN_ID]),
    },
    "/agent-tools/api/runs/{id}/edits/{edit_id}": {
        "get": _op("One staged edit and its diff", {"200": _json("Edit"), "404": _ERROR},
                   params=[_RUN_ID, {"name": "edit_id", "in": "path", "required": True, "schema": {"type": "string"}}]),
    },
    "/agent-tools/mcp": {
        m: _op(f"MCP streamable HTTP ({m.upper()}): initialize opens a session with a run of its own "
               "(query: cwd, surface, approvals, space, vibe, conversation_id); DELETE closes both",
               {"200": {"description": "JSON-RPC, as JSON or server-sent events"}, "400": _ERROR, "404": _ERROR},
               params=[{"name": name, "in": "query", "schema": {"type": "string"}}
                       for name in ("cwd", "surface", "approvals", "space", "vibe", "conversation_id")])
        for m in ("get", "post", "delete")
    },
    "/agent-tools/api/runs/{id}/mcp": {
        m: _op(f"MCP streamable HTTP ({m.upper()}) over this existing run; see agent-tools/mcp",
               {"200": {"description": "JSON-RPC, as JSON or server-sent events"}, "400": _ERROR, "404": _ERROR},
               params=[_RUN_ID])
        for m in ("get", "post", "delete")
    },
    "/agent-tools/api/spaces/{space}/events": {
        "get": _op("WebSocket for a human front end: the cards of every run targeting the space",
                   {"101": {"description": "Switching protocols"}},
                   params=[{"name": "space", "in": "path", "required": True, "schema": {"type": "string"}}]),
    },
}

COMPONENTS: dict[str, Any] = {
    "schemas": {
        "Error": {"type": "object", "properties": {"error": {"type": "object", "properties": {
            "code": {"type": "string"}, "message": {"type": "string"}}}}},
        "RunRequest": {"type": "object", "properties": {
            "cwd": {"type": "string"}, "surface": {"type": "string", "enum": ["full", "plan", "readonly"]},
            "conversation_id": {"type": "string", "nullable": True}, "vibe": {"type": "boolean"},
            "approvals": {"type": "string", "enum": ["auto", "ask", "deny"]},
            "space": {"type": "string", "nullable": True},
            "resources": {"type": "array", "items": {"type": "string"}, "nullable": True}}},
        "Run": {"type": "object", "properties": {
            "id": {"type": "string"}, "cwd": {"type": "string"}, "surface": {"type": "string"},
            "tools": {"type": "array", "items": {"type": "string"}}}},
        "Result": {"type": "object", "properties": {
            "ok": {"type": "boolean"}, "text": {"type": "string"}, "data": {"type": "object"},
            "error": {"type": "object", "nullable": True}, "blocks": {"type": "array"}}},
    }
}


def route_template(pattern: str) -> str:
    """The OpenAPI path of a handler's URL regex: `runs/(?P<run_id>...)` → `/runs/{id}`."""
    def name(match: re.Match[str]) -> str:
        return "{id}" if match.group(1) == "run_id" else "{" + match.group(1) + "}"

    return "/" + re.sub(r"\(\?P<(\w+)>[^)]*\)", name, pattern).replace("\\.", ".")


def openapi_document(base_url: str = "/", served: set[str] | None = None) -> dict[str, Any]:
    """The document for the routes this server serves (all of PATHS when `served` is None)."""
    paths = PATHS if served is None else {p: item for p, item in PATHS.items() if p in served}
    return {
        "openapi": "3.0.3",
        "info": {"title": "jupyter-agent-tools", "version": __version__},
        "servers": [{"url": base_url.rstrip("/") or "/"}],
        "paths": paths,
        "components": COMPONENTS,
    }
