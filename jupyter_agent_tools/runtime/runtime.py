"""The Runtime: configuration, the shared resource providers, and the runs."""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import os
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from traitlets import Any as AnyTrait
from traitlets import Bool, Dict, Enum, Float, Int, List, Unicode, default
from traitlets.config import LoggingConfigurable

from ..files.errors import FilesError
from ..files.order import FileLocks
from ..files.paths import resolve_inside
from ..files.walk import SEARCH_SKIP_DIRS
from .config import RenamedConfig, renamed_to
from .events import EventBus
from .file_errors import file_error
from .presence import agent_presence
from .registry import ToolRegistry
from .resources import ResourceProvider
from .results import ErrorCode, ToolError
from .run import ClientInfo, Run, RunOptions
from .sandbox import SURFACES, RunSandbox, SandboxUnavailable, describe_support, support
from .store import RunRecorder, RunStore, StoreLimits
from .tiers import Approvals, Surface
from .tokens import RunTokens
from .tool import Origin, Resource, Tool
from .transcript import (
    DEFAULT_MAX_TRANSCRIPT_BYTES,
    DEFAULT_MAX_TRANSCRIPT_ENTRIES,
    TranscriptEntry,
)
from .user_kernels import UserKernelLender, UserKernelRefused, refusal_error
from .wrappers import Wrapper, notes, output_limit

BUILTIN_TOOLS = [
    "jupyter_agent_tools.tools.files:Read",
    "jupyter_agent_tools.tools.files:Write",
    "jupyter_agent_tools.tools.files:Edit",
    "jupyter_agent_tools.tools.patch:ApplyPatch",
    "jupyter_agent_tools.tools.search:Glob",
    "jupyter_agent_tools.tools.search:Grep",
    "jupyter_agent_tools.tools.shell:Bash",
    "jupyter_agent_tools.tools.shell:JobTool",
    "jupyter_agent_tools.tools.structural:AstGrep",
    "jupyter_agent_tools.tools.structural:AstEdit",
    "jupyter_agent_tools.tools.structural:Resolve",
    "jupyter_agent_tools.tools.lsp:Lsp",
    "jupyter_agent_tools.tools.lsp:LspRename",
    "jupyter_agent_tools.tools.debug:Debug",
    "jupyter_agent_tools.tools.vibe:VibeSpawn",
    "jupyter_agent_tools.tools.vibe:VibeSend",
    "jupyter_agent_tools.tools.vibe:VibeWait",
    "jupyter_agent_tools.tools.vibe:VibeKill",
    "jupyter_agent_tools.tools.vibe:VibeList",
    "jupyter_agent_tools.tools.eval:Eval",
    "jupyter_agent_tools.tools.notebook:NotebookTool",
    "jupyter_agent_tools.tools.ask_user:AskUser",
]

#: Longest the idle timer sleeps between two looks at the runs (a busy run is looked at again).
_IDLE_POLL_SECONDS = 5.0

BUILTIN_PROVIDERS: list[str] = [
    "jupyter_agent_tools.structural.provider:ParserProvider",
    "jupyter_agent_tools.lsp.supervisor:LanguageServerSupervisor",
    "jupyter_agent_tools.dap.supervisor:DebugSupervisor",
    "jupyter_agent_tools.workers.pool:WorkerPool",
    "jupyter_agent_tools.kernels.factory:KernelFactory",
    "jupyter_agent_tools.questions.port:QuestionPort",
]


@dataclass(frozen=True)
class RunPlan:
    """A run `create_run` would make, its arguments checked (`Runtime.plan_run`)."""

    options: RunOptions
    cwd: Path
    #: The resources it may get (None: every one the runtime has).
    wanted: frozenset[Resource] | None
    #: What of it runs confined (runtime/sandbox.py); None: nothing.
    sandbox: RunSandbox | None = None


