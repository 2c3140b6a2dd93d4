"""Agent work counts as the server's activity, so JupyterHub's idle culler leaves it running.

jupyter_server's `web_app.last_activity()` is the newest of its sources: API requests, kernel
messages, and every setting whose name ends in `_last_activity`. jupyterhub-singleuser reports
it to the hub every `JUPYTERHUB_ACTIVITY_INTERVAL` seconds, and jupyterhub-idle-culler stops a
server whose reported activity is older than its timeout. An agent at work makes none of the
first two: a 30-minute eval is one request and a silent kernel, a card waits for a human,
a worker talks to the server directly, a background job runs on its own. So, every `interval_seconds`, `agent_tools_last_activity`
becomes now while any run has work in flight, else the time the last call started or ended.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from tornado.ioloop import PeriodicCallback

from .questions.port import RunQuestions
from .runtime import Resource, Run, Runtime
from .workers.pool import RunWorkers

#: The web_app setting jupyter_server's last_activity() reads (any name ending in _last_activity).
ACTIVITY_SETTING = "agent_tools_last_activity"


class AgentActivity:
    """Keeps `settings[ACTIVITY_SETTING]` fresh from the runtime's runs. `start()`, `stop()`."""

    def __init__(self, runtime: Runtime, settings: dict[str, Any], *, interval_seconds: float,
                 waiting_cards_count: bool) -> None:
        self.runtime = runtime
        self.settings = settings
        self.interval_seconds = interval_seconds
        self.waiting_cards_count = waiting_cards_count
        self._callback: PeriodicCallback | None = None

    def start(self) -> None:
        if self.interval_seconds > 0:
            self._callback = PeriodicCallback(self.refresh, self.interval_seconds * 1000)
            self._callback.start()

    def stop(self) -> None:
        if self._callback is not None:
            self._callback.stop()
            self._callback = None

    def busy_runs(self) -> list[str]:
        """The runs with work in flight: a call (an eval, a notebook cell, a card waiting for
        a human unless `waiting_cards_count` is off), or a worker queued or running."""
        return [run.id for run in list(self.runtime.runs.values()) if self._is_busy(run)]

    def refresh(self) -> None:
        runs = list(self.runtime.runs.values())
        if any(self._is_busy(run) for run in runs):
            latest = datetime.now(timezone.utc)
        else:
            last_call = max((run.last_call_at for run in runs if run.last_call_at), default=None)
            if last_call is None:
                return
            latest = datetime.fromtimestamp(last_call, timezone.utc)
        current = self.settings.get(ACTIVITY_SETTING)
        if current is None or latest > current:
            self.settings[ACTIVITY_SETTING] = latest

    def _is_busy(self, run: Run) -> bool:
        calls = run.calls_in_flight
        questions = run.resources.get(Resource.QUESTIONS)
        if not self.waiting_cards_count and isinstance(questions, RunQuestions):
            # Each open card holds the one call that asked it (ask_user, a permission).
            calls -= len(questions.pending)
        if calls > 0:
            return True
        if any(not job.done for job in run.jobs.background()):  # bash {background: true}
            return True
        workers = run.resources.get(Resource.WORKERS)
        return isinstance(workers, RunWorkers) and any(
            not worker.status.finished for worker in workers.workers.values())
