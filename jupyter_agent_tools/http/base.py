"""What every agent-tools handler shares: bounded, typed bodies and JSON errors.

A handler class declares its `operations` (one `Operation` per verb: summary, body model,
query model, response model per status). Bodies are parsed and answers serialized through
those models, and the OpenAPI document (openapi.py) is generated from the same declarations,
so what the document says is what the server does.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar, TypeVar

from jupyter_server.auth.decorator import allow_unauthenticated
from jupyter_server.base.handlers import APIHandler
from pydantic import TypeAdapter, ValidationError
from tornado import httputil, web

from ..auth import WWW_AUTHENTICATE, RunTokenAuth
from ..files.errors import FilesError
from ..runtime import ErrorCode, Run, Runtime, ToolError
from ..runtime.file_errors import file_error
from .models import ErrorDetail, ErrorResponse, RequestModel

RUNS_RESOURCE = "agent_tools:runs"
STATUS_RESOURCE = "agent_tools:status"

RequestT = TypeVar("RequestT", bound=RequestModel)

# A ToolError raised while serving a route is the client's to fix: 4xx. Codes not listed
# mean the state of things refuses the request now (a card already answered, the run limit
# reached, nobody connected): 409. A 5xx is kept for server bugs.
STATUS_BY_CODE: dict[ErrorCode, int] = {
    ErrorCode.INVALID_ARGUMENTS: 400,
    ErrorCode.PATH_OUTSIDE_ROOT: 400,
    ErrorCode.UNPARSEABLE_PATTERN: 400,
    ErrorCode.MISSING_SYMBOL: 400,
    ErrorCode.PERMISSION_DENIED: 403,
    ErrorCode.PATH_DENIED: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.UNKNOWN_TOOL: 404,
    ErrorCode.UNKNOWN_EDIT: 404,
    ErrorCode.SYMBOL_NOT_FOUND: 404,
    ErrorCode.NO_SESSION: 404,
}
CONFLICT = 409
#: pydantic-core's JSON parser refuses deeper nesting (not configurable).
MAX_JSON_DEPTH = 200
#: Items of a list answer serialized at once; the loop runs other work between steps.
SERIALIZE_STEP_ITEMS = 200

# Errors tornado or jupyter_server raise themselves (auth, XSRF, unknown verbs).
_CODE_BY_STATUS = {400: ErrorCode.INVALID_ARGUMENTS, 401: ErrorCode.PERMISSION_DENIED,
                   403: ErrorCode.PERMISSION_DENIED, 404: ErrorCode.NOT_FOUND,
                   405: ErrorCode.INVALID_ARGUMENTS, 413: ErrorCode.INVALID_ARGUMENTS}


class ApiError(Exception):
    """A refusal at the HTTP layer (before the runtime is asked): status, code, message."""

    def __init__(self, status: int, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclass(frozen=True)
class ResponseHeader:
    """A header a route's success answers carry (set by its handler), as the document states it."""

    description: str
    type: str = "integer"  # its value's JSON schema type


@dataclass(frozen=True)
class Operation:
    """One verb of a route, as the handler serves it and the OpenAPI document states it.

    `responses` maps each success status to its body's type (None: no body). Error statuses
    are added by the document from what the route can meet (auth, body, path parameters)
    plus `errors`. Their body is ErrorResponse, or `error_body` for the statuses in `errors`
    (a protocol's own error shape: the MCP routes answer JSON-RPC errors). `headers` names the
    headers every success answer carries.
    """

    summary: str
    responses: dict[int, Any]
    body: type[RequestModel] | None = None
    body_required: bool = True
    query: type[RequestModel] | None = None
    errors: frozenset[int] = frozenset()
    websocket: bool = False
    error_body: Any = None
    headers: dict[str, ResponseHeader] = field(default_factory=dict)


@dataclass(frozen=True)
class RequestLimits:
    """Bounds checked before a body is parsed (AgentToolsApp's traitlets).

    Nesting depth is bounded by the parser itself (pydantic-core stops at 200 levels, in
    Rust, before building anything deeper), so no Python code ever recurses over a body.
    """

    max_request_bytes: int = 4 * 1024 * 1024
    max_request_values: int = 50_000


def _value_bytes(body: bytes) -> int:
    """At least as many as the values `body` holds: its `[`, `{` and `,` wherever they are."""
    return body.count(b"[") + body.count(b"{") + body.count(b",")


def count_json_values(body: bytes, most: int) -> int:
    """The `[`, `{` and `,` of `body` outside its strings, counted up to past `most`.

    In steps of one string each (`find` and `count` run in C over the bytes between), so
    that a thread running this leaves the interpreter lock to the loop between steps; a
    regex matching whole strings would hold it through a 4 MB string.
    """
    count = position = 0
    while count <= most:
        opening = body.find(b'"', position)
        end = len(body) if opening < 0 else opening
        count += (body.count(b"[", position, end) + body.count(b"{", position, end)
                  + body.count(b",", position, end))
        if opening < 0:
            break
        position = _string_end(body, opening + 1)
    return count


