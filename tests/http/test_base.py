"""Bad input gets a clear 4xx with a JSON error code, never a 5xx (issue 14's list and more)."""

from __future__ import annotations

import asyncio
import json

import pytest
from http_helpers import MAX_REQUEST_BYTES

from jupyter_agent_tools.http import base

API = "agent-tools/api"


def _json(value) -> bytes:
    return json.dumps(value).encode()


CALL = "{run}/calls"
BAD_INPUTS = [
    # (what, route, body, status, code, words the message must contain)
    ("non-UTF-8 body", "runs", b'{"cwd": "\xff\xfe"}', 400, "invalid_arguments", "UTF-8"),
    ("cwd a number", "runs", _json({"cwd": 7}), 400, "invalid_arguments", "cwd"),
    ("cwd 6,000 characters", "runs", _json({"cwd": "a" * 6000}), 400, "invalid_arguments", "cwd"),
    ("cwd a name too long for the OS", "runs", _json({"cwd": "a" * 300}), 400,
     "invalid_arguments", "cwd"),
    ("resources a string", "runs", _json({"resources": "lsp"}), 400, "invalid_arguments",
     "resources"),
    ("resources with an unknown name", "runs", _json({"resources": ["lsp", "gpu"]}), 400,
     "invalid_arguments", "resources"),
    # More values than allowed, before its depth is even seen.
    ("100,000-deep array", "runs", b"[" * 100_000 + b"]" * 100_000, 413, "invalid_arguments",
     "max_request_values"),
    ("vibe as the string 'false'", "runs", _json({"vibe": "false"}), 400, "invalid_arguments",
     "vibe"),
    ("an object as space", "runs", _json({"space": {"a": 1}}), 400, "invalid_arguments", "space"),
    ("an object as conversation_id", "runs", _json({"conversation_id": {}}), 400,
     "invalid_arguments", "conversation_id"),
    ("an unknown field", "runs", _json({"colour": "red"}), 400, "invalid_arguments", "'colour'"),
    ("an origin only the server sets", "runs", _json({"origin": "mcp"}), 400,
     "invalid_arguments", "origin"),
    ("an unknown surface", "runs", _json({"surface": "everything"}), 400, "invalid_arguments",
     "surface"),
    ("a body that is not JSON", "runs", b"{cwd: .}", 400, "invalid_arguments", "not JSON"),
    ("a JSON array as the body", "runs", _json(["cwd"]), 400, "invalid_arguments", "object"),
    ("a body over the limit", "runs", _json({"cwd": "x" * MAX_REQUEST_BYTES}), 413,
     "invalid_arguments", "max_request_bytes"),
    ("a body of more values than allowed", CALL,
     b'{"tool": "read", "args": {"x": [' + b",".join([b"[]"] * 60_000) + b"]}}", 413,
     "invalid_arguments", "max_request_values"),
    ("a call without a tool", CALL, _json({"args": {}}), 400, "invalid_arguments", "tool"),
    ("args as a string", CALL, _json({"tool": "read", "args": "README.md"}), 400,
     "invalid_arguments", "args"),
    ("deep args", CALL, b'{"tool": "read", "args": {"a": ' + b"[" * 300 + b"]" * 300 + b"}}", 400,
     "invalid_arguments", "deeper"),
    ("an answer that is a number", "{run}/questions/1", _json({"answer": 3}), 400,
     "invalid_arguments", "answer"),
]


@pytest.mark.parametrize(("what", "route", "body", "status", "code", "words"), BAD_INPUTS,
                         ids=[case[0] for case in BAD_INPUTS])
async def test_bad_input_gets_a_4xx_with_a_json_code(send, api, what, route, body, status,
                                                      code, words):
    if "{run}" in route:
        _, run = await api("POST", "runs", {"space": "lab"})
        route = route.format(run=f"runs/{run['id']}")
    got, payload, _ = await send("POST", f"{API}/{route}", body)
    assert (got, payload["error"]["code"]) == (status, code), payload
    assert words in payload["error"]["message"], payload["error"]["message"]
    code, _ = await api("GET", "runs")
    assert code == 200  # the server still serves


async def test_a_wrong_query_parameter_is_a_400(api):
    _, run = await api("POST", "runs", {})
    code, error = await api("GET", f"runs/{run['id']}/tools", format="yaml")
    assert code == 400 and error["error"]["code"] == "invalid_arguments"
    assert "format" in error["error"]["message"]


