"""schemathesis over the served document of a real server: no 5xx, every answer as documented.

The server runs in a child process (schemathesis calls it synchronously). Generated cases
whose run id has the right shape are pointed, every other time, at a real run (readonly, so
no generated call can write or execute), so the run routes are exercised past their 404.
"""

from __future__ import annotations

import itertools
import re

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance

from jupyter_agent_tools.testing.server import JupyterServerProcess

RUN_ID = re.compile(r"^[0-9a-f]{32}$")
#: Per operation and generation mode: keeps the whole test within about a minute.
MAX_EXAMPLES = 30


@pytest.fixture(scope="module")
def agent_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("schemathesis-root")
    (root / "notes.txt").write_text("alpha\nbeta\n")
    server = JupyterServerProcess(root, extra_args=["--Runtime.max_runs=20"]).start()
    yield server
    server.stop()


class RealRun:
    """A readonly run with a space, created again when a generated DELETE closed it."""

    def __init__(self, server: JupyterServerProcess) -> None:
        self.http = httpx.Client(base_url=server.url.rstrip("/") + "/agent-tools/api/",
                                 headers=auth_headers(server), timeout=60)
        self.id = ""

    def current(self) -> str:
        if not self.id or self.http.get(f"runs/{self.id}").status_code == 404:
            response = self.http.post("runs", json={"surface": "readonly", "space": "lab"})
            if response.status_code == 201:
                self.id = response.json()["id"]
        return self.id


def auth_headers(server: JupyterServerProcess) -> dict[str, str]:
    return {"Authorization": f"token {server.token}"}


@pytest.fixture(scope="module")
def api_schema(agent_server):
    return schemathesis.openapi.from_url(
        agent_server.url.rstrip("/") + "/agent-tools/api/openapi.json",
        headers=auth_headers(agent_server),
    )


@pytest.fixture(scope="module")
def real_run(agent_server):
    return RealRun(agent_server)


def test_the_api_answers_as_documented(api_schema, agent_server, real_run):
    """Every operation, with data that fits the document and data that does not."""
    turns = itertools.count()
    failures: list[str] = []
    operations = [result.ok() for result in api_schema.get_all_operations()]
    # WebSocket routes need a handshake schemathesis does not make; tests/http/test_events.py
    # and test_openapi.py cover them.
    operations = [op for op in operations if not op.path.endswith("/events")]
    assert len(operations) >= 12
    # The MCP routes speak JSON-RPC, whose messages real MCP clients check (tests/mcp_endpoint);
    # the document does not model them, so here their answers must be no server error, of a
    # documented status, with a documented body (a refusal is a JSON-RPC error).
    protocol_only = {op.label for op in operations if op.path.endswith("/mcp")}
    assert protocol_only
    for operation, mode in itertools.product(operations, GenerationMode):
        checks = ([not_a_server_error, status_code_conformance, response_schema_conformance]
                  if operation.label in protocol_only else None)

        # Bounded: a few examples per operation and mode, no shrinking, the same ones each run.
        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
                  phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
        def check(case):
            path_id = (case.path_parameters or {}).get("id")
            if isinstance(path_id, str) and RUN_ID.match(path_id) and next(turns) % 2 == 0:
                case.path_parameters["id"] = real_run.current()
            # check() runs within this iteration, so the loop variable is the current one.
            case.call_and_validate(headers=auth_headers(agent_server), checks=checks)  # noqa: B023

        try:
            check()
        except (Exception, FailureGroup) as exc:  # noqa: BLE001 - a line per failing operation, then the next
            failures.append(f"{operation.label} ({mode}): {type(exc).__name__}: {exc}"[:3000])
    assert not failures, "\n\n".join(failures)
