"""The workers resource's own API: typed errors that say what happened, not what to do."""

from __future__ import annotations

import pytest

from jupyter_agent_tools.runtime import Resource
from jupyter_agent_tools.workers import GradeUnavailable, RunWorkers, UnknownWorker, WorkerGrade


async def test_an_unknown_worker_is_a_fact_with_the_known_ones(make_runtime):
    async def agent(brief: str, run) -> str:
        return brief

    runtime = make_runtime(agent)
    parent = await runtime.create_run(vibe=True)
    workers: RunWorkers = parent.resources[Resource.WORKERS]
    worker = await workers.spawn("look", "look", WorkerGrade.FAST)
    assert worker.grade is WorkerGrade.FAST and worker.describe()["tier"] == "fast"
    with pytest.raises(UnknownWorker) as unknown:
        workers.get("w9")
    assert unknown.value.worker_id == "w9" and unknown.value.known == ["w1"]
    # The tool words the same fact for the agent.
    result = await parent.call("vibe_wait", {"worker_id": "w9"})
    assert result.code == "not_found" and "its workers: w1" in result.error["message"]


async def test_a_grade_without_an_agent_is_unavailable_with_the_backends_reason(make_runtime):
    runtime = make_runtime(None)
    parent = await runtime.create_run(vibe=True)
    workers: RunWorkers = parent.resources[Resource.WORKERS]
    with pytest.raises(GradeUnavailable) as refused:
        await workers.spawn("look", "look", WorkerGrade.GOOD)
    assert refused.value.grade == "good" and "c.PythonBackend.agent" in refused.value.reason
