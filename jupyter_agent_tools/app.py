"""The server extension: wires a Runtime into jupyter_server. Configuration lives on Runtime."""

from __future__ import annotations

import importlib

from jupyter_server.extension.application import ExtensionApp
from traitlets import List, Unicode

from .openapi import route_template
from .runtime import Runtime

HANDLER_MODULES = [
    "jupyter_agent_tools.handlers",
    "jupyter_agent_tools.structural.handlers",
    "jupyter_agent_tools.questions.handlers",
    "jupyter_agent_tools.mcp_endpoint.handlers",
]


class AgentToolsApp(ExtensionApp):
    """Hosts one Runtime per server and its HTTP/WebSocket API under agent-tools/api/."""

    name = "jupyter_agent_tools"
    load_other_extensions = True

    handler_modules = List(
        Unicode(), default_value=HANDLER_MODULES,
        help="Modules whose `handlers` list of (path, class) is served under the base URL.",
    ).tag(config=True)

    def initialize_settings(self) -> None:
        server = self.serverapp
        self.runtime = Runtime(
            parent=server,
            root_dir=str(server.root_dir),
            kernel_manager=server.kernel_manager,
            server_url=server.connection_url,
            log=self.log,
        )
        self.settings["agent_tools_runtime"] = self.runtime

    async def _start_jupyter_server_extension(self, serverapp) -> None:
        # With port 0 the server learns its port only when it binds, after initialize_settings;
        # workers reach the server through this URL.
        self.runtime.server_url = serverapp.connection_url

    def initialize_handlers(self) -> None:
        for module_name in self.handler_modules:
            try:
                module = importlib.import_module(module_name)
            except Exception:  # one broken plug-in must not take the server down
                self.log.exception("agent-tools: could not load handlers from %s", module_name)
                continue
            self.handlers.extend(module.handlers)
        routes = {route_template(handler[0]) for handler in self.handlers}
        self.serverapp.web_app.settings["agent_tools_routes"] = routes

    async def stop_extension(self) -> None:
        await self.runtime.shutdown()


main = launch_new_instance = AgentToolsApp.launch_instance
