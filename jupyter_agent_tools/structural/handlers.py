"""HTTP routes of staged edits: `runs/{id}/edits` and `runs/{id}/edits/{edit_id}`."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..handlers import AgentToolsHandler
from ..runtime import ErrorCode, Resource, ToolError
from .session import StructuralSession

_RUN = r"(?P<run_id>[0-9a-f]{32})"
_EDIT = r"(?P<edit_id>[A-Za-z0-9_\-]+)"


class _EditsBase(AgentToolsHandler):
    def session(self, run_id: str) -> StructuralSession:
        run = self.get_run(run_id)
        session = run.resources.get(Resource.PARSER)
        if session is None:
            raise ToolError(ErrorCode.NOT_FOUND,
                            "This run has no parser attached, so it has no staged edits.")
        return session


class EditsHandler(_EditsBase):
    """Every edit this run staged (accepted and discarded ones included), with diffs."""

    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        self.write_json([edit.to_json() for edit in self.session(run_id).edits.list()])


class EditHandler(_EditsBase):
    """One staged edit of this run and its diff."""

    @web.authenticated
    @authorized
    async def get(self, run_id: str, edit_id: str) -> None:
        edit = self.session(run_id).edits.get(edit_id)
        if edit is None:
            raise ToolError(ErrorCode.UNKNOWN_EDIT,
                            f"This run has no edit {edit_id!r}. List them at .../edits.")
        self.write_json(edit.to_json())


handlers: list[tuple[str, type]] = [
    (rf"agent-tools/api/runs/{_RUN}/edits", EditsHandler),
    (rf"agent-tools/api/runs/{_RUN}/edits/{_EDIT}", EditHandler),
]
