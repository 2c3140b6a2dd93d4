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
        self._subscribers: set[asyncio.Queue[Event]] = set()
        self._max_queue = max_queue

    def publish(self, type_: str, **payload: Any) -> None:
        if not self._subscribers:  # every call publishes twice: no event when no one listens
            return
        event = {"type": type_, "time": time.time(), **payload}
        for queue in list(self._subscribers):
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(event)

    @asynccontextmanager
    async def subscribe(self) -> AsyncIterator[asyncio.Queue[Event]]:
        queue: asyncio.Queue[Event] = asyncio.Queue(self._max_queue)
        self._subscribers.add(queue)
        try:
            yield queue
        finally:
            self._subscribers.discard(queue)
