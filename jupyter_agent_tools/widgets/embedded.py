"""The panel over an in-process Runtime (no server): a human of the space via `connect_human`.

Everything runs on the current event loop, the kernel's in a notebook. So the trap is
sharper than with a server: run the agent as a task (`asyncio.ensure_future(agent())`) and
let the cell return; a cell that awaits the agent keeps the kernel from reading clicks.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, cast

from ..runtime import Resource
from .panel import AgentPanel

if TYPE_CHECKING:
    from ..questions import CardJSON, HumanFrontEnd
    from ..runtime import Run, Runtime
    from ..runtime.events import EventBus


class EmbeddedLink:
    """Connects an `AgentPanel` to a Runtime in this process; implements `PanelActions`."""

    def __init__(self, runtime: Runtime, space: str, run: Run | None = None) -> None:
        self.runtime = runtime
        self.space = space
        self.run = run
        self.panel = AgentPanel(self, space, run.id if run else None)
        self._human: HumanFrontEnd | None = None
        self._tasks: list[asyncio.Task] = []

    async def start(self) -> EmbeddedLink:
        """Join the space as a human and start feeding the panel."""
        self._tasks.append(asyncio.ensure_future(self._follow(self.runtime.space_bus(self.space))))
        if self.run is not None:
            self._tasks.append(asyncio.ensure_future(self._follow(self.run.events)))
            self._load_edits()
        await asyncio.sleep(0)  # let the followers subscribe before anything is announced
        # The runtime's human channel is the question port: its humans are HumanFrontEnds.
        self._human = cast("HumanFrontEnd", await self.runtime.connect_human(self.space))
        for card in self._human.pending():
            self.panel.show_card(card)
        return self

    async def close(self) -> None:
        if self._human is not None:
            await self._human.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- PanelActions -------------------------------------------------------------------------

    def answer(self, card: CardJSON, answer: Any, text: str | None) -> asyncio.Task:
        return asyncio.ensure_future(self._connected().answer(card["id"], answer, text))

    def skip(self, card: CardJSON) -> asyncio.Task:
        return asyncio.ensure_future(self._connected().skip(card["id"]))

    def resolve(self, edit_id: str, action: str) -> asyncio.Task:
        if self.run is None:
            raise RuntimeError("This panel has no run; open it with a run to resolve edits.")
        return asyncio.ensure_future(self.run.call("resolve", {"edit_id": edit_id, "action": action}))

    def _connected(self) -> HumanFrontEnd:
        if self._human is None:
            raise RuntimeError("The panel is not connected; await link.start() first.")
        return self._human

    # -- feeding the panel ------------------------------------------------------------------------

    async def _follow(self, bus: EventBus) -> None:
        from_run = self.run is not None and bus is self.run.events
        async with bus.subscribe() as queue:
            while True:
                event = await queue.get()
                kind = str(event.get("type", ""))
                if from_run and "edit" in kind:
                    self._load_edits()
                elif not (from_run and kind.startswith("question")):  # cards come via the space
                    self.panel.handle_event(event)

    def _load_edits(self) -> None:
        store = getattr(self.run and self.run.resources.get(Resource.PARSER), "edits", None)
        if store is not None:
            self.panel.set_edits([edit.to_json() for edit in store.list()])
