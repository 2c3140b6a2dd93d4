"""A small publish/subscribe bus: a run's event stream, and the runtime's space streams."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

Event = dict[str, Any]


class EventBus:
    """Fans events out to every subscriber's bounded queue.

    A subscriber that does not keep up loses its oldest events rather than slowing the
    publisher down: a slow browser tab must never stall a tool call.
    """

    def __init__(self, max_queue: int = 1000) -> None:
        # Each subscriber's queue, and the event types it takes (None: all of them).
        self._subscribers: dict[asyncio.Queue[Event], frozenset[str] | None] = {}
        self._max_queue = max_queue

    def publish(self, type_: str, **payload: Any) -> None:
        # Every call publishes twice: no event is built, and no task woken, for no one.
        event: Event | None = None
        for queue, wanted in list(self._subscribers.items()):
            if wanted is not None and type_ not in wanted:
                continue
            if event is None:
                event = {"type": type_, "time": time.time(), **payload}
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(event)

    @asynccontextmanager
    async def subscribe(self, only: frozenset[str] | None = None
                        ) -> AsyncIterator[asyncio.Queue[Event]]:
        """A queue of the events published from now on (of the types `only` names, if given)."""
        queue: asyncio.Queue[Event] = asyncio.Queue(self._max_queue)
        self._subscribers[queue] = only
        try:
            yield queue
        finally:
            self._subscribers.pop(queue, None)
