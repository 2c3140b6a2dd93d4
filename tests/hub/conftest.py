"""One JupyterHub per test module (see hub_helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hub_helpers import Hub


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    hub = Hub(tmp_path_factory.mktemp("hub"))
    try:
        yield hub.start()
    finally:
        hub.stop()
