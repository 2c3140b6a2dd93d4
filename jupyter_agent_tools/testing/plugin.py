"""The pytest plugin (entry point `pytest11: agent_tools`): tool-regression notebooks as tests.

Which notebooks are collected:
- every `.ipynb` under a path given on the command line (`pytest notebooks/regression`);
- anywhere pytest walks, a notebook whose metadata says {"agent_tools": {"regression": true}};
- never one that says {"agent_tools": {"regression": false}} (e.g. a tour that needs a human).
A plain `pytest` run (paths from `testpaths`) collects marked notebooks only, and starts
nothing unless it collected one.

The server's vibe workers run the scripted agent of testing/agents.py.

Each non-empty code cell is a test item, `NOTEBOOK::cell[N]` (N counts every cell from 1, as
JupyterLab shows them). The first item to run starts a real Jupyter server with the extension
on loopback (one per session) and queues every selected notebook for execution against it
with nbclient, `--agent-tools-jobs` at a time (each in its own kernel, over its own copy of
the project); each item then reports its own cell: a failure shows the cell's source and
outputs.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator
    from concurrent.futures import Future, ThreadPoolExecutor

# Importing this module must stay cheap: pytest loads it in every run of every project that
# has the package installed. Anything heavy is imported when a notebook is collected or run
# (tests/regression/test_plugin_cost.py checks which modules importing it pulls in).

MARKER = "agent_tools"
_SESSION_KEY = pytest.StashKey["RegressionSession"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agent-tools", "tool-regression notebooks (jupyter-agent-tools)")
    group.addoption("--agent-tools-cell-timeout", type=int, default=300, metavar="SECONDS",
                    help="interrupt a notebook cell that runs longer than this (default 300)")
    group.addoption("--agent-tools-jobs", type=int, default=2, metavar="N",
                    help="notebooks executed at once, each in its own kernel (default 2)")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_SESSION_KEY] = RegressionSession(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(_SESSION_KEY, None)
    if session is not None:
        session.close()


def pytest_collection_finish(session: pytest.Session) -> None:
    notebooks = [item.parent for item in session.items
                 if isinstance(item, NotebookCell) and isinstance(item.parent, RegressionNotebook)]
    session.config.stash[_SESSION_KEY].notebooks = list(dict.fromkeys(notebooks))


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix != ".ipynb" or ".ipynb_checkpoints" in file_path.parts:
        return None
    marked = _regression_marker(file_path)
    if marked is False:
        return None
    if marked or _named_on_command_line(file_path, parent.config):
        return RegressionNotebook.from_parent(parent, path=file_path)
    return None


def _regression_marker(path: Path) -> bool | None:
    try:
        metadata = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, ValueError):
        return None
    flag = (metadata.get(MARKER) or {}).get("regression")
    return None if flag is None else bool(flag)


def _named_on_command_line(path: Path, config: pytest.Config) -> bool:
    if config.args_source is not pytest.Config.ArgsSource.ARGS:
        return False
    here = config.invocation_params.dir
    for arg in config.args:
        given = (here / arg.split("::", 1)[0]).resolve()
        if path.resolve().is_relative_to(given):
            return True
    return False


class RegressionSession:
    """The session's one Jupyter server, and the notebooks executing against it.

    Nothing starts until the first notebook item runs (a collect-only run starts nothing).
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.notebooks: list[RegressionNotebook] = []
        self._root: Path | None = None
        self._server: Any = None
        self._pool: ThreadPoolExecutor | None = None
        self._outcomes: dict[Path, Future[Any]] = {}
        self._failure: Exception | None = None

    def outcome(self, notebook: RegressionNotebook) -> Any:
        """The notebook's `NotebookOutcome`, once it has run (all are queued on first call)."""
        if self._failure is not None:
            raise self._failure
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            try:
                server = self._start_server()
            except Exception as exc:  # every notebook reports it; no retry per notebook
                self._failure = exc
                raise
            env = {**os.environ, **server.kernel_env()}
            jobs = max(1, self.config.getoption("agent_tools_jobs"))
            self._pool = ThreadPoolExecutor(jobs, thread_name_prefix="agent-tools-notebook")
            for queued in dict.fromkeys([*self.notebooks, notebook]):
                self._outcomes[queued.path] = self._pool.submit(self._execute, queued.path, env)
        return self._outcomes[notebook.path].result()

    def _execute(self, path: Path, env: dict[str, str]) -> Any:
        from .execution import execute_notebook

        return execute_notebook(path, env=env,
                                cell_timeout=self.config.getoption("agent_tools_cell_timeout"))

    def _start_server(self) -> Any:
        if self._server is None:
            from .agents import SERVER_ARGS
            from .server import JupyterServerProcess

            self._root = Path(tempfile.mkdtemp(prefix="agent-tools-regression-"))
            self._server = JupyterServerProcess(self._root, extra_args=SERVER_ARGS).start()
        return self._server

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._server is not None:
            self._server.stop()
            self._server = None
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None


class RegressionNotebook(pytest.File):
    """A notebook: one item per non-empty code cell; executed once, on its first item."""

    def collect(self) -> Iterator[NotebookCell]:
        from .execution import code_cells, read_notebook

        for outcome in code_cells(read_notebook(self.path)):
            yield NotebookCell.from_parent(self, name=f"cell[{outcome.index + 1}]",
                                           index=outcome.index)

    def outcome(self) -> Any:
        """The notebook's `NotebookOutcome` (executed once, for all its items)."""
        if not hasattr(self, "_outcome"):
            self._outcome: Any = None
            self._error: BaseException | None = None
            try:
                self._outcome = self.config.stash[_SESSION_KEY].outcome(self)
            except Exception as exc:  # noqa: BLE001 - whatever stopped it, each cell reports it
                self._error = exc
        if self._error is not None:
            raise NotebookNotRun(f"{self.path.name} could not run: {self._error}") from self._error
        return self._outcome


class NotebookNotRun(Exception):
    """The notebook as a whole could not run (no kernel, no server)."""


class NotebookCellFailed(Exception):
    """A cell raised, timed out, or died with its kernel; carries the cell's report."""


class NotebookCell(pytest.Item):
    """One code cell of a regression notebook."""

    def __init__(self, *, index: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.index = index

    def runtest(self) -> None:
        parent = self.parent
        assert isinstance(parent, RegressionNotebook)
        cell = next(c for c in parent.outcome().cells if c.index == self.index)
        if cell.status == "skipped":
            pytest.skip(cell.reason)
        if cell.status != "passed":
            raise NotebookCellFailed(cell.report())

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, NotebookCellFailed | NotebookNotRun):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.path.name}::{self.name}"
