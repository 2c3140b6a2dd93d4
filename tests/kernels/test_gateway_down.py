"""A server whose kernel gateway does not answer: eval and status say so, and what to check."""

from __future__ import annotations

import pytest
from kernel_helpers import free_port


@pytest.fixture
def jp_server_config(jp_server_config, fresh_gateway_client):
    return {**jp_server_config,
            "GatewayClient": {"url": f"http://127.0.0.1:{free_port()}", "gateway_retry_max": 0},
            "KernelFactory": {"warm_pool": {}}}


async def test_eval_answers_unavailable_naming_the_gateway(api):
    _, run = await api("POST", "runs", {})
    code, result = await api("POST", f"runs/{run['id']}/calls", {"tool": "eval", "args": {
        "code": "1 + 1", "description": "try a cell on a gateway that is down"}})
    assert code == 200 and result["error"]["code"] == "unavailable", result
    assert "c.GatewayClient.url" in result["text"], result
    _, status = await api("GET", "status")
    python = status["resources"]["kernels"]["languages"]["python"]
    assert not python["available"] and "gateway" in python["reason"], status