class Runtime(RenamedConfig, LoggingConfigurable):
    """One per server (or per embedded program): config, resource providers, runs."""

    root_dir = Unicode(help="The directory every run's files must stay inside.").tag(config=True)

    @default("root_dir")
    def _default_root_dir(self) -> str:
        return os.getcwd()

    default_surface = Enum(
        [s.value for s in Surface], default_value="full",
        help="Surface of a run created without one: full, plan or readonly.",
    ).tag(config=True)
    default_approvals = Enum(
        [a.value for a in Approvals], default_value="auto",
        help="Approval policy of a run created without one: auto, ask or deny.",
    ).tag(config=True)
    sandbox = Dict(
        value_trait=Enum(["off", "workspace-write", "read-only"]),
        key_trait=Enum(list(SURFACES)), default_value={},
        help="Sandbox of a run created without the `sandbox` option, per surface: 'bash', "
        "'eval' (the run's own kernels; a user's notebook kernel is never confined), 'debug' "
        "(launches) and 'workers' (worker commands), each 'off' (the default), "
        "'workspace-write' (writes only in the run's folder and its private temp folder; no "
        "reading Jupyter's runtime directory) or 'read-only' (writes only in the private temp "
        "folder). Enforced with Linux Landlock; where it cannot be, a confined run is refused. "
        "E.g. {'bash': 'workspace-write', 'workers': 'workspace-write'}.",
    ).tag(config=True)
    sandbox_network = Bool(
        True, help="Whether a run created without the `network` option may use the network. "
        "False cuts it off for bash, the run's own kernels, debug launches and worker commands "
        "(a network namespace, or Landlock's TCP rules; a kernel keeps its own connection "
        "ports, a worker command the server's).",
    ).tag(config=True)
    tools = List(
        Unicode(), default_value=BUILTIN_TOOLS,
        help="Built-in tools to load, as 'module:Class'. Plug-ins also come from the "
        "'jupyter_agent_tools.tools' entry-point group.",
    ).tag(config=True)
    disabled_tools = List(Unicode(), help="Tool names never registered.").tag(config=True)
    resource_providers = List(
        Unicode(), default_value=BUILTIN_PROVIDERS,
        help="Resource providers to start, as 'module:Class' (parser, language servers, ...).",
    ).tag(config=True)
    disabled_resources = List(
        Unicode(), help="Resource names never attached to runs (e.g. 'lsp', 'debug')."
    ).tag(config=True)
    max_output_chars = Int(
        30_000, help="Longest text a tool result may carry; longer output is cut with a note."
    ).tag(config=True)
    max_transcript_entries = Int(
        DEFAULT_MAX_TRANSCRIPT_ENTRIES, help="Calls kept per run transcript; past it the oldest "
        "are dropped (counted in the run's transcript_dropped)."
    ).tag(config=True)
    max_transcript_bytes = Int(
        DEFAULT_MAX_TRANSCRIPT_BYTES, help="Bytes of arguments and result texts kept per run "
        "transcript (as held in memory: a string 1 to 4 bytes a character). Past it the oldest "
        "calls are dropped, as past max_transcript_entries; a call whose arguments alone are "
        "larger is kept without them, and replay refuses it."
    ).tag(config=True)
    max_runs = Int(200, help="Most runs alive at once; creating one more is refused.").tag(config=True)
    run_store_path = Unicode(
        None, allow_none=True,
        help="The SQLite file where runs are kept across restarts and crashes: descriptors, "
        "transcripts, staged edits waiting for review, unanswered cards (kernels and debug "
        "sessions are not kept: they do not survive). Unset: <Jupyter data directory>/"
        "agent_tools/runs.sqlite3 under a Jupyter server, no store for an embedded Runtime. "
        "Empty: runs are not kept. Never inside the server root: a path there is replaced by "
        "one in the system's temporary folder (<tmp>/jupyter-agent-tools-<uid>/), and a "
        "warning says so.",
    ).tag(config=True)
    run_store_default = Unicode(
        None, allow_none=True,
        help="What an unset run_store_path means; the server extension sets it to Jupyter's "
        "data directory. None: no store.",
    )
    max_stored_runs = Int(
        500, help="Most ended runs the run store keeps; past it the oldest ended are removed."
    ).tag(config=True)
    stored_run_max_age_days = Float(
        30.0, help="Days an ended run stays in the run store. 0: no age limit."
    ).tag(config=True)
    max_store_mb = Float(
        512.0, help="Most MiB the run store's file holds; past it the oldest ended runs are "
        "removed (runs still open are never removed). 0: no size limit."
    ).tag(config=True)
    max_pending_store_writes = Int(
        10_000, help="Most writes waiting for the run store's thread; past it a write is "
        "dropped and logged rather than waited for (the server's event loop never waits on "
        "the disk)."
    ).tag(config=True)
    max_read_lines = Int(2_000, help="Lines `read` returns when no limit is given.").tag(config=True)
    max_read_bytes = Int(
        2_000_000, help="Largest file `read`, `edit` and the search tools open."
    ).tag(config=True)
    max_loop_read_bytes = Int(
        65_536, help="A file up to this size that the kernel holds in memory is read by `read` "
        "on the event loop, skipping the hop to a worker thread (Linux 5.12+: openat2 with "
        "RESOLVE_CACHED and a non-waiting read; anything else goes to a thread). `lsp` likewise "
        "looks up root markers and files it read before from the kernel's caches on the loop, "
        "and quotes answers' lines from files up to this size. 0: always in a thread."
    ).tag(config=True)
    max_notebook_bytes = Int(
        32_000_000, help="Largest notebook (.ipynb) `read`, `edit`, `grep`, `ast_grep`, "
        "`ast_edit` and `resolve` open (max_read_bytes is for other files): outputs such as "
        "plots make notebooks big. What `read` shows stays within max_read_lines and "
        "max_line_chars."
    ).tag(config=True)
    max_notebook_mirror_bytes = Int(
        128 * 1024 * 1024, help="Most bytes of notebooks' cell sources `grep` keeps as text "
        "files in its scratch folder (under the system's temporary folder) between searches, "
        "so that an unchanged notebook is not parsed again; past it the least recently "
        "searched are dropped. 0: every search parses every notebook it searches."
    ).tag(config=True)
    max_line_chars = Int(2_000, help="Longest line shown by `read` and `grep`.").tag(config=True)
    max_cell_output_bytes = Int(
        10_000_000, help="Most bytes of output one cell run by `notebook` writes into the "
        "notebook; past it a note says the rest was not written (the agent's own result is "
        "bounded by max_output_chars)."
    ).tag(config=True)
    notebook_run_timeout_seconds = Float(
        600.0, help="Default of `notebook run`'s timeout_seconds: past it the kernel is "
        "interrupted and the call says so."
    ).tag(config=True)
    max_notebook_run_timeout_seconds = Float(
        3_600.0, help="Largest timeout_seconds a `notebook run` may ask for."
    ).tag(config=True)
    max_read_image_bytes = Int(
        40_000, help="Largest image any result carries (eval, notebook run and run_all, "
        "read of a notebook's saved outputs), in bytes before base64 (a plot is 50-80 KB of "
        "PNG, 70-100k characters of base64: more than many clients take). A larger one is "
        "re-encoded (Pillow: a palette PNG for a plot, a JPEG for a photo) and only then "
        "downscaled until it fits, or left out with a note naming this limit."
    ).tag(config=True)
    max_read_images = Int(
        8, help="Most images one `read` of a notebook returns (outputs='images'); the others "
        "are named in the text, with the call that shows them."
    ).tag(config=True)
    max_grep_results = Int(200, help="Most matching lines `grep` returns.").tag(config=True)
    max_glob_results = Int(500, help="Most paths `glob` returns.").tag(config=True)
    grep_timeout_seconds = Float(
        30.0, help="Longest a `grep` may run; past it ripgrep's process group is killed."
    ).tag(config=True)
    max_grep_output_bytes = Int(
        16_000_000, help="Most bytes of ripgrep output one `grep` keeps; past it the matches "
        "are only counted (the total is a lower bound if grep_timeout_seconds stops that)."
    ).tag(config=True)
    max_concurrent_greps = Int(
        8, help="Most `grep` calls running ripgrep at once, and as many `glob` calls; further "
        "calls wait their turn."
    ).tag(config=True)
    max_search_argument_chars = Int(
        4_096, help="Longest pattern, glob or path `grep` and `glob` accept (invalid_arguments "
        "beyond it)."
    ).tag(config=True)
    max_walk_entries = Int(
        200_000, help="Most paths one `glob` walk reads from ripgrep (of the files not "
        "ignored, and of those its glob matches) before it stops and says so."
    ).tag(config=True)
    walk_timeout_seconds = Float(
        30.0, help="Longest one `glob` walk runs before it stops and says so."
    ).tag(config=True)
    bash_timeout_seconds = Int(120, help="Default `bash` timeout.").tag(config=True)
    max_bash_timeout_seconds = Int(600, help="Longest `bash` timeout a call may ask for.").tag(
        config=True
    )
    skip_dirs = List(
        Unicode(), default_value=list(SEARCH_SKIP_DIRS),
        help="Directory names never walked by grep, glob and structural search, even with "
        "`hidden: true` (node_modules is not one: it follows the ignore rules, as in rg).",
    ).tag(config=True)
    max_jobs_per_run = Int(
        8, help="Most background jobs (`bash {background: true}`) one run has running at once; "
        "starting one more answers `busy`. As many finished ones are kept for `job wait` and "
        "`job output` (the oldest forgotten first)."
    ).tag(config=True)
    max_job_output_bytes = Int(
        1_000_000, help="Bytes of output a background job keeps (the last ones; "
        "`job output` shows the end of them within max_output_chars)."
    ).tag(config=True)
    job_wait_seconds = Float(
        30.0, help="How long `job wait` waits when the call gives no timeout_seconds."
    ).tag(config=True)
    max_job_wait_seconds = Float(
        600.0, help="Longest timeout_seconds a `job wait` may ask for (max_call_seconds "
        "bounds it too)."
    ).tag(config=True)
    max_call_seconds = Float(
        45.0, help="Longest a call of eval, notebook run/run_all or bash (and a `job wait`) "
        "keeps its request open: past it the call answers `running` with a job id and its "
        "output so far, and the work goes on as a job of the run (`job` wait, output, "
        "cancel). Below the 60 s after which MCP's TypeScript SDK and common reverse proxies "
        "(ingress-nginx's proxy_read_timeout) give up on a request. 0: calls never become "
        "jobs (a call waits as long as its work takes)."
    ).tag(config=True)
    max_bash_memory_mb = Int(
        8192, help="Address-space limit of a `bash` command, in MiB (0: none)."
    ).tag(config=True)
    respect_gitignore = Bool(
        True, help="Skip files matched by .gitignore in grep, glob and structural search."
    ).tag(config=True)
    idle_release_seconds = Float(
        60.0, help="When no run is open, or every open run has had no call and no job in "
        "flight this long, the resources give back what they keep only to be quick: the "
        "search workers stop (their parse-tree caches with them), warm kernels and the spare "
        "debug adapter end, language servers stop. Each starts again at its next use. 0: never.",
    ).tag(config=True)
    run_idle_timeout_seconds = Float(
        3600.0, help="A run created over HTTP or the Python API (not an MCP session's, which "
        "has its own timeouts, nor a worker's child run) with no call and no job in flight "
        "this long is closed, its kernels and language servers with it (the run store says it "
        "ended 'idle'; a user's kernel it borrowed is never shut down). 0: never.",
    ).tag(config=True)
    kernel_manager = AnyTrait(
        None, allow_none=True,
        help="The server's kernel manager when hosted; None embedded (kernels start locally).",
    )
    server_url = Unicode("", help="Base URL of the hosting server, when there is one.")

    # The names before issue 16 (durations end in _seconds, bounds start with max_).
    read_max_lines = renamed_to("max_read_lines", Int)
    read_max_bytes = renamed_to("max_read_bytes", Int)
    grep_max_results = renamed_to("max_grep_results", Int)
    glob_max_results = renamed_to("max_glob_results", Int)
    grep_max_output_bytes = renamed_to("max_grep_output_bytes", Int)
    grep_max_concurrent = renamed_to("max_concurrent_greps", Int)
    search_max_argument_chars = renamed_to("max_search_argument_chars", Int)
    walk_max_entries = renamed_to("max_walk_entries", Int)
    bash_max_timeout_seconds = renamed_to("max_bash_timeout_seconds", Int)
    bash_memory_limit_mb = renamed_to("max_bash_memory_mb", Int)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.root_path = Path(self.root_dir).resolve()
        self.registry = ToolRegistry(self.log)
        self.registry.load(list(self.tools), set(self.disabled_tools))
        self.providers: dict[Resource, ResourceProvider] = {}
        self.provider_errors: dict[str, str] = {}
        for spec in self.resource_providers:
            self._start_provider(spec)
        self.runs: dict[str, Run] = {}
        self.space_buses: dict[str, EventBus] = {}
        self.run_tokens = RunTokens()
        # One order per file for every run of this runtime: each change holds its files'
        # locks from reading them to writing them (files/order.py).
        self.file_locks = FileLocks()
        self._wrappers: list[Wrapper] | None = None
        self.run_store = self._open_run_store()
        # The idle timer (started with the first run): when a run last closed, and when the
        # providers last released what they keep only to be quick (time.time()).
        self._idle_timer: asyncio.TimerHandle | None = None
        self._idle_task: asyncio.Future[None] | None = None
        self._last_closed_at = 0.0
        self._released_at = 0.0

    def _open_run_store(self) -> RunStore | None:
        """The run store, if one is configured; never a file inside the root."""
        configured = self.run_store_path if self.run_store_path is not None \
            else self.run_store_default
        if not configured:
            return None
        path = Path(os.path.expanduser(configured)).resolve()
        if path.is_relative_to(self.root_path):
            digest = hashlib.sha256(str(self.root_path).encode()).hexdigest()[:12]
            moved = (Path(tempfile.gettempdir()).resolve()
                     / f"jupyter-agent-tools-{os.getuid()}" / f"runs-{digest}.sqlite3")
            if moved.is_relative_to(self.root_path):
                self.log.warning("agent-tools: the run store %s would be inside the server "
                                 "root %s, where agents could read it; runs will not survive "
                                 "a restart. Set c.Runtime.run_store_path outside the root.",
                                 path, self.root_path)
                return None
            self.log.warning("agent-tools: the run store %s would be inside the server root "
                             "%s, where agents could read it; using %s instead. Set "
                             "c.Runtime.run_store_path outside the root to keep it elsewhere.",
                             path, self.root_path, moved)
            path = moved
        limits = StoreLimits(max_runs=self.max_stored_runs,
                             max_age_seconds=self.stored_run_max_age_days * 86_400,
                             max_bytes=int(self.max_store_mb * 2**20),
                             max_pending_writes=self.max_pending_store_writes)
        return RunStore(path, self.root_path, limits, self.log)

    def _start_provider(self, spec: str) -> None:
        module_name, _, attr = spec.partition(":")
        try:
            provider_class = getattr(importlib.import_module(module_name), attr)
            if provider_class.resource.value in self.disabled_resources:
                return
            provider = provider_class(parent=self, log=self.log)
        except Exception as exc:  # contained: the other resources still work
            self.log.exception("could not start resource provider %s", spec)
            self.provider_errors[spec] = f"{type(exc).__name__}: {exc}"
            return
        self.providers[provider.resource] = provider

    def provider(self, resource: Resource | str) -> ResourceProvider | None:
        return self.providers.get(Resource(resource))

    def wrappers(self) -> list[Wrapper]:
        """Call wrappers, outermost first."""
        if self._wrappers is None:
            self._wrappers = [output_limit(self.max_output_chars, self.max_read_image_bytes),
                              notes, agent_presence]
            for provider in self.providers.values():
                self._wrappers.extend(provider.wrappers())
        return self._wrappers

    def space_bus(self, space: str) -> EventBus:
        """The event stream of a space: what human front ends connected there receive."""
        return self.space_buses.setdefault(space, EventBus())

    # -- runs -----------------------------------------------------------------------------

    async def create_run(
        self,
        cwd: str = ".",
        surface: str | None = None,
        conversation_id: str | None = None,
        vibe: bool = False,
        approvals: str | None = None,
        space: str | None = None,
        *,
        resources: list[str] | None = None,
        parent_id: str | None = None,
        origin: str = "api",
        kernel_id: str | None = None,
        notebook: str | None = None,
        run_id: str | None = None,
        sandbox: str | None = None,
        network: bool | None = None,
        client: ClientInfo | None = None,
    ) -> Run:
        """Create a run. By default it gets every resource the runtime has.

        `resources` restricts attachment to the named ones (the working directory always).
        `kernel_id` (a kernel of the server) or `notebook` (a path, relative to `cwd`, whose
        session's kernel is used) makes the run's Python eval borrow that user's kernel.
        `run_id` is the id to give it (one handed out before the run existed), else a new one.
        `sandbox` (off, workspace-write, read-only: every surface; else `c.Runtime.sandbox`
        per surface) and `network` (else `c.Runtime.sandbox_network`) confine what it runs
        (runtime/sandbox.py); `unavailable` where this machine cannot.
        """
        if sandbox is not None or network is not None or self.sandbox or not self.sandbox_network:
            await asyncio.to_thread(support)  # probed once, off the loop
        plan = self.plan_run(cwd, surface, conversation_id, vibe, approvals, space,
                             resources=resources, parent_id=parent_id, origin=origin,
                             kernel_id=kernel_id, notebook=notebook, sandbox=sandbox,
                             network=network)
        if run_id is not None and run_id in self.runs:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"Run {run_id} exists already.")
        if len(self.runs) >= self.max_runs:
            raise ToolError(ErrorCode.UNAVAILABLE,
                            f"{self.max_runs} runs are alive already; close one first.")
        options, path, wanted = plan.options, plan.cwd, plan.wanted
        if client is not None:  # `client`: the agent's program (MCP clientInfo), shown to humans
            options = replace(options, client=client)
        run = Run(self, options, path, run_id=run_id)
        if plan.sandbox is not None:
            run.sandbox = plan.sandbox
            run.sandbox.open()
        run.resources[Resource.WORKDIR] = path
        restored = await self._resume_conversation(run, conversation_id)
        if kernel_id or notebook:
            # Last await before attaching: no other run can borrow the kernel in between.
            options = run.options = await self._borrow_user_kernel(options, path, kernel_id,
                                                                   notebook, wanted)
        if conversation_id:
            run.resources[Resource.CONVERSATION] = conversation_id
        if space:
            run.resources[Resource.SPACE] = space
        for resource, provider in self.providers.items():
            if wanted is not None and resource not in wanted:
                continue
            try:
                handle = provider.attach(run, options)
            except Exception:
                self.log.exception("attaching %s to run %s failed", resource.value, run.id)
                continue
            if handle is not None:
                run.resources[resource] = handle
        self.runs[run.id] = run
        self._start_idle_timer()
        run.record.opened(conversation_id, run.describe(), run.created_at)
        for entry in restored:
            run.record.entry_finished(entry._sequence, entry.to_json(), run.transcript.dropped)
        return run

    def plan_run(
        self,
        cwd: str = ".",
        surface: str | None = None,
        conversation_id: str | None = None,
        vibe: bool = False,
        approvals: str | None = None,
        space: str | None = None,
        *,
        resources: list[str] | None = None,
        parent_id: str | None = None,
        origin: str = "api",
        kernel_id: str | None = None,  # noqa: ARG002 - checked by create_run, as it borrows
        notebook: str | None = None,  # noqa: ARG002 - the kernel (see _borrow_user_kernel)
        sandbox: str | None = None,
        network: bool | None = None,
    ) -> RunPlan:
        """`create_run`'s arguments checked, as it checks them, without creating the run (an
        MCP session makes its run at its first call); ToolError saying what to fix."""
        try:
            options = RunOptions(
                cwd=cwd,
                surface=Surface(surface or self.default_surface),
                conversation_id=conversation_id,
                vibe=vibe,
                approvals=Approvals(approvals or self.default_approvals),
                space=space,
                parent_id=parent_id,
                origin=Origin(origin),
                sandbox=sandbox,
                network=network,
            )
            wanted = None if resources is None else frozenset(Resource(r) for r in resources)
            confined = RunSandbox.plan(sandbox, network, dict(self.sandbox),
                                       self.sandbox_network, Path("."))
        except ValueError as exc:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"{exc}. surface is full|plan|readonly; approvals is auto|ask|deny; "
                            f"origin is one of {[o.value for o in Origin]}; resources are "
                            f"among {[r.value for r in Resource]}.") from None
        try:
            path = resolve_inside(self.root_path, self.root_path, cwd)
            is_dir = path.is_dir()
        except (OSError, ValueError) as exc:  # a name too long for the OS, unencodable text
            reason = exc.strerror if isinstance(exc, OSError) else str(exc)
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"cwd {str(cwd)[:200]!r} cannot be used ({reason}); pass a "
                            "directory under the server root.") from None
        except FilesError as exc:  # containment's own refusal: say which argument it was
            error = file_error(exc)
            raise ToolError(error.code, f"cwd: {error.message}") from None
        if not is_dir:
            raise ToolError(ErrorCode.NOT_FOUND,
                            f"cwd {str(cwd)[:200]!r} is not a directory under the server root.")
        confined.cwd = path
        try:
            confined.check(support() if confined.active else {})
        except SandboxUnavailable as exc:
            raise ToolError(ErrorCode.UNAVAILABLE, str(exc)) from None
        return RunPlan(options, path, wanted, confined if confined.active else None)

    def planned_tools(self, plan: RunPlan) -> list[Tool]:
        """The tools a run created from `plan` would see (`Run.visible_tools`), known without
        attaching anything: from the resources whose providers would attach
        (`ResourceProvider.attaches`)."""
        options = plan.options
        resources = {Resource.WORKDIR}
        if options.conversation_id:
            resources.add(Resource.CONVERSATION)
        if options.space:
            resources.add(Resource.SPACE)
        resources.update(resource for resource, provider in self.providers.items()
                         if (plan.wanted is None or resource in plan.wanted)
                         and provider.attaches(options))
        return [tool for tool in self.registry
                if tool.requires <= resources and options.surface.allows(tool.tier)]

    async def _resume_conversation(self, run: Run, conversation_id: str | None
                                   ) -> list[TranscriptEntry]:
        """Give `run` the store's record; when `conversation_id` was an ended run's (and no
        open run has it), that run's transcript, and the notice saying what did not last."""
        if self.run_store is None:
            return []
        run.record = RunRecorder(self.run_store, run.id)
        if not conversation_id or any(other.conversation_id == conversation_id
                                      for other in self.runs.values()):
            return []
        found = await self.run_store.last_ended_in_conversation(conversation_id)
        if found is None:
            return []
        previous, records = found
        restored = run.transcript.restore(records)
        run.resumed_from = previous["id"]
        run.notice = (
            f"This run continues conversation {conversation_id!r} from run {previous['id']}, "
            f"which ended ({previous['ended_by']}): its {len(records)} earlier call(s) are in "
            "this run's transcript. Kernels (with their variables) and debug sessions did not "
            "survive; run again what you need from them. Edits it staged are listed at "
            f"agent-tools/api/runs/{previous['id']}/edits."
        )
        return restored

    async def _borrow_user_kernel(self, options: RunOptions, cwd: Path, kernel_id: str | None,
                                  notebook: str | None,
                                  wanted: frozenset[Resource] | None) -> RunOptions:
        """`options` naming the user's kernel the run will use, checked to exist."""
        if kernel_id and notebook:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            "Give kernel_id or notebook, not both: notebook names its session's "
                            "kernel.")
        kernels = self.providers.get(Resource.KERNELS)
        if not isinstance(kernels, UserKernelLender) or (
                wanted is not None and Resource.KERNELS not in wanted):
            raise ToolError(ErrorCode.UNAVAILABLE,
                            "kernel_id/notebook need the kernels resource, which this run would "
                            "not have; enable it, or create the run without them.")
        try:
            notebook_path = resolve_inside(self.root_path, cwd, notebook) if notebook else None
        except FilesError as exc:
            error = file_error(exc)
            raise ToolError(error.code, f"notebook: {error.message}") from None
        try:
            found = await kernels.find_user_kernel(kernel_id=kernel_id or None,
                                                   notebook=notebook_path)
        except UserKernelRefused as exc:
            raise refusal_error(exc) from None
        return replace(options, kernel_id=found.kernel_id, notebook=found.notebook)

    def get_run(self, run_id: str) -> Run:
        run = self.runs.get(run_id)
        if run is None:
            raise ToolError(ErrorCode.NOT_FOUND, f"No run {run_id!r}. List runs or create one.")
        return run

    async def close_run(self, run_id: str, ended_by: str = "close") -> None:
        """Release everything the run holds: no process it started outlives it.

        `ended_by` (close, idle, restart) is what the run store says of it."""
        run = self.runs.pop(run_id, None)
        if run is None:
            return
        run.closed = True
        self.run_tokens.drop(run_id)
        # First its jobs and calls' own processes: they may use the resources released below.
        await run.jobs.close()
        for resource, handle in list(run.resources.items()):
            provider = self.providers.get(resource)
            if provider is None:
                continue
            try:
                await provider.release(run, handle)
            except Exception:
                self.log.exception("releasing %s of run %s failed", resource.value, run.id)
        run.resources.clear()
        await asyncio.to_thread(run.sandbox.close)  # its private temp folder
        run.record.ended(ended_by, run.transcript.dropped)
        run.events.publish("run_closed", run_id=run.id)
        self._last_closed_at = time.time()

    # -- idle: runs that idle out, resources given back ------------------------------------

    def _start_idle_timer(self) -> None:
        """Start the idle timer on the running loop unless it runs (or both idle limits are 0).
        A timer handle between looks, not a task, so a loop that ends leaves nothing pending."""
        if self._idle_timer is not None:
            return
        if self.idle_release_seconds <= 0 and self.run_idle_timeout_seconds <= 0:
            return
        self._idle_timer = asyncio.get_running_loop().call_later(_IDLE_POLL_SECONDS,
                                                                 self._idle_wake)

    def _idle_wake(self) -> None:
        self._idle_task = asyncio.ensure_future(self._idle_look())

    async def _idle_look(self) -> None:
        try:
            wait = await self._idle_tick(time.time())
        except Exception:  # the timer must outlive one failed look (logged)
            self.log.exception("agent-tools: the idle timer failed; it looks again later")
            wait = _IDLE_POLL_SECONDS
        if self._idle_timer is not None:  # not shut down meanwhile
            self._idle_timer = asyncio.get_running_loop().call_later(wait, self._idle_wake)

    @staticmethod
    def _busy(run: Run) -> bool:
        """Whether `run` has a call or a job in flight (then it is never idle)."""
        return run.calls_in_flight > 0 or any(not job.done for job in run.jobs.background())

    @staticmethod
    def _last_active(run: Run) -> float:
        return max(run.created_at, run.last_call_at or 0.0)

    @staticmethod
    def _idles_out(run: Run) -> bool:
        """Whether `run_idle_timeout_seconds` closes `run`: an HTTP or API run, not an MCP
        session's (its session has timeouts of its own) nor a worker's child run."""
        return (run.options.origin not in (Origin.MCP, Origin.WORKER)
                and run.options.parent_id is None)

    async def _idle_tick(self, now: float) -> float:
        """One look at the runs: close those idle past run_idle_timeout_seconds, and give back
        the providers' spares once every run is idle (or none is open) for
        idle_release_seconds. Answers the seconds until the next look."""
        waits = [_IDLE_POLL_SECONDS]
        timeout = self.run_idle_timeout_seconds
        if timeout > 0:
            parents = {run.options.parent_id for run in self.runs.values()}  # workers' runs
            for run in list(self.runs.values()):
                if not self._idles_out(run) or self._busy(run) or run.id in parents:
                    continue
                due = self._last_active(run) + timeout
                if due > now:
                    waits.append(due - now)
                    continue
                self.log.info("agent-tools: closing run %s: no call for %.0f s "
                              "(c.Runtime.run_idle_timeout_seconds)", run.id, now - due + timeout)
                await self.close_run(run.id, ended_by="idle")
        release = self.idle_release_seconds
        if release > 0 and not any(self._busy(run) for run in self.runs.values()):
            active = max([self._last_closed_at,
                          *(self._last_active(run) for run in self.runs.values())])
            if active > self._released_at:  # something ran since the last release
                due = active + release
                if due > now:
                    waits.append(due - now)
                else:
                    self._released_at = now
                    await self.release_idle()
        return max(min(waits), 0.05)

    async def release_idle(self) -> None:
        """Ask every provider to give back what it keeps only to be quick
        (`ResourceProvider.release_idle`): the idle timer's work, callable directly."""
        providers = list(self.providers.values())
        outcomes = await asyncio.gather(*(provider.release_idle() for provider in providers),
                                        return_exceptions=True)
        for provider, outcome in zip(providers, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                self.log.error("agent-tools: %s could not release its idle resources: %r",
                               provider.resource.value, outcome)

    async def shutdown(self) -> None:
        timer, self._idle_timer = self._idle_timer, None
        if timer is not None:
            timer.cancel()
        if self._idle_task is not None and not self._idle_task.done():
            self._idle_task.cancel()
        for run_id in list(self.runs):
            await self.close_run(run_id, ended_by="restart")
        await asyncio.gather(
            *(provider.shutdown() for provider in self.providers.values()), return_exceptions=True
        )
        if self.run_store is not None:
            await self.run_store.close()

    # -- runs that ended (the run store) ------------------------------------------------------

    async def list_runs(self) -> list[dict[str, Any]]:
        """Every open run, and the ended runs the store keeps, oldest first."""
        described = [run.describe() for run in self.runs.values()]
        if self.run_store is not None:
            described += [ended for ended in await self.run_store.ended_runs()
                          if ended["id"] not in self.runs]
        return sorted(described, key=lambda descriptor: descriptor["created_at"])

    async def ended_run(self, run_id: str) -> dict[str, Any] | None:
        """The stored descriptor of an ended run (None: no such ended run)."""
        if self.run_store is None or run_id in self.runs:
            return None
        return await self.run_store.ended_run(run_id)

    # -- status ---------------------------------------------------------------------------

    async def status(self) -> dict[str, Any]:
        """What each resource can serve, and why not where it cannot."""
        resources: dict[str, Any] = {}
        for resource, provider in self.providers.items():
            try:
                resources[resource.value] = await provider.status()
            except Exception as exc:  # noqa: BLE001 - one broken provider must not hide the rest
                resources[resource.value] = {"error": f"{type(exc).__name__}: {exc}"}
        return {
            "root_dir": str(self.root_path),
            "tools": sorted(tool.name for tool in self.registry),
            "tool_load_errors": self.registry.load_errors,
            "resources": resources,
            "resource_errors": self.provider_errors,
            "runs": len(self.runs),
            "sandbox": await asyncio.to_thread(describe_support),
            "run_store": None if self.run_store is None else {
                "path": str(self.run_store.path), "error": self.run_store.failed},
        }

    async def connect_human(self, space: str) -> Human:
        """Connect a human front end to `space` (see the questions resource)."""
        port = self.providers.get(Resource.QUESTIONS)
        if not isinstance(port, HumanChannel):
            raise ToolError(ErrorCode.UNAVAILABLE,
                            "This runtime has no question port; enable the 'questions' resource.")
        return await port.connect_human(space)


class Human(Protocol):
    """A human front end connected to a space: sees its cards, answers or skips them."""

    async def next_card(self, timeout: float | None = None) -> Mapping[str, Any]: ...

    def pending(self) -> Sequence[Mapping[str, Any]]: ...

    async def answer(self, card_id: str, answer: Any = None,
                     text: str | None = None) -> Mapping[str, Any]: ...

    async def skip(self, card_id: str) -> Mapping[str, Any]: ...

    async def close(self) -> None: ...

    async def __aenter__(self) -> Human: ...

    async def __aexit__(self, *exc: object) -> None: ...


@runtime_checkable
class HumanChannel(Protocol):
    """A resource provider humans connect to (the questions resource's QuestionPort)."""

    async def connect_human(self, space: str) -> Human: ...
