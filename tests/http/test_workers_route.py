"""`GET runs/{id}/workers`: a run's background workers over HTTP, so a front end that joins late
(a reloaded JupyterLab panel) sees them without having seen their events."""

from __future__ import annotations

import pytest

from jupyter_agent_tools.http.models import WorkerDescriptor


@pytest.fixture
def jp_server_config(jp_server_config):
    """Workers run the scripted agent in the server's process (as on Binder)."""
    return {**jp_server_config, "WorkerPool": {"backend": "python"},
            "PythonBackend": {"agent": "jupyter_agent_tools.testing.agents:scripted_agent"}}


async def test_a_runs_workers_are_listed_with_their_state_and_result(api, jp_root_dir):
    (jp_root_dir / "main.py").write_text("print('hello')\n")
    code, run = await api("POST", "runs", {"vibe": True})
    assert code == 201
    assert await api("GET", f"runs/{run['id']}/workers") == (200, [])

    code, spawned = await api("POST", f"runs/{run['id']}/calls", {"tool": "vibe_spawn", "args": {
        "label": "reader", "brief": 'call read {"path": "main.py"}'}})
    assert code == 200 and spawned["ok"], spawned
    worker_id = spawned["data"]["worker_id"]
    code, waited = await api("POST", f"runs/{run['id']}/calls", {"tool": "vibe_wait", "args": {
        "worker_id": worker_id, "timeout_seconds": 120}})
    assert waited["ok"], waited

    code, workers = await api("GET", f"runs/{run['id']}/workers")
    assert code == 200
    [worker] = [WorkerDescriptor.model_validate(item) for item in workers]
    assert (worker.worker_id, worker.label, worker.status) == (worker_id, "reader", "done")
    assert "read" in (worker.result or "")
    # The worker's own run is a run of the server, named by the descriptor.
    code, child = await api("GET", f"runs/{worker.child_run_id}")
    assert code == 200 and child["parent_id"] == run["id"]


async def test_a_run_without_vibe_mode_has_no_workers(api):
    _, run = await api("POST", "runs", {})
    assert await api("GET", f"runs/{run['id']}/workers") == (200, [])


async def test_an_unknown_runs_workers_are_a_json_404(api):
    code, body = await api("GET", f"runs/{'0' * 32}/workers")
    assert code == 404
    assert body["error"]["code"] == "not_found"
