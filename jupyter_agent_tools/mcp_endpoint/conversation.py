"""What the MCP sessions of one conversation share: a run, made at the first tool call.

A session costs nothing until it calls a tool: its conversation knows the run it will make
(the options checked, its id handed out, the tools it will see: `Runtime.plan_run`), and
makes it at the first `tools/call` of any of its sessions. Every session that names the same
`conversation_id` (the same user) shares that run, its kernels, debug session and transcript.
A session without a `conversation_id` is a conversation of its own, under a generated id.

When its last session ends, the run of a named conversation stays open for
`conversation_idle_seconds` (a client that opens a session per call keeps its state between
calls); that of a session's own conversation closes with it, as does a conversation's run
closed by anyone else (the HTTP API): the next call makes a new one. A conversation over an
existing run (`runs/{id}/mcp`) never closes it.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from typing import Any

from ..runtime import ErrorCode, Run, Runtime, ToolError
from ..runtime.run import ClientInfo
from ..runtime.runtime import RunPlan
from ..runtime.schemas import tool_schemas

#: A named conversation's key: the user and the conversation_id they gave.
ConversationKey = tuple[str, str]


class McpConversation:
    """The run shared by the MCP sessions of one conversation (see the module's docstring).

    `on_end` is called once no session holds it any more and its run is closed or left.
    """

    def __init__(self, runtime: Runtime, *, plan: RunPlan | None = None,
                 create_options: dict[str, Any] | None = None, run: Run | None = None,
                 key: ConversationKey | None = None, linger_seconds: float = 0.0,
                 log: logging.Logger, on_end: Callable[[McpConversation], None]) -> None:
        if run is None and (plan is None or create_options is None):
            raise ValueError("a conversation needs a run, or the plan to make one")
        self.runtime = runtime
        self.plan = plan
        self.create_options = create_options or {}
        self.key = key
        self.linger_seconds = linger_seconds if key is not None else 0.0
        self.log = log
        self._on_end = on_end
        #: A conversation that made its run closes it; one over an existing run leaves it.
        self.owns_run = run is None
        self.run = run
        #: Handed out before the run exists (the session's instructions name it).
        self.run_id = run.id if run is not None else uuid.uuid4().hex
        self.conversation_id = (run.conversation_id if run is not None
                                else self.create_options.get("conversation_id"))
        self.sessions: set[str] = set()
        self._making = asyncio.Lock()
        self._linger: asyncio.TimerHandle | None = None
        self._closing: set[asyncio.Task[None]] = set()

    # -- what it is -------------------------------------------------------------------------

    @property
    def live_run(self) -> Run | None:
        """Its run, when it has one open."""
        return self.run if self.run is not None and not self.run.closed else None

    def cwd(self) -> str:
        """The working directory, as a run describes it."""
        cwd = self.plan.cwd if self.plan is not None else self.run.cwd  # type: ignore[union-attr]
        return cwd.relative_to(self.runtime.root_path).as_posix() or "."

    def surface(self) -> str:
        if self.plan is not None:
            return self.plan.options.surface.value
        assert self.run is not None
        return self.run.surface.value

    def schemas(self) -> list[dict[str, Any]]:
        """The tools its run sees (or will see: nothing is attached to list them)."""
        if self.run is not None and (not self.run.closed or self.plan is None):
            return self.run.schemas(format="json")
        assert self.plan is not None
        return tool_schemas(self.runtime.planned_tools(self.plan), "json")

    def check_same_options(self, plan: RunPlan, create_options: dict[str, Any]) -> None:
        """Refuse a session that names this conversation with other options than its own."""
        assert self.plan is not None and self.key is not None
        mine, theirs = self.plan, plan
        differ = [name for name, a, b in [
            ("cwd", mine.cwd, theirs.cwd),
            ("surface", mine.options.surface, theirs.options.surface),
            ("approvals", mine.options.approvals, theirs.options.approvals),
            ("space", mine.options.space, theirs.options.space),
            ("vibe", mine.options.vibe, theirs.options.vibe),
            ("resources", mine.wanted, theirs.wanted),
            ("kernel_id", self.create_options.get("kernel_id"), create_options.get("kernel_id")),
            ("notebook", self.create_options.get("notebook"), create_options.get("notebook")),
            ("sandbox", mine.sandbox and mine.sandbox.describe(),
             theirs.sandbox and theirs.sandbox.describe()),
        ] if a != b]
        if differ:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENTS,
                f"conversation_id {self.key[1][:200]!r} is open with other options ({differ} "
                f"differ: it has cwd={self.cwd()!r}, surface={self.surface()}, approvals="
                f"{mine.options.approvals.value}). Open the session with the same options, or "
                "name another conversation_id.")

    # -- its run ----------------------------------------------------------------------------

    async def ensure_run(self, client: ClientInfo | None = None) -> Run:
        """Its run, made now if it has none (or its run was closed); ToolError if it cannot.
        `client`: the MCP client of the session that makes it (its name shows in the panel)."""
        run = self.live_run
        if run is not None:
            return run
        if not self.owns_run:
            raise ToolError(ErrorCode.NOT_FOUND, f"Run {self.run_id} is closed. Open a session "
                            "on agent-tools/mcp for a new run.")
        async with self._making:
            if self.live_run is None:
                if self.run is not None:  # closed by someone else: a new run, a new id
                    self.run_id = uuid.uuid4().hex
                self.run = await self.runtime.create_run(**self.create_options, origin="mcp",
                                                         run_id=self.run_id, client=client)
        assert self.run is not None
        return self.run

    # -- its sessions -----------------------------------------------------------------------

    def join(self, session_id: str) -> None:
        self.sessions.add(session_id)
        self.stop_lingering()

    async def leave(self, session_id: str, ended_by: str) -> None:
        """A session ended; the last one closes the run (a named conversation's, later)."""
        self.sessions.discard(session_id)
        if self.sessions:
            return
        if not self.owns_run or self.live_run is None:
            self._end()
            return
        if self.linger_seconds <= 0:
            await self._close(ended_by)
            return
        if self._linger is None:
            self._linger = asyncio.get_running_loop().call_later(self.linger_seconds,
                                                                 self._lingered)

    def stop_lingering(self) -> None:
        """Its run no longer closes when the linger runs out (a session joined; the server
        stops, and closes it)."""
        if self._linger is not None:
            self._linger.cancel()
            self._linger = None

    def _lingered(self) -> None:
        self._linger = None
        if self.sessions:
            return
        self.log.info("agent-tools mcp: conversation %r without a session for %g s: closing "
                      "its run %s", self.conversation_id, self.linger_seconds, self.run_id)
        task = asyncio.ensure_future(self._close("idle"))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _close(self, ended_by: str) -> None:
        run, self.run = self.run, None
        self.run_id = uuid.uuid4().hex  # should a session still come: another run
        self._end()
        if run is not None:
            await self.runtime.close_run(run.id, ended_by=ended_by)

    def _end(self) -> None:
        self.stop_lingering()
        self._on_end(self)
