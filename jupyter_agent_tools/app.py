"""The server extension: wires a Runtime into jupyter_server. Configuration lives on Runtime."""

from __future__ import annotations

import gc

from jupyter_server.extension.application import ExtensionApp
from jupyter_server.serverapp import ServerApp
from traitlets import Bool, Float, Int, List, Unicode

from .activity import AgentActivity
from .http.base import RequestLimits
from .http.routes import HANDLER_MODULES, load_routes
from .kernels.provisioner import launch_kernels_off_the_loop
from .runtime import Runtime


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

    def initialize_settings(self) -> None:
        server = self._server()
        if self.kernel_launch_off_loop:
            launch_kernels_off_the_loop(server)
        self.runtime = Runtime(
            parent=server,
            root_dir=str(server.root_dir),
            kernel_manager=server.kernel_manager,
            server_url=server.connection_url,
            log=self.log,
        )
        self.settings["agent_tools_runtime"] = self.runtime
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
        if self.freeze_startup_objects:
            gc.freeze()
            self.log.debug("agent-tools: %d start-up objects frozen out of the garbage "
                           "collector's scans", gc.get_freeze_count())

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
        self.activity.stop()
        await self.runtime.shutdown()


main = launch_new_instance = AgentToolsApp.launch_instance
