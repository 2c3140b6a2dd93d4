"""What a tool sees of its run and of the runtime, as Protocols.

`Tool`, `CallContext` and the approval gate need a run and the runtime, and `Run` and `Runtime`
need tools: this module (it imports only results, jobs and the base) lets the first name the second
without importing it (no import cycle, `TYPE_CHECKING` included). `Run` and `Runtime` satisfy
these Protocols structurally; each lists only the members tools use, so mypy still checks
every access.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any, Protocol

from ..files.order import FileLocks, SeenFiles
from ..files.walk import FileWalker
from ..notebooks.journal import NotebookJournal
from .jobs import JobTable
from .results import ToolResult


class Resource(str, Enum):
    """Names of the live resources a run can have attached."""

    WORKDIR = "workdir"
    PARSER = "parser"
    LSP = "lsp"
    KERNELS = "kernels"
    DEBUG = "debug"
    CONVERSATION = "conversation"
    QUESTIONS = "questions"
    SPACE = "space"
    WORKERS = "workers"


class Origin(str, Enum):
    """Where a call came from; recorded in the transcript."""

    API = "api"
    HTTP = "http"
    CELL = "cell"
    WORKER = "worker"
    CLI = "cli"
    NOTEBOOK = "notebook"
    MCP = "mcp"


class RuntimeView(Protocol):
    """The runtime's root and limits, as tools read them (`runtime.Runtime` is one)."""

    root_path: Path
    # The hosting server application (its contents manager, shared documents), None embedded.
    parent: Any
    max_output_chars: int
    max_read_lines: int
    max_read_bytes: int
    max_loop_read_bytes: int
    max_notebook_bytes: int
    max_notebook_mirror_bytes: int
    max_cell_output_bytes: int
    notebook_run_timeout_seconds: float
    max_notebook_run_timeout_seconds: float
    max_line_chars: int
    max_read_image_bytes: int
    max_read_images: int
    max_grep_results: int
    max_glob_results: int
    grep_timeout_seconds: float
    max_grep_output_bytes: int
    max_concurrent_greps: int
    max_search_argument_chars: int
    max_walk_entries: int
    walk_timeout_seconds: float
    bash_timeout_seconds: int
    max_bash_timeout_seconds: int
    max_bash_memory_mb: int
    max_jobs_per_run: int
    max_job_output_bytes: int
    job_wait_seconds: float
    max_job_wait_seconds: float
    max_call_seconds: float
    respect_gitignore: bool
    skip_dirs: list[str]
    # The per-file order every change of every run takes (files/order.py).
    file_locks: FileLocks


class SandboxView(Protocol):
    """What of a run is confined (runtime/sandbox.py `RunSandbox`), as its processes' starters
    use it."""

    def confines(self, surface: str) -> bool: ...

    def policy(self, surface: str, *, ports: list[int] | None = None,
               read: list[str] | None = None) -> str | None:
        """The policy (sandbox.py's JSON) `surface`'s processes run under; None: unconfined."""
        ...

    def env(self, surface: str) -> dict[str, str]:
        """Environment for a confined surface's processes (TMPDIR in the run's temp folder)."""
        ...


class RunView(Protocol):
    """A run as its tools use it: identity, paths, attached resources (`run.Run` is one)."""

    id: str
    cwd: Path
    cwd_under_root: str  # the cwd as a path from the root ("." for the root)
    conversation_id: str | None
    resources: dict[Resource, Any]
    # What the agent saw of notebook cells and changed in them: stale_edit checks, revert.
    notebooks: NotebookJournal
    # Work going on between calls (background `bash`), ended with the run.
    jobs: JobTable
    # What the agent last read (or wrote) of each file: `write` refuses to overwrite a file
    # changed since.
    seen_files: SeenFiles

    @property
    def runtime(self) -> RuntimeView: ...

    @property
    def sandbox(self) -> SandboxView:
        """What of the run is confined: bash, its own kernels, debug launches, workers."""
        ...

    @property
    def approvals(self) -> str:
        """The run's approval policy: auto, ask (a human reviews changes) or deny."""
        ...

    def resolve(self, path: str) -> Path:
        """An absolute path for `path` (relative to the run's cwd), refused outside the root."""
        ...

    def relpath(self, path: Path) -> str:
        """How results name a file: relative to the run's cwd, else to the root."""
        ...

    def tool_names(self) -> list[str]:
        """The tools this run's surface shows (sorted)."""
        ...

    def walker(self, **overrides: Any) -> FileWalker:
        """A tree walker configured from the runtime's limits."""
        ...

    async def call(self, name: str, args: dict[str, Any] | None = None, *,
                   origin: Origin | str = Origin.API) -> ToolResult:
        """Call another tool of this run (e.g. from an eval cell), through the one dispatch path."""
        ...
