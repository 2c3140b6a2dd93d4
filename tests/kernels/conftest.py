"""Kernel tests: an embedded Runtime whose kernel factory has short budgets and no warm pool."""

from __future__ import annotations

import pytest

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