def _string_end(body: bytes, start: int) -> int:
    """Just past the `"` that closes the string whose text begins at `start`."""
    position = start
    while (quote := body.find(b'"', position)) >= 0:
        if not _escaped(body, quote, start):
            return quote + 1
        position = quote + 1
    return len(body)


def _escaped(body: bytes, quote: int, start: int) -> bool:
    """Whether an odd run of backslashes (beginning at or after `start`) precedes `quote`."""
    window = 16
    while True:
        begin = max(start, quote - window)
        tail = body[begin:quote]
        run = len(tail) - len(tail.rstrip(b"\\"))
        if run < len(tail) or begin == start:
            return run % 2 == 1
        window *= 4


@cache
def response_adapter(annotation: Any) -> TypeAdapter[Any]:
    return TypeAdapter(annotation)


def describe_validation_error(error: ValidationError) -> str:
    """One line per problem, with the field's name: what a client needs to fix the body."""
    unknown = [".".join(map(str, e["loc"])) for e in error.errors() if e["type"] == "extra_forbidden"]
    problems = [f"unknown field {', '.join(repr(name) for name in unknown)}"] if unknown else []
    for item in error.errors():
        if item["type"] == "extra_forbidden":
            continue
        where = ".".join(map(str, item["loc"])) or "body"
        problems.append(f"{where}: {item['msg']}")
    return "; ".join(problems[:10])


class JsonErrors:
    """Mixin for JupyterHandler subclasses: every error is `{error: {code, message}}`."""

    def write_error(self: Any, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, FilesError):  # a file refusal outside a tool call reads the same
            exc = file_error(exc)
        if isinstance(exc, ToolError):
            status, code, message = STATUS_BY_CODE.get(exc.code, CONFLICT), exc.code, exc.message
        elif isinstance(exc, ApiError):
            status, code, message = exc.status, exc.code, exc.message
        elif isinstance(exc, web.HTTPError) and status_code < 500:
            status = status_code
            code = _CODE_BY_STATUS.get(status_code, ErrorCode.INVALID_ARGUMENTS)
            message = exc.log_message or httputil.responses.get(status_code, "Refused")
            if exc.args and exc.log_message:
                message = exc.log_message % exc.args
        else:
            status, code = status_code, ErrorCode.FAILED
            message = ("The server failed unexpectedly; this is a bug in jupyter-agent-tools. "
                       "The server log has the details; please report it.")
        if status == 405:
            message = (f"{self.request.method} is not allowed here; "
                       f"use {', '.join(self.allowed_methods())}.")
            self.set_header("Allow", ", ".join(self.allowed_methods()))
        if status == 401:  # no valid token (auth.TokenChallenge): the message says what to send
            self.set_header("WWW-Authenticate", WWW_AUTHENTICATE)
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        body = ErrorResponse(error=ErrorDetail(code=code.value, message=message))
        self.finish(body.model_dump_json())

    def allowed_methods(self: Any) -> list[str]:
        """The verbs this handler implements (what `Allow` lists on a 405)."""
        return [method for method in self.SUPPORTED_METHODS
                if getattr(type(self), method.lower()) is not getattr(web.RequestHandler, method.lower())]

    def log_exception(self: Any, typ: Any, value: Any, tb: Any) -> None:
        if isinstance(value, ToolError | ApiError | FilesError):  # an expected answer, not a server fault
            self.log.info("%s %s: %s", self.request.method, self.request.path, value)
            return
        super().log_exception(typ, value, tb)  # type: ignore[misc]


