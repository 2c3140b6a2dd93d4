"""Kernel tests: an embedded Runtime whose kernel factory has short budgets and no warm pool."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from jupyter_server.gateway.gateway_client import GatewayClient

from jupyter_agent_tools import Runtime


@pytest.fixture
def make_runtime(runtime_factory):
    """`make_runtime(**KernelFactory config)` → an embedded Runtime, shut down after the test."""

    def make(**factory: object) -> Runtime:
        return runtime_factory({"KernelFactory": {"warm_pool": {}, "idle_timeout_seconds": 30.0,
                                                  **factory}})

    return make


@pytest.fixture
def kernels_runtime(make_runtime):
    """A runtime with the test defaults."""
    return make_runtime()



@pytest.fixture
def fresh_gateway_client() -> Iterator[None]:
    """The gateway client is a process-wide singleton: the server under test must configure a
    fresh one, and later servers must not inherit it."""
    GatewayClient.clear_instance()
    yield
    GatewayClient.clear_instance()
