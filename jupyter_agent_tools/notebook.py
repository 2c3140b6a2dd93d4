"""One call for a notebook user: connect to the running server and show the agent panel.

    from jupyter_agent_tools.notebook import open_panel
    session = open_panel(approvals="ask")      # finds the server, creates a run, shows the panel
    future = session.start(my_agent_loop, session.run)   # the kernel stays free for clicks

The trap this module is built around: a kernel busy in a cell does not process widget clicks
(they queue behind the cell). So the panel's network I/O lives on a thread of its own
(`widgets.link.ServerLink`), and the agent loop must not run in the foreground of a cell:
`AgentSession.start` runs it on a background thread, `AgentSession.acall` lets an asyncio task
call tools without blocking the kernel's event loop. See README.md, "Notebooks".
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from .client import AgentToolsClient, RemoteRun
from .runtime import Run, Runtime, ToolResult
from .widgets.embedded import EmbeddedLink
from .widgets.link import ServerLink
from .widgets.panel import AgentPanel

CONNECT_TIMEOUT_SECONDS = 30.0

# The panel this kernel shows per space: opening another one for the space replaces it.
_open_links: dict[str, ServerLink] = {}


class AgentSession:
    """What `open_panel` returns: the client, the run, the panel, and ways to drive the run
    without blocking the kernel."""

    def __init__(self, client: AgentToolsClient, run: RemoteRun, link: ServerLink) -> None:
        self.client = client
        self.run = run
        self.link = link

    @property
    def panel(self) -> AgentPanel:
        return self.link.panel

    @property
    def space(self) -> str:
        return self.link.space

    def start(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
        """Run `fn(*args, **kwargs)` on a background thread; its Future holds the outcome.

        The cell returns at once, so the kernel keeps processing the panel's clicks while
        `fn` waits on `ask_user`. Do not block a later cell on `future.result()` while a
        card may still be open: that would make the kernel busy again.
        """
        future: Future = Future()

        def target() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # noqa: BLE001 - handed to whoever reads the future
                future.set_exception(exc)

        threading.Thread(target=target, name="agent-loop", daemon=True).start()
        return future

    def call(self, tool: str, args: dict[str, Any] | None = None) -> ToolResult:
        """Call a tool and wait (blocking): for background threads, or tools that ask nobody."""
        return self.run.call(tool, args)

    async def acall(self, tool: str, args: dict[str, Any] | None = None) -> ToolResult:
        """Call a tool from an asyncio task without blocking the kernel's event loop."""
        return await asyncio.to_thread(self.run.call, tool, args)

    def close(self, close_run: bool = False) -> None:
        """Disconnect the panel (and delete the run when `close_run`)."""
        self.link.close()
        if _open_links.get(self.space) is self.link:
            del _open_links[self.space]
        if close_run:
            self.run.close()


def open_panel(
    space: str | None = None,
    *,
    run_id: str | None = None,
    url: str | None = None,
    token: str | None = None,
    display: bool = True,
    **run_options: Any,
) -> AgentSession:
    """Connect to the server, create (or attach) a run, and display the agent panel.

    The server is `url`/`token` when given, else JUPYTER_SERVER_URL / JUPYTER_TOKEN, else the
    running server that started this kernel (jupyter_server's runtime files). `space` defaults
    to the attached run's space, else this notebook's path (JPY_SESSION_NAME) relative to the
    server root. `run_options` go to run creation: cwd, surface, approvals, conversation_id.
    Returns once the server counts the panel as a human of the space.
    """
    client = AgentToolsClient.discover(url, token)
    if run_id is not None:
        run = client.attach_run(run_id)
        space = space or run.descriptor.get("space") or notebook_space(client)
    else:
        space = space or notebook_space(client)
        # The run's descriptor says it came from a notebook (front ends show it).
        run = client.create_run(space=space, **{"origin": "notebook", **run_options})
    previous = _open_links.pop(space, None)
    if previous is not None:  # re-running the cell replaces the panel instead of adding a human
        previous.close()
    link = ServerLink(client, space, run).start()
    if display:
        from IPython.display import display as show

        show(link.panel)
    if not link.connected.wait(CONNECT_TIMEOUT_SECONDS):
        link.close()
        raise RuntimeError(f"Could not connect the panel to {client.url} within "
                           f"{CONNECT_TIMEOUT_SECONDS:g} s ({link.last_error or 'no answer'}); "
                           "check the server is running, the token, and that the agent-tools "
                           "extension is enabled (jupyter server extension list).")
    _open_links[space] = link
    return AgentSession(client, run, link)


async def open_embedded_panel(runtime: Runtime, run: Run, space: str | None = None,
                              display: bool = True) -> EmbeddedLink:
    """The panel for a Runtime living in this kernel (no server): await it, then run the
    agent as a task (`asyncio.ensure_future(...)`) so the cell returns and clicks get in."""
    space = space or run.space
    if not space:
        raise ValueError("The run has no space; create it with create_run(space=...).")
    link = await EmbeddedLink(runtime, space, run).start()
    if display:
        from IPython.display import display as show

        show(link.panel)
    return link


def notebook_space(client: AgentToolsClient | None = None) -> str:
    """This notebook's space: its path relative to the server root (what JupyterLab's Agent
    Tools panel joins for each open notebook); its file name if the root is unknown.

    `client` is the server to ask about its root (default: the one `open_panel` would find).
    Pass the result as a run's `space` so its cards show in this notebook's panel and in the
    lab's side panel.
    """
    session = os.environ.get("JPY_SESSION_NAME")
    if not session:
        return "notebook"
    path = Path(session)
    if not path.is_absolute():
        return path.as_posix()
    client = client or AgentToolsClient.discover()
    from jupyter_server.serverapp import list_running_servers

    for info in list_running_servers():
        if info.get("url", "").rstrip("/") + "/" == client.url and info.get("root_dir"):
            try:
                return path.relative_to(Path(info["root_dir"]).resolve()).as_posix()
            except ValueError:
                break
    return path.name
