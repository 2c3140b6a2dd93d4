"""The worker pool's renamed config: old names still work for one release, and say so."""

from __future__ import annotations

import logging

import pytest
from traitlets.config import Config

from jupyter_agent_tools.workers import WorkerPool


@pytest.mark.parametrize(("old", "new"), [
    ("list_result_chars", "max_list_result_chars"),
    ("event_result_chars", "max_event_result_chars"),
    ("wait_max_seconds", "max_wait_seconds"),
])
def test_an_old_name_sets_the_new_one_and_logs_what_to_write(caplog, old, new):
    config = Config()
    config.WorkerPool[old] = 123
    with caplog.at_level(logging.WARNING):
        pool = WorkerPool(config=config, log=logging.getLogger("workers"))
    assert getattr(pool, new) == 123
    assert f"WorkerPool.{old} is deprecated" in caplog.text
    assert f"use WorkerPool.{new}" in caplog.text


def test_a_worker_gets_the_limits_of_its_pool():
    config = Config()
    config.WorkerPool.max_event_result_chars = 7
    config.WorkerPool.stop_timeout_seconds = 2.5
    limits = WorkerPool(config=config).limits()
    assert limits.max_event_result_chars == 7 and limits.stop_timeout_seconds == 2.5
