"""HTTP routes of staged edits: `runs/{id}/edits` and `runs/{id}/edits/{edit_id}`."""

from __future__ import annotations

from typing import ClassVar

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..runtime import ErrorCode, Resource, ToolError
from ..structural.session import StructuralSession
from .base import AgentToolsHandler, Operation
from .handlers import RUN_ID
from .models import StagedEdit

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

    operations: ClassVar[dict[str, Operation]] = {"get": Operation("Staged edits and their diffs", {200: list[StagedEdit]})}

    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        await self.respond([edit.to_json() for edit in self.session(run_id).edits.list()])


class EditHandler(_EditsBase):
    """One staged edit of this run and its diff."""

    operations: ClassVar[dict[str, Operation]] = {"get": Operation("One staged edit and its diff", {200: StagedEdit})}

    @web.authenticated
    @authorized
    async def get(self, run_id: str, edit_id: str) -> None:
        edit = self.session(run_id).edits.get(edit_id)
        if edit is None:
            raise ToolError(ErrorCode.UNKNOWN_EDIT,
                            f"This run has no edit {edit_id!r}. List them at .../edits.")
        await self.respond(edit.to_json())


handlers: list[tuple[str, type]] = [
    (rf"agent-tools/api/runs/{RUN_ID}/edits", EditsHandler),
    (rf"agent-tools/api/runs/{RUN_ID}/edits/{_EDIT}", EditHandler),
]
