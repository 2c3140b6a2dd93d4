"""HTTP routes of staged edits: `runs/{id}/edits` and `runs/{id}/edits/{edit_id}`.

An ended run's edits come from the run store; a human accepts or discards one with
`POST runs/{id}/edits/{edit_id}` through the same structural session code as a live run's
`resolve` (checked against the files the same way), on a minimal handle of the ended run.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, ClassVar, cast
from weakref import WeakKeyDictionary

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..runtime import ErrorCode, Resource, Runtime, ToolError
from ..runtime.store import EndedRun, RunRecorder
from ..structural import errors
from ..structural.edits import StagedEdit as Edit
from ..structural.provider import ParserProvider
from ..structural.session import StructuralSession
from .base import AgentToolsHandler, ApiError, Operation
from .handlers import RUN_ID, ended_run
from .models import ResolveRequest, StagedEdit

if TYPE_CHECKING:
    from ..runtime import Run

_EDIT = r"(?P<edit_id>[A-Za-z0-9_\-]+)"
# One resolution of an ended run's edit at a time per runtime: each reads the edit's status
# from the store, so two accepts of one edit cannot both write.
_ENDED_RESOLVE: WeakKeyDictionary[Runtime, asyncio.Lock] = WeakKeyDictionary()


class _EditsBase(AgentToolsHandler):
    # An agent token reads its runs' edits; resolving an ended run's is the human's.
    agent_token_methods = frozenset({"GET"})

    async def session(self, run_id: str) -> StructuralSession:
        run = self.runtime.runs.get(run_id)
        if run is None:
            return await self.ended_session(run_id)
        session = run.resources.get(Resource.PARSER)
        if session is None:
            raise ToolError(ErrorCode.NOT_FOUND,
                            "This run has no parser attached, so it has no staged edits.")
        return session

    async def ended_session(self, run_id: str) -> StructuralSession:
        """A structural session over an ended run's stored edits (404: no such ended run)."""
        await ended_run(self, run_id)
        store = self.runtime.run_store
        provider = self.runtime.provider(Resource.PARSER)
        if store is None or not isinstance(provider, ParserProvider):
            raise ToolError(ErrorCode.NOT_FOUND,
                            "This server has no parser, so ended runs' edits cannot be shown.")
        records = await store.edits(run_id)
        # Rebuilding an edit whose file it creates looks at that file: off the loop.
        edits = await asyncio.to_thread(
            lambda: [Edit.from_record(record, status) for status, record in records])
        handle = EndedRun(run_id, self.runtime, RunRecorder(store, run_id))
        session = StructuralSession(provider, provider.limits(), cast("Run", handle))
        for edit in edits:
            session.edits.restore(edit)
        return session


class EditsHandler(_EditsBase):
    """Every edit this run staged (accepted and discarded ones included), with diffs."""

    operations: ClassVar[dict[str, Operation]] = {"get": Operation(
        "Staged edits and their diffs (an ended run's from the run store)",
        {200: list[StagedEdit]})}

    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        session = await self.session(run_id)
        await self.respond([edit.to_json() for edit in session.edits.list()])


class EditHandler(_EditsBase):
    """One staged edit of this run and its diff; an ended run's is accepted or discarded here."""

    operations: ClassVar[dict[str, Operation]] = {
        "get": Operation("One staged edit and its diff", {200: StagedEdit}),
        # 409: the run is open (its resolve tool decides), the edit is resolved already, or a
        # file changed since staging (the edit is then stale).
        "post": Operation("Accept or discard a staged edit of an ended run (accept writes "
                          "every file, or none if any changed since staging)",
                          {200: StagedEdit}, body=ResolveRequest, errors=frozenset({409})),
    }

    @web.authenticated
    @authorized
    async def get(self, run_id: str, edit_id: str) -> None:
        edit = (await self.session(run_id)).edits.get(edit_id)
        if edit is None:
            raise ToolError(ErrorCode.UNKNOWN_EDIT,
                            f"This run has no edit {edit_id!r}. List them at .../edits.")
        await self.respond(edit.to_json())

    @web.authenticated
    @authorized
    async def post(self, run_id: str, edit_id: str) -> None:
        request = await self.parse_body(ResolveRequest)
        if run_id in self.runtime.runs:
            raise ApiError(409, ErrorCode.FAILED,
                           f"Run {run_id} is open: its edits are resolved by its `resolve` tool "
                           f"(POST .../runs/{run_id}/calls with tool 'resolve').")
        async with _ENDED_RESOLVE.setdefault(self.runtime, asyncio.Lock()):
            session = await self.ended_session(run_id)
            try:
                edit, _ = await session.resolve(edit_id, request.action == "accept")
            except errors.UnknownEdit:
                raise ToolError(ErrorCode.UNKNOWN_EDIT, f"Run {run_id} has no edit {edit_id!r}. "
                                "List them at .../edits.") from None
            except errors.EditAlreadyResolved as exc:
                raise ApiError(409, ErrorCode.FAILED, f"{edit_id} is already {exc.status}; an "
                               "edit resolves once.") from None
            except errors.StaleEdit as exc:
                raise ApiError(409, ErrorCode.STALE_EDIT,
                               f"{', '.join(exc.stale_files)} changed since {edit_id} was "
                               "staged; nothing was written, and the edit is now stale.") from None
            except errors.StructuralError as exc:
                raise ApiError(409, ErrorCode.FAILED, f"{edit_id} was not resolved: {exc}"
                               ) from None
        await self.respond(edit.to_json())


handlers: list[tuple[str, type]] = [
    (rf"agent-tools/api/runs/{RUN_ID}/edits", EditsHandler),
    (rf"agent-tools/api/runs/{RUN_ID}/edits/{_EDIT}", EditHandler),
]
