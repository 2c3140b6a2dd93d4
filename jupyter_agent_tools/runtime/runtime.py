"""The Runtime: configuration, the shared resource providers, and the runs."""

from __future__ import annotations

import asyncio
import importlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from traitlets import Any as AnyTrait
from traitlets import Bool, Enum, Float, Int, List, Unicode, default
from traitlets.config import LoggingConfigurable

from ..files.errors import FilesError
from ..files.paths import resolve_inside
from ..files.walk import DEFAULT_SKIP_DIRS
from .config import RenamedConfig, renamed_to
from .events import EventBus
from .file_errors import file_error
from .registry import ToolRegistry
from .resources import ResourceProvider
from .results import ErrorCode, ToolError
from .run import Run, RunOptions
from .tiers import Approvals, Surface
from .tokens import RunTokens
from .tool import Origin, Resource
from .transcript import DEFAULT_MAX_TRANSCRIPT_BYTES, DEFAULT_MAX_TRANSCRIPT_ENTRIES
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

BUILTIN_PROVIDERS: list[str] = [
    "jupyter_agent_tools.structural.provider:ParserProvider",
    "jupyter_agent_tools.lsp.supervisor:LanguageServerSupervisor",
    "jupyter_agent_tools.dap.supervisor:DebugSupervisor",
    "jupyter_agent_tools.workers.pool:WorkerPool",
    "jupyter_agent_tools.kernels.factory:KernelFactory",
    "jupyter_agent_tools.questions.port:QuestionPort",
]


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
        40_000, help="Largest image `read` returns from a notebook's saved outputs "
        "(outputs='images'), in bytes before base64 (a plot is 50-80 KB of PNG, 70-100k "
        "characters of base64: more than many clients take). A larger one is downscaled "
        "(Pillow) until it fits, or left out with a note naming this limit."
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
        Unicode(), default_value=list(DEFAULT_SKIP_DIRS),
        help="Directory names never walked by grep, glob and structural search.",
    ).tag(config=True)
    max_bash_memory_mb = Int(
        8192, help="Address-space limit of a `bash` command, in MiB (0: none)."
    ).tag(config=True)
    respect_gitignore = Bool(
        True, help="Skip files matched by .gitignore in grep, glob and structural search."
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
        self._wrappers: list[Wrapper] | None = None

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
            self._wrappers = [output_limit(self.max_output_chars), notes]
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
    ) -> Run:
        """Create a run. By default it gets every resource the runtime has.

        `resources` restricts attachment to the named ones (the working directory always).
        `kernel_id` (a kernel of the server) or `notebook` (a path, relative to `cwd`, whose
        session's kernel is used) makes the run's Python eval borrow that user's kernel.
        """
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
            )
            wanted = None if resources is None else {Resource(r) for r in resources}
        except ValueError as exc:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"{exc}. surface is full|plan|readonly; approvals is auto|ask|deny; "
                            f"origin is one of {[o.value for o in Origin]}; resources are "
                            f"among {[r.value for r in Resource]}.") from None
        if len(self.runs) >= self.max_runs:
            raise ToolError(ErrorCode.UNAVAILABLE,
                            f"{self.max_runs} runs are alive already; close one first.")
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
        run = Run(self, options, path)
        run.resources[Resource.WORKDIR] = path
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
        return run

    async def _borrow_user_kernel(self, options: RunOptions, cwd: Path, kernel_id: str | None,
                                  notebook: str | None,
                                  wanted: set[Resource] | None) -> RunOptions:
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

    async def close_run(self, run_id: str) -> None:
        """Release everything the run holds: no process it started outlives it."""
        run = self.runs.pop(run_id, None)
        if run is None:
            return
        run.closed = True
        self.run_tokens.drop(run_id)
        for resource, handle in list(run.resources.items()):
            provider = self.providers.get(resource)
            if provider is None:
                continue
            try:
                await provider.release(run, handle)
            except Exception:
                self.log.exception("releasing %s of run %s failed", resource.value, run.id)
        run.resources.clear()
        run.events.publish("run_closed", run_id=run.id)

    async def shutdown(self) -> None:
        for run_id in list(self.runs):
            await self.close_run(run_id)
        await asyncio.gather(
            *(provider.shutdown() for provider in self.providers.values()), return_exceptions=True
        )

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
