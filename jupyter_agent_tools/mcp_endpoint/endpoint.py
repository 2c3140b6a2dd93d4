"""The MCP sessions of a server: opening one, finding it again, the conversations whose runs
they share (conversation.py), limits."""

from __future__ import annotations

import asyncio
import uuid

from traitlets import Bool, Float, Int
from traitlets.config import LoggingConfigurable

from ..http.models import RunRequest
from ..runtime import ErrorCode, Run, Runtime, ToolError
from .conversation import ConversationKey, McpConversation
from .session import McpSession, McpSessionSettings


class McpEndpoint(LoggingConfigurable):
    """Keeps the MCP sessions served on `agent-tools/mcp` and `agent-tools/api/runs/{id}/mcp`,
    and the conversations whose runs they share.

    Nothing here knows HTTP: a handler opens a session, then hands it each request (ASGI).
    """

    idle_timeout_seconds = Float(
        1800.0, help="An MCP session that has called a tool ends after this long with no "
        "request in flight (an open GET stream counts as one). A session's own run closes "
        "with it; a conversation's (conversation_id) lasts conversation_idle_seconds more.",
    ).tag(config=True)
    unused_session_seconds = Float(
        60.0, help="An MCP session that has not called a tool (a health check, a client "
        "listing tools) ends after this long with no request in flight. It holds no run: "
        "its run is made at its first tool call.",
    ).tag(config=True)
    conversation_idle_seconds = Float(
        1800.0, help="The run of a conversation (the sessions naming one conversation_id) "
        "stays open this long after its last session ended, so that a client opening a "
        "session per call keeps its kernels and debug session; then it closes.",
    ).tag(config=True)
    use_elicitation = Bool(
        True, help="Put the cards of an MCP session's run (ask_user, permission prompts) to the "
        "client's own user through MCP elicitation when the client declared that capability; "
        "otherwise they go to the run's space (the JupyterLab panel).",
    ).tag(config=True)
    max_sessions = Int(
        100, help="Most MCP sessions open at once. Opening one more ends the least recently "
        "used session with no request in flight (one that never called a tool first); when "
        "every session is busy it is refused (409, unavailable).",
    ).tag(config=True)
    progress_interval_seconds = Float(
        5.0, help="How often a tools/call that passed a progress token hears that it still runs.",
    ).tag(config=True)
    end_timeout_seconds = Float(
        30.0, help="How long ending a session (DELETE) waits for its run to be released.",
    ).tag(config=True)

    def __init__(self, runtime: Runtime, base_url: str = "/", **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.runtime = runtime
        #: The server's base URL (`/user/<name>/` under JupyterHub), for the links sessions give.
        self.base_url = base_url
        self.sessions: dict[str, McpSession] = {}
        #: Named conversations (a user's conversation_id) with a session or their run open.
        self.conversations: dict[ConversationKey, McpConversation] = {}
        self._evicting: set[asyncio.Task[None]] = set()

    async def open_new_run(self, options: RunRequest, owner: str = "") -> McpSession:
        """A session of the conversation `options` name (of user `owner`), or of its own.

        Its run is made at its first tool call, or is the conversation's open run; the options
        are checked now (ToolError, before any session exists).
        """
        create = options.create_run_options()
        given = create.get("conversation_id")
        if not given:  # its own conversation, under a name of its own: `debug` needs one
            create["conversation_id"] = f"mcp-{uuid.uuid4().hex}"
        plan = self.runtime.plan_run(**create, origin="mcp")
        conversation = self.conversations.get((owner, given)) if given else None
        if conversation is not None:
            conversation.check_same_options(plan, create)
        self._make_room()
        if conversation is None:
            key = (owner, given) if given else None
            conversation = McpConversation(
                self.runtime, plan=plan, create_options=create, key=key,
                linger_seconds=self.conversation_idle_seconds, log=self.log,
                on_end=self._conversation_ended)
            if key is not None:
                self.conversations[key] = conversation
        return await self._open(conversation)

    async def open_existing_run(self, run: Run) -> McpSession:
        """A session over a run that exists already (left open when the session ends)."""
        self._make_room()
        conversation = McpConversation(self.runtime, run=run, log=self.log,
                                       on_end=self._conversation_ended)
        return await self._open(conversation)

    async def close(self) -> None:
        """The server stops: end every session (a run not yet closed closes with the runtime)."""
        sessions = list(self.sessions.values())
        await asyncio.gather(*(session.terminate() for session in sessions),
                             return_exceptions=True)
        await asyncio.gather(*(session.wait_ended(self.end_timeout_seconds)
                               for session in sessions), return_exceptions=True)
        for conversation in list(self.conversations.values()):
            conversation.stop_lingering()

    def get(self, session_id: str, run_id: str | None = None) -> McpSession | None:
        """The open session `session_id` (of run `run_id` when given), else None."""
        session = self.sessions.get(session_id)
        if session is None or (run_id is not None and session.conversation.run_id != run_id):
            return None
        return session

    def forget(self, session: McpSession) -> None:
        self.sessions.pop(session.id, None)

    def _conversation_ended(self, conversation: McpConversation) -> None:
        if conversation.key is not None and self.conversations.get(
                conversation.key) is conversation:
            del self.conversations[conversation.key]

    def _make_room(self) -> None:
        """At the cap, end the least recently used session with nothing in flight (one that
        never called a tool before one that did); refuse only when every session is busy."""
        if len(self.sessions) < self.max_sessions:
            return
        idle = [session for session in self.sessions.values() if not session.busy]
        if not idle:
            raise ToolError(ErrorCode.UNAVAILABLE,
                            f"{self.max_sessions} MCP sessions are open and each has a request "
                            "in flight; end one (HTTP DELETE) or try again when one is done.")
        for victim in sorted(idle, key=lambda s: (s.used, s.last_active))[
                :len(self.sessions) - self.max_sessions + 1]:
            self.log.info("agent-tools mcp: %d sessions open: ending session %s, the least "
                          "recently used", len(self.sessions), victim.id)
            self.forget(victim)  # now: the newcomer takes its place at once
            task = asyncio.ensure_future(victim.terminate(idle=True))
            self._evicting.add(task)
            task.add_done_callback(self._evicting.discard)

    async def _open(self, conversation: McpConversation) -> McpSession:
        settings = McpSessionSettings(
            idle_timeout_seconds=self.idle_timeout_seconds, use_elicitation=self.use_elicitation,
            unused_session_seconds=self.unused_session_seconds,
            progress_interval_seconds=self.progress_interval_seconds, base_url=self.base_url)
        session = McpSession(conversation, settings, log=self.log, on_end=self.forget)
        conversation.join(session.id)
        self.sessions[session.id] = session
        await session.start()
        return session
