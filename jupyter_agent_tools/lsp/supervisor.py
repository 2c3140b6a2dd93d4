"""The `lsp` resource: one server per (workspace root, spec), shared by the runs over that root.

Servers start lazily on first use, and stop when the last run using them closes or when the
runtime shuts down (shutdown/exit, then kill on a timeout). What a file can get is decided
at call time: a root marker for its language between the file and the run's cwd, and the
server's binary — both, or no server and a reason.
"""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traitlets import Dict, Enum, Float, Int, List, Unicode
from typing_extensions import override

from ..discovery import BinaryCheck, BinaryFinder, StatOf, stat_on_disk
from ..runtime.config import RenamedConfig, renamed_to
from ..runtime.resources import ResourceProvider
from ..runtime.tool import Resource
from ..runtime.wrappers import Wrapper
from .server import LanguageServer, ServerLimits
from .session import LspSession, SessionLimits
from .specs import ServerSpec, load_specs

if TYPE_CHECKING:
    from ..runtime.run import Run, RunOptions


class LanguageServerSupervisor(RenamedConfig, ResourceProvider):
    """Starts, shares and stops language servers; attaches an `LspSession` to each run."""

    resource = Resource.LSP

    language_servers = Dict(
        help="Add or override language server specs by name, e.g. "
        "{'basedpyright': {'settings': {...}}, 'mylang': {'extensions': {'.ml': 'ocaml'}, "
        "'root_markers': ['dune-project'], 'command': ['ocamllsp']}} or "
        "{'clangd': {'enabled': False}}. Fields are those of ServerSpec.",
    ).tag(config=True)
    request_timeout_seconds = Float(
        30.0, help="Seconds a language server request may take."
    ).tag(config=True)
    initialize_timeout_seconds = Float(
        30.0, help="Seconds a language server may take to answer initialize."
    ).tag(config=True)
    shutdown_timeout_seconds = Float(
        3.0, help="Seconds a server gets to exit after shutdown/exit before it is killed."
    ).tag(config=True)
    diagnostics_timeout_seconds = Float(
        10.0, help="Seconds to wait for a server to publish diagnostics after a sync; past it "
        "the result says 'pending'.",
    ).tag(config=True)
    max_restarts = Int(
        3, help="Crashes after which a server stays stopped until `lsp reload`."
    ).tag(config=True)
    max_open_documents = Int(
        200, help="Documents kept open per server; the least recently used is closed beyond it."
    ).tag(config=True)
    max_references = Int(50, help="Most references `lsp references` returns.").tag(config=True)
    max_workspace_symbols = Int(
        100, help="Most workspace symbols a query (`lsp symbols` with `query`) returns."
    ).tag(config=True)
    max_file_symbols = Int(
        200, help="Most document symbols `lsp symbols` returns for a file."
    ).tag(config=True)
    diagnostics_min_severity = Enum(
        ["error", "warning", "info", "hint"], default_value="info",
        help="Least severe diagnostic shown; 'hint' also shows editor hints like faded code.",
    ).tag(config=True)
    max_diagnostics = Int(100, help="Most diagnostics shown in one result.").tag(config=True)
    write_diagnostics = Enum(
        ["light", "all"], default_value="light",
        help="Which servers give the new diagnostics after a write (write, edit, apply_patch, "
        "notebook changes, resolve accept): 'light', the light server of a language where it "
        "would otherwise give way to a heavier one (ty, not basedpyright, for Python: a "
        "write starts no 200 MiB server, and ty answers in milliseconds); 'all', the servers "
        "`lsp` uses.",
    ).tag(config=True)
    max_command_scan_files = Int(
        10000, help="Around an exec-tier call (bash, eval), the files under the running servers' "
        "roots are listed before and after (a few ms per thousand), so that servers hear of "
        "source files the command created or deleted. Roots holding more files are not listed.",
    ).tag(config=True)
    max_project_sources = Int(
        100, help="Most source files a server that knows only its open files (clangd) opens "
        "for a rename or a project check; a project with more is refused with what to add.",
    ).tag(config=True)
    binary_probe_timeout_seconds = Float(
        10.0, help="Seconds a server binary may take to print its version (run once per "
        "binary, with the spec's version_args) before it counts as not runnable.",
    ).tag(config=True)
    project_check_timeout_seconds = Float(
        300.0, help="Seconds the whole-project check (`lsp diagnostics` with '*') may run."
    ).tag(config=True)

    call_wrappers = List(
        Unicode(), default_value=["jupyter_agent_tools.tools.lsp.on_write:diagnostics_on_write",
                                  "jupyter_agent_tools.tools.lsp.on_write:files_of_commands"],
        help="Call wrappers this resource adds around every call, as 'module:function': by "
        "default the new diagnostics after a write, and telling the servers of files a command "
        "created or deleted. Named, not imported: they speak the lsp tools' words.",
    ).tag(config=True)

    # The names before the `..._seconds` / `max_...` pattern, read for one more release.
    request_timeout = renamed_to("request_timeout_seconds", Float)
    initialize_timeout = renamed_to("initialize_timeout_seconds", Float)
    shutdown_timeout = renamed_to("shutdown_timeout_seconds", Float)
    diagnostics_timeout = renamed_to("diagnostics_timeout_seconds", Float)
    binary_probe_timeout = renamed_to("binary_probe_timeout_seconds", Float)
    project_check_timeout = renamed_to("project_check_timeout_seconds", Float)
    references_max = renamed_to("max_references", Int)
    symbols_query_max = renamed_to("max_workspace_symbols", Int)
    symbols_file_max = renamed_to("max_file_symbols", Int)
    diagnostics_max = renamed_to("max_diagnostics", Int)
    command_scan_max_files = renamed_to("max_command_scan_files", Int)
    project_sources_max = renamed_to("max_project_sources", Int)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.specs, self.spec_errors = load_specs(self.language_servers, self.log)
        self._servers: dict[tuple[Path, str], LanguageServer] = {}
        self._roots: dict[tuple[tuple[str, ...], Path, Path], tuple[Path, str]] = {}
        self._binaries = BinaryFinder(self.binary_probe_timeout_seconds)
        self._wrappers: list[Wrapper] | None = None

    @property
    def limits(self) -> ServerLimits:
        return ServerLimits(request=self.request_timeout_seconds,
                            initialize=self.initialize_timeout_seconds,
                            shutdown=self.shutdown_timeout_seconds,
                            max_restarts=self.max_restarts,
                            max_open_documents=self.max_open_documents)

    @property
    def session_limits(self) -> SessionLimits:
        return SessionLimits(
            request_timeout_seconds=self.request_timeout_seconds,
            diagnostics_timeout_seconds=self.diagnostics_timeout_seconds,
            project_check_timeout_seconds=self.project_check_timeout_seconds,
            diagnostics_min_severity=self.diagnostics_min_severity,
            max_diagnostics=self.max_diagnostics,
            max_references=self.max_references,
            max_workspace_symbols=self.max_workspace_symbols,
            max_file_symbols=self.max_file_symbols,
            max_command_scan_files=self.max_command_scan_files,
            max_project_sources=self.max_project_sources,
            light_write_diagnostics=self.write_diagnostics == "light",
        )

    async def binary(self, spec: ServerSpec) -> str | None:
        """The spec's binary when it is found and runs; see `binary_check` for why not."""
        return (await self.binary_check(spec)).path

    async def binary_check(self, spec: ServerSpec) -> BinaryCheck:
        """Where the spec's binary is and whether it runs (its `version_args` probe), checked
        at call time so an install or removal shows; see `BinaryFinder` for the caching."""
        return await self._binaries.check(spec.binary_names, spec.version_args, spec.install)

    def find_root(self, spec: ServerSpec, path: Path, stop: Path,
                  stat_of: StatOf = stat_on_disk) -> tuple[Path, str] | None:
        """`spec.find_root`, remembering hits: a remembered marker is re-checked with one stat."""
        key = (spec.root_markers, path.parent, stop)
        known = self._roots.get(key)
        if known is not None and stat_of(known[0] / known[1]) is not None:
            return known
        found = spec.find_root(path, stop, stat_of)
        if found is not None:
            self._roots[key] = found
        return found

    def server(self, spec: ServerSpec, root: Path, binary: str) -> LanguageServer:
        """The (not necessarily started) server for (root, spec), created on first request."""
        key = (root, spec.name)
        server = self._servers.get(key)
        if server is None:
            server = self._servers[key] = LanguageServer(spec, root, binary, self.limits)
        return server

    def existing(self, key: tuple[Path, str]) -> LanguageServer | None:
        """The server for (root, spec name) if one was created."""
        return self._servers.get(key)

    async def leave(self, key: tuple[Path, str], run_id: str) -> None:
        """`run_id` no longer uses the server at `key`; the last one out stops it."""
        server = self._servers.get(key)
        if server is None:
            return
        server.users.discard(run_id)
        if not server.users:
            del self._servers[key]
            await server.stop()

    # -- ResourceProvider -------------------------------------------------------------------

    @override
    def attach(self, run: Run, options: RunOptions) -> LspSession:
        return LspSession(self, self.session_limits, run)

    @override
    async def release(self, run: Run, handle: LspSession) -> None:
        await handle.release()

    async def release_idle(self) -> None:
        """Stop every running server: every run is idle. Runs keep their places at them; a
        server starts again at its next request (and re-opens its documents)."""
        running = [server for server in self._servers.values() if server.connection is not None]
        await asyncio.gather(*(server.stop() for server in running), return_exceptions=True)

    async def shutdown(self) -> None:
        servers, self._servers = list(self._servers.values()), {}
        await asyncio.gather(*(server.stop() for server in servers), return_exceptions=True)

    async def status(self) -> dict[str, Any]:
        """Languages, whether each binary resolves, running servers. No argv, no environment."""
        languages = {}
        specs = list(self.specs.values())
        checks = await asyncio.gather(*(self.binary_check(spec) for spec in specs))  # probes
        for spec, found in zip(specs, checks, strict=True):
            languages[spec.name] = {
                "languages": spec.languages,
                "enabled": spec.enabled,
                "available": bool(found.path) and spec.enabled,
                "why_not": found.problem,
                "root_markers": list(spec.root_markers),
            }
        running = [
            {k: v for k, v in server.status().items() if k != "binary"}
            for server in self._servers.values()
        ]
        return {"servers": languages, "running": running, "spec_errors": self.spec_errors}

    @override
    def wrappers(self) -> list[Wrapper]:
        """`call_wrappers`, loaded on first use; a name that does not load is logged and
        left out (the calls still run, without it)."""
        if self._wrappers is None:
            self._wrappers = []
            for spec in self.call_wrappers:
                module_name, _, attr = spec.partition(":")
                try:
                    self._wrappers.append(getattr(importlib.import_module(module_name), attr))
                except (ImportError, AttributeError) as exc:
                    self.log.error("LanguageServerSupervisor.call_wrappers: %s does not load "
                                   "(%s); left out", spec, exc)
        return self._wrappers