async def test_an_unknown_route_under_agent_tools_is_a_json_404(send):
    for path in ("agent-tools/api/nothing", "agent-tools/api/runs/not-a-run-id", "agent-tools/x",
                 "agent-tools"):
        code, error, _ = await send("GET", path)
        assert code == 404 and error["error"]["code"] == "not_found", path
        assert "openapi.json" in error["error"]["message"]


async def test_a_wrong_method_is_a_405_that_says_what_is_allowed(send, api):
    _, run = await api("POST", "runs", {})
    code, error, headers = await send("PUT", f"{API}/runs/{run['id']}", b"{}")
    assert code == 405 and error["error"]["code"] == "invalid_arguments"
    allowed = {method.strip() for method in headers["Allow"].split(",")}
    assert {"GET", "DELETE"} <= allowed and "PUT" not in allowed
    assert "GET" in error["error"]["message"]
    code, _, headers = await send("DELETE", f"{API}/status")
    assert code == 405 and "GET" in headers["Allow"]


async def test_a_tool_failure_stays_a_200_result(api):
    _, run = await api("POST", "runs", {"surface": "plan"})
    code, result = await api("POST", f"runs/{run['id']}/calls",
                             {"tool": "write", "args": {"path": "a", "content": ""}})
    assert code == 200 and result["ok"] is False and result["error"]["code"] == "unknown_tool"
    code, result = await api("POST", f"runs/{run['id']}/calls",
                             {"tool": "read", "args": {"path": "a" * 5000}})
    assert code == 200 and result["ok"] is False


async def test_the_run_limit_is_a_409_not_a_503(jp_serverapp, api):
    runtime = jp_serverapp.web_app.settings["agent_tools_runtime"]
    runtime.max_runs = 1
    code, _ = await api("POST", "runs", {})
    assert code == 201
    code, error = await api("POST", "runs", {})
    assert code == 409 and error["error"]["code"] == "unavailable"
    assert "close one" in error["error"]["message"]


async def test_a_long_list_is_serialized_in_steps_with_the_loop_free_between(
        jp_serverapp, api, monkeypatch):
    """A transcript of many calls is serialized a step at a time; other callbacks run between
    the steps. The answer is the same JSON as at once."""
    happened: list[str] = []
    serialize = base._serialized

    def recorded(adapter, payload):
        happened.append(f"step of {len(payload)}")
        return serialize(adapter, payload)

    _, created = await api("POST", "runs", {})
    run = jp_serverapp.web_app.settings["agent_tools_runtime"].get_run(created["id"])
    calls = 2 * base.SERIALIZE_STEP_ITEMS + 1
    for _ in range(calls):
        await run.call("glob", {"pattern": "*.nothing"})
    step = base.SERIALIZE_STEP_ITEMS
    with monkeypatch.context() as at_once:
        at_once.setattr(base, "SERIALIZE_STEP_ITEMS", calls)
        code, whole = await api("GET", f"runs/{created['id']}/transcript")
    assert code == 200 and len(whole) == calls

    monkeypatch.setattr(base, "_serialized", recorded)

    async def other_work():  # marks each turn of the loop that follows a step
        while True:
            if happened and happened[-1].startswith("step"):
                happened.append("other work")
            await asyncio.sleep(0)

    other = asyncio.ensure_future(other_work())
    code, stepped = await api("GET", f"runs/{created['id']}/transcript")
    other.cancel()
    assert happened[:5] == [f"step of {step}", "other work", f"step of {step}", "other work",
                            "step of 1"], happened
    assert code == 200 and stepped == whole


async def test_commas_and_brackets_inside_strings_are_no_values(api, tmp_path):
    # A file's text full of commas is one string: within the limits, it is written.
    _, run = await api("POST", "runs", {})
    content = "a, [b], {c}, \\\" d,\n" * 10_000
    code, result = await api("POST", f"runs/{run['id']}/calls",
                             {"tool": "write", "args": {"path": "commas.txt", "content": content}})
    assert code == 200 and result["ok"], result


def test_values_are_counted_outside_strings_only():
    body = json.dumps({"a": "x, [y], {z}, \\\"", "b": [1, 2, {"c": "\\"}], "d": [[], []]})
    # { , [ , , { , [ [ , [  -> the object, its members, the arrays and their items
    assert base.count_json_values(body.encode(), 1_000) == 11
