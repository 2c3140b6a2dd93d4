"""The panel's connection to a Jupyter server, on a thread of its own.

Why a thread: a notebook kernel busy in a cell runs nothing else on its event loop, so a
link living there would stop showing cards exactly when the agent waits for an answer. The
link's thread keeps both WebSockets (the space's cards, the run's calls and edits) and sends
the answers; widget callbacks only hand it work and return at once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any
from urllib.parse import quote

from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

from ..client import AgentToolsClient, AgentToolsHTTPError, RemoteRun
from ..questions.cards import CardJSON
from .panel import AgentPanel

RECONNECT_SECONDS = 2.0
log = logging.getLogger(__name__)


class ServerLink:
    """Connects an `AgentPanel` to the server as a human of `space`; implements `PanelActions`."""

    def __init__(self, client: AgentToolsClient, space: str, run: RemoteRun | None = None) -> None:
        self.client = client
        self.space = space
        self.run = run
        self.panel = AgentPanel(self, space, run.id if run else None)
        #: Set once the server counts this link as a human of the space.
        self.connected = threading.Event()
        #: Why the last connection attempt failed, if it did.
        self.last_error: str | None = None
        self._loop = asyncio.new_event_loop()
        self._stopping: asyncio.Event | None = None
        # Refreshes in flight: the loop keeps only weak references to its tasks.
        self._refreshes: set[asyncio.Future[None]] = set()
        self._thread = threading.Thread(target=self._main, name=f"agent-panel-{space}", daemon=True)

    def start(self) -> ServerLink:
        self._thread.start()
        return self

    def close(self, timeout: float = 10.0) -> None:
        """Disconnect (the space then loses this human) and stop the thread."""
        if self._thread.is_alive() and self._stopping is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)
        self._thread.join(timeout)
        self.connected.clear()

    # -- PanelActions -------------------------------------------------------------------------

    def answer(self, card: CardJSON, answer: Any, text: str | None) -> Future:
        body: dict[str, Any] = {"answer": answer}
        if text:
            body["text"] = text
        return self._post_card(card, body)

    def skip(self, card: CardJSON) -> Future:
        return self._post_card(card, {"skip": True})

    def resolve(self, edit_id: str, action: str) -> Future:
        if self.run is None:
            raise RuntimeError("This panel has no run; open it with a run to resolve edits.")
        run = self.run
        return self._submit(lambda: run.call("resolve", {"edit_id": edit_id, "action": action}))

    def _post_card(self, card: CardJSON, body: dict[str, Any]) -> Future:
        path = f"runs/{card['run_id']}/questions/{card['id']}"
        return self._submit(lambda: self.client.request("POST", path, body))

    def _submit(self, blocking: Callable[[], Any]) -> Future:
        async def in_thread() -> Any:
            return await asyncio.get_running_loop().run_in_executor(None, blocking)

        return asyncio.run_coroutine_threadsafe(in_thread(), self._loop)

    # -- the thread -----------------------------------------------------------------------------

    def _main(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._follow_all())
        finally:
            self._loop.run_until_complete(self._loop.shutdown_default_executor())
            self._loop.close()

    async def _follow_all(self) -> None:
        self._stopping = asyncio.Event()
        followers = [self._follow(f"spaces/{quote(self.space, safe='')}/events", self._on_space)]
        if self.run is not None:
            followers.append(self._follow(f"runs/{self.run.id}/events", self._on_run))
            await self._refresh(self._load_run_state)
        tasks = [asyncio.ensure_future(follower) for follower in followers]
        await self._stopping.wait()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _follow(self, path: str, handle: Callable[[dict[str, Any]], None]) -> None:
        url = self.client.url.replace("http", "ws", 1) + "agent-tools/api/" + path
        headers = {"Authorization": f"token {self.client.token}"} if self.client.token else {}
        while True:
            try:
                ws = await websocket_connect(HTTPRequest(url, headers=headers, connect_timeout=30))
            except Exception as exc:  # noqa: BLE001 - the server restarts, the network blips: retry
                self.last_error = f"{type(exc).__name__}: {exc}"
                self.panel.set_status(f"reconnecting ({self.last_error})…")
                await asyncio.sleep(RECONNECT_SECONDS)
                continue
            try:
                while (message := await ws.read_message()) is not None:
                    if isinstance(message, str):
                        self._dispatch(handle, message)
            finally:
                ws.close()
            self.connected.clear()
            self.panel.set_status("disconnected; reconnecting…")
            await asyncio.sleep(RECONNECT_SECONDS)

    def _dispatch(self, handle: Callable[[dict[str, Any]], None], message: str) -> None:
        try:
            handle(json.loads(message))
        except Exception:  # one bad event must not end the stream: log it and go on
            log.exception("agent panel: could not show an event")
            self.panel.set_status("an event could not be shown (see the kernel log)")

    def _on_space(self, event: dict[str, Any]) -> None:
        self.panel.handle_event(event)
        if event.get("type") == "humans":
            self.connected.set()

    def _on_run(self, event: dict[str, Any]) -> None:
        kind = str(event.get("type", ""))
        if "edit" in kind:
            refresh = asyncio.ensure_future(self._refresh(self._load_edits))
            self._refreshes.add(refresh)
            refresh.add_done_callback(self._refreshes.discard)
        elif not kind.startswith("question"):  # cards arrive through the space stream
            self.panel.handle_event(event)

    async def _refresh(self, load: Callable[[], None]) -> None:
        try:
            await asyncio.get_running_loop().run_in_executor(None, load)
        except (AgentToolsHTTPError, OSError) as exc:
            self.panel.set_status(f"could not refresh: {exc}")

    def _load_run_state(self) -> None:
        assert self.run is not None
        finished = [entry for entry in self.run.transcript() if entry.get("ok") is not None]
        for entry in finished[-(self.panel.transcript.lines.maxlen or 1):]:
            self.panel.transcript.add_event({"type": "call_finished", **entry})
        self._load_edits()

    def _load_edits(self) -> None:
        assert self.run is not None
        try:
            self.panel.set_edits(self.run.edits())
        except AgentToolsHTTPError as exc:
            if exc.status != 404:  # no edits route on this server: no edits to show
                raise