class AgentToolsHandler(JsonErrors, RunTokenAuth, APIHandler):
    """Base of our API handlers: the runtime, typed bodies, answers through response models.

    A worker's run token is accepted on its own run's routes, an agent token on the verbs a
    handler names in `agent_token_methods` (see auth.py).
    """

    auth_resource = RUNS_RESOURCE
    operations: ClassVar[dict[str, Operation]] = {}

    async def prepare(self) -> None:  # type: ignore[override]
        if not await self.authenticate_tokens():
            await super().prepare()

    @property
    def runtime(self) -> Runtime:
        return self.settings["agent_tools_runtime"]

    @property
    def limits(self) -> RequestLimits:
        return self.settings.get("agent_tools_request_limits") or RequestLimits()

    def get_run(self, run_id: str) -> Run:
        return self.runtime.get_run(run_id)

    async def check_body(self, body: bytes) -> None:
        """ApiError 413 for a body over `max_request_bytes`, or with more JSON values (arrays,
        objects, list items) than `max_request_values`.

        Parsing holds the interpreter lock whichever thread does it, about half a
        microsecond per value: 4 MB of `[]` held every route of the server for a second.
        So what may be parsed is bounded first, and then parsed on the loop (a thread would
        not spare it). The count is exact only for bodies whose bytes could hold more values
        than allowed (commas in strings do not count), and it runs in a thread, in Python
        steps the event loop can interleave with.
        """
        limit = self.limits.max_request_bytes
        if len(body) > limit:
            raise ApiError(413, ErrorCode.INVALID_ARGUMENTS,
                           f"The body has {len(body):,} bytes; the limit is {limit:,} "
                           "(c.AgentToolsApp.max_request_bytes). Send less, e.g. write a big "
                           "file in parts.")
        most = self.limits.max_request_values
        if _value_bytes(body) <= most:
            return
        if await asyncio.to_thread(count_json_values, body, most) > most:
            raise ApiError(413, ErrorCode.INVALID_ARGUMENTS,
                           f"The body holds more than {most:,} JSON values (array items, "
                           "object members); the limit is c.AgentToolsApp.max_request_values. "
                           "Send fewer, e.g. a long list as one string.")

    async def parse_body(self, model: type[RequestT]) -> RequestT:
        """The body as `model`: bounded in size and depth, UTF-8, strictly typed.

        An empty body is `{}` (every field at its default). The body's values are bounded
        first (`check_body`), which bounds how long parsing holds the server.
        """
        body = self.request.body or b"{}"
        await self.check_body(body)
        return self._validate(model, body)

    @staticmethod
    def _validate(model: type[RequestT], body: bytes) -> RequestT:
        try:
            body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ApiError(400, ErrorCode.INVALID_ARGUMENTS,
                           f"The body is not UTF-8 (byte {exc.start}); send UTF-8 JSON.") from None
        try:
            return model.model_validate_json(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            if first["type"] == "json_invalid" and "recursion limit" in first["msg"]:
                raise ApiError(400, ErrorCode.INVALID_ARGUMENTS,
                               f"The body nests arrays/objects deeper than {MAX_JSON_DEPTH} "
                               "levels; flatten it.") from None
            if first["type"] == "json_invalid":
                raise ApiError(400, ErrorCode.INVALID_ARGUMENTS,
                               f"The body is not JSON ({first['msg']}); send a JSON "
                               "object.") from None
            if any(e["type"] == "model_type" and not e["loc"] for e in exc.errors()):
                raise ApiError(400, ErrorCode.INVALID_ARGUMENTS,
                               "The body must be a JSON object.") from None
            allowed = ", ".join(model.model_fields)
            raise ApiError(400, ErrorCode.INVALID_ARGUMENTS,
                           f"{describe_validation_error(exc)}. Fields: {allowed}.") from None

    def parse_query(self, model: type[RequestT]) -> RequestT:
        """The query parameters `model` names (others, like `token`, are the server's)."""
        values = {name: self.get_query_argument(name) for name in model.model_fields
                  if name in self.request.query_arguments}
        try:
            return model.model_validate(values, strict=False)
        except ValidationError as exc:
            raise ApiError(400, ErrorCode.INVALID_ARGUMENTS,
                           f"{describe_validation_error(exc)} (query parameters).") from None

    async def respond(self, payload: Any, status: int = 200) -> None:
        """Answer with `payload` as the operation's model for `status` (None: no body).

        A long list (a run's transcript, its staged edits) is serialized in steps: ten thousand
        transcript entries take about 60 ms at once.
        """
        operation = self.operations[self.request.method.lower()]
        annotation = operation.responses[status]
        self.set_status(status)
        if annotation is None:
            self.finish()
            return
        adapter = response_adapter(annotation)
        if isinstance(payload, list) and len(payload) > SERIALIZE_STEP_ITEMS:
            body = await serialized_in_steps(adapter, payload)
        else:
            body = _serialized(adapter, payload)
        self.finish(body)


def _serialized(adapter: TypeAdapter[Any], payload: Any) -> bytes:
    return adapter.dump_json(adapter.validate_python(payload), fallback=str)


async def serialized_in_steps(adapter: TypeAdapter[Any], items: list[Any]) -> bytes:
    """`items` as JSON through `adapter` (a list model), SERIALIZE_STEP_ITEMS at a time, the
    loop free between steps. Not on a thread: pydantic's serializer holds the interpreter lock
    throughout, so the loop would wait for it all the same."""
    parts = []
    for start in range(0, len(items), SERIALIZE_STEP_ITEMS):
        if start:
            await asyncio.sleep(0)
        step = _serialized(adapter, items[start:start + SERIALIZE_STEP_ITEMS])
        if step != b"[]":
            parts.append(step[1:-1])
    return b"[" + b",".join(parts) + b"]"


class RouteNotFoundHandler(JsonErrors, APIHandler):
    """Any path under agent-tools/ that no route serves: a JSON 404 for every verb, to anyone
    (as jupyter_server's own 404: it says only that no route is there, whatever the token)."""

    @allow_unauthenticated
    def _not_found(self, *_args: Any, **_kwargs: Any) -> None:
        raise ApiError(404, ErrorCode.NOT_FOUND,
                       f"No route {self.request.path!r}. GET agent-tools/api/openapi.json lists "
                       "every route.")

    get = post = put = patch = delete = head = _not_found
