"""Behind a reverse proxy that cuts silent requests (issue 44 part 4): nginx with a short
`proxy_read_timeout` in front of a real server, and an eval that runs well past it completes
over HTTP and over MCP — each call answers within c.Runtime.max_call_seconds (`running`, a job
id) and `job wait` continues it.

Scaled down from production's 45 s / 60 s (max_call_seconds / proxy_read_timeout) to 2 s / 3 s,
with an 8 s eval. nginx is Debian's (scripts/setup.sh installs nginx-light as root).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

MAX_CALL_SECONDS = 2.0
PROXY_READ_TIMEOUT = 3
EVAL = {"code": "import time\nprint('begun', flush=True)\ntime.sleep(8)\nprint('ended')\n6 * 7",
        "description": "sleep eight seconds then answer forty-two"}
NGINX = shutil.which("nginx") or next(
    (path for path in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.path.exists(path)), None)

pytestmark = pytest.mark.skipif(NGINX is None, reason="nginx is not installed (scripts/setup.sh "
                                "installs nginx-light as root)")


@pytest.fixture
def jp_server_config(jp_server_config):
    return {
        **jp_server_config,
        "Runtime": {"max_call_seconds": MAX_CALL_SECONDS},
        "KernelFactory": {"warm_pool": {}},
        "McpEndpoint": {"progress_interval_seconds": 0.5},
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def proxy(tmp_path: Path, jp_http_port, http_server_client) -> Iterator[str]:
    """nginx in front of the server under test, as ingress-nginx would be: its base URL."""
    port = free_port()
    folder = tmp_path / "nginx"
    folder.mkdir()
    user = "user root;\n" if os.geteuid() == 0 else ""  # workers reach the tmp folder
    temps = "\n".join(f"  {kind}_temp_path {folder / kind};"
                      for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    (folder / "nginx.conf").write_text(f"""
daemon off;
{user}worker_processes 1;
pid {folder / 'nginx.pid'};
error_log {folder / 'error.log'} info;
events {{ worker_connections 64; }}
http {{
  access_log {folder / 'access.log'};
{temps}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://127.0.0.1:{jp_http_port};
      proxy_http_version 1.1;
      proxy_set_header Host $http_host;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_read_timeout {PROXY_READ_TIMEOUT}s;
    }}
  }}
}}
""")
    process = subprocess.Popen([NGINX, "-p", str(folder), "-c", str(folder / "nginx.conf")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"nginx did not start: {process.stderr.read().decode()}"
                                   if process.stderr else "nginx did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.kill()
        process.wait(10)


async def test_a_long_eval_completes_over_http_through_the_proxy(proxy, jp_base_url,
                                                                 auth_headers, runtime_of):
    api = f"{proxy}{jp_base_url}agent-tools/api"
    async with httpx2.AsyncClient(headers=auth_headers, timeout=30) as http:
        created = await http.post(f"{api}/runs", json={})
        assert created.status_code in (200, 201), created.text
        calls = f"{api}/runs/{created.json()['id']}/calls"

        # The proxy really cuts: a call kept open past its read timeout is a 504.
        runtime_of.max_call_seconds = 0
        try:
            cut = await http.post(calls, json={"tool": "bash", "args": {"command": "sleep 5"}})
        finally:
            runtime_of.max_call_seconds = MAX_CALL_SECONDS
        assert cut.status_code == 504, cut.text

        started = time.monotonic()
        answered = await http.post(calls, json={"tool": "eval", "args": EVAL})
        assert answered.status_code == 200, answered.text
        first = answered.json()
        assert first["ok"] and first["data"]["status"] == "running", first
        job_id = first["data"]["job_id"]
        assert f'job {{action: "wait", job_id: "{job_id}"}}' in first["text"]
        for _ in range(30):
            waited = await http.post(calls, json={"tool": "job", "args": {
                "action": "wait", "job_id": job_id, "timeout_seconds": 60}})
            assert waited.status_code == 200, waited.text  # never cut by the proxy
            result = waited.json()
            if result["data"]["status"] != "running":
                break
        assert result["ok"] and result["data"]["status"] == "done", result
        assert "begun" in result["text"] and "ended" in result["text"] and "42" in result["text"]
        assert time.monotonic() - started > 8


async def test_a_long_eval_completes_over_mcp_through_the_proxy(proxy, jp_base_url,
                                                                auth_headers):
    reports: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(progress)

    http = httpx2.AsyncClient(headers=auth_headers, timeout=httpx2.Timeout(30, read=30))
    async with http, streamable_http_client(
        f"{proxy}{jp_base_url}agent-tools/mcp", http_client=http,
    ) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        started = time.monotonic()
        # With a progress token (answered as an event stream, progress flowing through the
        # proxy unbuffered) and without (answered as plain JSON).
        first = await session.call_tool("eval", EVAL, progress_callback=on_progress)
        assert not first.is_error, first.content
        data = first.structured_content or {}
        assert data["status"] == "running" and "begun" in data["output"], data
        assert reports, "no progress notification came through the proxy"
        job_id = data["job_id"]
        for _ in range(30):
            waited = await session.call_tool("job", {"action": "wait", "job_id": job_id})
            assert not waited.is_error, waited.content
            if (waited.structured_content or {}).get("status") != "running":
                break
        done = waited.structured_content or {}
        assert done["status"] == "done" and done["result"] == "42", done
        assert "ended" in waited.content[0].text
        assert time.monotonic() - started > 8
        # The session is still usable once the job has ended.
        after = await session.call_tool("eval", {"code": "6 * 7", "description":
                                                 "compute the same answer once more"})
        assert not after.is_error and (after.structured_content or {}).get("result") == "42"
    await asyncio.sleep(0)


REPO = Path(__file__).resolve().parents[2]
TS_SDK = REPO / ".tools" / "node" / "node_modules" / "@modelcontextprotocol" / "sdk"


@pytest.mark.skipif(shutil.which("node") is None or not (TS_SDK / "package.json").exists(),
                    reason="node and the TypeScript MCP SDK (scripts/setup.sh)")
async def test_the_typescript_client_with_a_short_request_timeout_completes_a_long_eval(
        proxy, jp_base_url, jp_serverapp):
    # The report: the TS SDK's request timeout (60 s by default; 3 s here, as the proxy's)
    # killed a long eval with -32001. Each call now answers within max_call_seconds.
    waits = [("job", {"action": "wait", "job_id": "job-1"})] * 8
    process = await asyncio.create_subprocess_exec(
        "node", str(Path(__file__).parent / "ts_client.mjs"), str(TS_SDK),
        f"{proxy}{jp_base_url}agent-tools/mcp", jp_serverapp.identity_provider.token,
        json.dumps([("eval", EVAL), *waits]), str(PROXY_READ_TIMEOUT * 1000),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()[-2000:]
    calls = json.loads(out)["calls"]
    assert [call.get("thrown") for call in calls] == [None] * len(calls), calls
    assert not any(call["isError"] for call in calls), calls
    first, *waited = [call["structuredContent"] for call in calls]
    assert first["status"] == "running" and first["job_id"] == "job-1", first
    statuses = [data["status"] for data in waited]
    assert "done" in statuses, statuses
    done = next(data for data in waited if data["status"] == "done")
    assert done["result"] == "42" and done["job_id"] == "job-1", done
