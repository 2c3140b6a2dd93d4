"""Kernel tests: an embedded Runtime whose kernel factory has short budgets and no warm pool."""

from __future__ import annotations

import pytest
from traitlets.config import Config

from jupyter_agent_tools import Runtime


@pytest.fixture
def make_runtime(root, jp_asyncio_loop):
    """`make_runtime(**KernelFactory config)` → an embedded Runtime, shut down after the test."""
    runtimes: list[Runtime] = []

    def make(**factory: object) -> Runtime:
        config = Config({"KernelFactory": {"warm_pool": {}, "idle_timeout_seconds": 30.0,
                                           **factory}})
        runtime = Runtime(root_dir=str(root), config=config)
        runtimes.append(runtime)
        return runtime

    yield make
    for runtime in runtimes:
        jp_asyncio_loop.run_until_complete(runtime.shutdown())


@pytest.fixture
def kernels_runtime(make_runtime):
    """A runtime with the test defaults."""
    return make_runtime()

