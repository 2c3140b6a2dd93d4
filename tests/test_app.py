"""The server extension's own settings: the start-up objects kept out of the collector's scans."""

from __future__ import annotations

import gc

import pytest


@pytest.fixture
def jp_server_config(jp_server_config, request):
    return {**jp_server_config, "AgentToolsApp": {"freeze_startup_objects": request.param}}


@pytest.fixture
def started(jp_serverapp):
    """Start the server's extensions as its first loop iteration does (ServerApp._post_start);
    pytest-jupyter's server skips that step. Hands the frozen objects back afterwards."""

    async def start() -> None:
        gc.unfreeze()  # what another test may have left
        await jp_serverapp.extension_manager.start_all_extensions()

    yield start
    gc.unfreeze()


@pytest.mark.parametrize("jp_server_config", [True], indirect=True)
async def test_a_started_server_freezes_its_start_up_objects(started):
    await started()
    assert gc.get_freeze_count() > 10_000  # modules, classes, the server's state


@pytest.mark.parametrize("jp_server_config", [False], indirect=True)
async def test_freezing_can_be_turned_off(started):
    await started()
    assert gc.get_freeze_count() == 0
