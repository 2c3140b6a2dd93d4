"""The MCP sessions of a server: opening one (a run per session), finding it again, limits."""

from __future__ import annotations

from traitlets import Bool, Float, Int
from traitlets.config import LoggingConfigurable

from ..http.models import RunRequest
from ..runtime import ErrorCode, Run, Runtime, ToolError
from .session import McpSession, McpSessionSettings


class McpEndpoint(LoggingConfigurable):
    """Keeps the MCP sessions served on `agent-tools/mcp` and `agent-tools/api/runs/{id}/mcp`.

    Nothing here knows HTTP: a handler opens a session, then hands it each request (ASGI).
    """

    idle_timeout_seconds = Float(
        1800.0, help="An MCP session with no request in flight (an open GET stream counts as "
        "one) for this long ends, and closes the run it created.",
    ).tag(config=True)
    use_elicitation = Bool(
        True, help="Put the cards of an MCP session's run (ask_user, permission prompts) to the "
        "client's own user through MCP elicitation when the client declared that capability; "
        "otherwise they go to the run's space (the JupyterLab panel).",
    ).tag(config=True)
    max_sessions = Int(
        100, help="Most MCP sessions open at once; opening one more is refused (409, unavailable).",
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

    async def open_new_run(self, options: RunRequest) -> McpSession:
        """A session with a run of its own, created from `options` (closed when it ends)."""
        self._check_room()
        run = await self.runtime.create_run(**options.create_run_options(), origin="mcp")
        try:
            return await self._open(run, owns_run=True)
        except BaseException:
            await self.runtime.close_run(run.id)
            raise

    async def open_existing_run(self, run: Run) -> McpSession:
        """A session over a run that exists already (left open when the session ends)."""
        self._check_room()
        return await self._open(run, owns_run=False)

    def get(self, session_id: str, run_id: str | None = None) -> McpSession | None:
        """The open session `session_id` (of run `run_id` when given), else None."""
        session = self.sessions.get(session_id)
        if session is None or (run_id is not None and session.run.id != run_id):
            return None
        return session

    def forget(self, session: McpSession) -> None:
        self.sessions.pop(session.id, None)

    def _check_room(self) -> None:
        if len(self.sessions) >= self.max_sessions:
            raise ToolError(ErrorCode.UNAVAILABLE,
                            f"{self.max_sessions} MCP sessions are open already; end one "
                            "(HTTP DELETE) or wait for an idle one to time out.")

    async def _open(self, run: Run, *, owns_run: bool) -> McpSession:
        settings = McpSessionSettings(
            idle_timeout_seconds=self.idle_timeout_seconds, use_elicitation=self.use_elicitation,
            progress_interval_seconds=self.progress_interval_seconds, base_url=self.base_url)
        session = McpSession(run, settings, owns_run=owns_run, log=self.log, on_end=self.forget)
        self.sessions[session.id] = session
        await session.start()
        return session
