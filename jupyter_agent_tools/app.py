"""The server extension: wires a Runtime into jupyter_server. Configuration lives on Runtime."""

from __future__ import annotations

import asyncio
import gc
import os

from jupyter_core.paths import jupyter_data_dir
from jupyter_server.extension.application import ExtensionApp
from jupyter_server.serverapp import ServerApp
from traitlets import Bool, Float, Int, List, Unicode

from .activity import AgentActivity
from .agent_tokens import AgentTokens
from .files.denied import deny_folders
from .files.order import order_contents_saves
from .http.base import RequestLimits
from .http.routes import HANDLER_MODULES, load_routes
from .kernels.provisioner import launch_kernels_off_the_loop
from .processes import forget_inherited_owner, sweep_orphans
from .runtime import Runtime
from .runtime.sandbox import support as sandbox_support


class AgentToolsApp(ExtensionApp):
    """Hosts one Runtime per server and its HTTP/WebSocket API under agent-tools/api/."""

    name = "jupyter_agent_tools"
    load_other_extensions = True

    handler_modules = List(
        Unicode(), default_value=HANDLER_MODULES,
        help="Modules whose `handlers` list of (path, class) is served under the base URL.",
    ).tag(config=True)

    max_request_bytes = Int(
        4 * 1024 * 1024,
        help="Largest request body the agent-tools routes parse; larger ones get 413.",
    ).tag(config=True)

    max_request_values = Int(
        50_000,
        help="Most JSON values (array items, object members) a request body of the agent-tools "
             "routes may hold; more get 413. Parsing takes about half a microsecond per value "
             "and holds every thread of the server, its event loop too, whichever thread "
             "parses: this bounds that pause (about 25 ms at the default).",
    ).tag(config=True)

    kernel_launch_off_loop = Bool(
        True,
        help="Make the server's default kernel provisioner jupyter_client's local one with its "
             "Popen in a thread, so that starting a kernel (for eval or a notebook) does not "
             "hold the server's event loop. Left alone when a default provisioner is "
             "configured (c.KernelProvisionerFactory.default_provisioner_name or "
             "JUPYTER_DEFAULT_PROVISIONER_NAME); a kernelspec naming its own keeps it.",
    ).tag(config=True)

    freeze_startup_objects = Bool(
        True,
        help="Once the server has started, move the objects that exist then (modules, classes, "
             "the server's and its extensions' state) out of the garbage collector's sight "
             "(gc.freeze), so that a full collection does not scan them again. A full "
             "collection holds every thread, the event loop too: under load it stalled the "
             "server for about 200 ms (benchmarks/bench_load.py), under 50 ms with them "
             "frozen. Frozen objects are still freed when nothing refers to them; only a "
             "reference cycle among them is never collected.",
    ).tag(config=True)

    activity_interval_seconds = Float(
        60.0,
        help="How often the server's last activity (what jupyterhub-singleuser reports to the "
             "hub, and jupyterhub-idle-culler culls by) is brought up to date from the agents' "
             "runs: now while any run has work in flight (a tool call such as a long eval or "
             "notebook cell, a worker), else when its last call ended. Keep it well under the "
             "culler's --timeout. 0: agent work is not reported as activity.",
    ).tag(config=True)

    waiting_cards_count_as_activity = Bool(
        True,
        help="Whether a run waiting for a human (an ask_user or permission card left open) "
             "counts as activity. False lets the idle culler stop a server whose agent only "
             "waits for an answer (the card's own limit is c.QuestionPort.timeout_seconds).",
    ).tag(config=True)

    sweep_orphans_at_start = Bool(
        True,
        help="At start, kill the processes a server that died left behind: `bash` commands, "
             "background jobs and worker commands (and all they started) whose keeper died "
             "with it. Each carries its server's pid and start time in its environment "
             "(JUPYTER_AGENT_TOOLS_OWNER), so a process of a server still running, or of a "
             "reused pid, is never touched. Done in a thread; it reads every process's "
             "environment once.",
    ).tag(config=True)

    def initialize_settings(self) -> None:
        # A server started from another's `bash` inherits that one's mark: its own children
        # (kernels, language servers) must not carry it.
        forget_inherited_owner()
        server = self._server()
        # Jupyter's own credentials, wherever this server keeps them: no file tool touches
        # them (files/denied.py adds jupyter_core's runtime directory and config files).
        deny_folders(server.runtime_dir, getattr(server.kernel_manager, "connection_dir", None),
                     config_dirs=(server.config_dir,))
        if self.kernel_launch_off_loop:
            launch_kernels_off_the_loop(server)
        self.runtime = Runtime(
            parent=server,
            root_dir=str(server.root_dir),
            kernel_manager=server.kernel_manager,
            server_url=server.connection_url,
            # Runs are kept across restarts where jupyter_server keeps its own state.
            run_store_default=os.path.join(jupyter_data_dir(), "agent_tools", "runs.sqlite3"),
            log=self.log,
        )
        self.settings["agent_tools_runtime"] = self.runtime
        # Agent tokens (c.AgentTokens.path): Jupyter's data directory, never the root.
        self.agent_tokens = AgentTokens(self.runtime.root_path, parent=server, log=self.log)
        self.settings["agent_tools_tokens"] = self.agent_tokens
        # The user's saves take their file's turn in the order the runs' changes share.
        order_contents_saves(server.contents_manager, self.runtime.root_path,
                             self.runtime.file_locks)
        self.settings["agent_tools_request_limits"] = RequestLimits(
            max_request_bytes=self.max_request_bytes, max_request_values=self.max_request_values)
        # jupyter_server's last_activity() reads the web app's settings (self.settings is a
        # copy merged into them before the server starts, not the same dict).
        self.activity = AgentActivity(self.runtime, server.web_app.settings,
                                      interval_seconds=self.activity_interval_seconds,
                                      waiting_cards_count=self.waiting_cards_count_as_activity)

    async def _start_jupyter_server_extension(self, serverapp: ServerApp) -> None:
        # With port 0 the server learns its port only when it binds, after initialize_settings;
        # workers reach the server through this URL.
        self.runtime.server_url = serverapp.connection_url
        self.activity.start()
        if self.sweep_orphans_at_start:
            self._sweep = asyncio.ensure_future(self._sweep_orphans())
        # What this machine can confine is probed once, in a child process: now, in a thread,
        # so that the first run asking for a sandbox does not wait for it on the event loop.
        self._sandbox_probe = asyncio.ensure_future(asyncio.to_thread(sandbox_support))
        if self.freeze_startup_objects:
            gc.freeze()
            self.log.debug("agent-tools: %d start-up objects frozen out of the garbage "
                           "collector's scans", gc.get_freeze_count())

    async def _sweep_orphans(self) -> None:
        try:
            killed = await asyncio.to_thread(sweep_orphans)
        except Exception:  # a failed sweep must not stop the server
            self.log.exception("agent-tools: the start-up sweep of orphaned processes failed")
            return
        if killed:
            self.log.warning("agent-tools: killed %d processes a server that died left "
                             "running: %s", len(killed), killed)

    def initialize_handlers(self) -> None:
        # The last route answers a JSON 404 for any other path under agent-tools/.
        self.handlers.extend(load_routes(self.handler_modules, self.log))
        # The OpenAPI document is generated from this same table.
        self._server().web_app.settings["agent_tools_handlers"] = list(self.handlers)

    def _server(self) -> ServerApp:
        # jupyter_server sets it before it calls initialize_settings and initialize_handlers.
        if self.serverapp is None:
            raise RuntimeError("AgentToolsApp needs a ServerApp; load it as a server extension.")
        return self.serverapp

    async def stop_extension(self) -> None:
        # jupyter_server runs it on SIGTERM too: every run closes, so every job and every call
        # in flight ends with what it started (a keeper also ends it if the server dies).
        self.activity.stop()
        runs = len(self.runtime.runs)
        mcp = self.serverapp.web_app.settings.get("agent_tools_mcp") if self.serverapp else None
        if mcp is not None:  # its sessions, those without a run yet included
            await mcp.close()
        await self.runtime.shutdown()
        self.agent_tokens.close()
        self.log.info("agent-tools: stopped; %d run(s) closed, their jobs and processes ended",
                      runs)


main = launch_new_instance = AgentToolsApp.launch_instance
