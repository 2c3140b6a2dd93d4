"""One language server process for one (workspace root, spec): start, sync, ask, stop.

The server is shared by every run over its root. It keeps what the LSP needs between calls:
the documents it has open (with versions), the diagnostics it published or we pulled, and
its capabilities. It answers the requests servers send back (configuration, capability
registration, progress tokens) so none of them waits on us.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path

from .client import ServerConnection
from .errors import (
    LspRequestError,
    ServerCrashed,
    ServerExited,
    ServerNotInitialized,
    ServerNotLaunched,
    ServerNotRunning,
    ServerStopped,
)
from .specs import ServerSpec
from .tsserver import tsserver_diagnostics, tsserver_requests

# Takes an edit a server sends while a command runs: None when taken, else why not.
EditTaker = Callable[[types.WorkspaceEdit], Awaitable[str | None]]


@dataclass
class ServerLimits:
    """Bounds of every wait and every table, from the supervisor's traitlets."""

    request: float = 30.0
    initialize: float = 30.0
    shutdown: float = 3.0
    max_restarts: int = 3
    max_open_documents: int = 200


@dataclass
class _Document:
    version: int
    text: str


@dataclass
class DiagnosticsSnapshot:
    """What a server reported for one document: its items, and whether they are current."""

    items: list[types.Diagnostic]
    pending: bool = False


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for dotted, value in flat.items():
        node = nested
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return nested


def _client_capabilities() -> types.ClientCapabilities:
    link = types.DefinitionClientCapabilities(link_support=True)
    return types.ClientCapabilities(
        general=types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf16]
        ),
        workspace=types.WorkspaceClientCapabilities(
            configuration=True,
            workspace_folders=True,
            apply_edit=True,  # taken only while a command runs (`execute_command`)
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=True,
                resource_operations=[types.ResourceOperationKind.Create,
                                     types.ResourceOperationKind.Rename,
                                     types.ResourceOperationKind.Delete],
            ),
            symbol=types.WorkspaceSymbolClientCapabilities(),
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                dynamic_registration=True
            ),
        ),
        text_document=types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
            hover=types.HoverClientCapabilities(
                content_format=[types.MarkupKind.Markdown, types.MarkupKind.PlainText]
            ),
            definition=link,
            type_definition=types.TypeDefinitionClientCapabilities(link_support=True),
            implementation=types.ImplementationClientCapabilities(link_support=True),
            references=types.ReferenceClientCapabilities(),
            document_symbol=types.DocumentSymbolClientCapabilities(
                hierarchical_document_symbol_support=True
            ),
            code_action=types.CodeActionClientCapabilities(
                code_action_literal_support=types.ClientCodeActionLiteralOptions(
                    code_action_kind=types.ClientCodeActionKindOptions(
                        value_set=list(types.CodeActionKind)
                    )
                ),
                data_support=True,
                resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"]),
            ),
            rename=types.RenameClientCapabilities(prepare_support=True),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
            diagnostic=types.DiagnosticClientCapabilities(dynamic_registration=True),
        ),
        window=types.WindowClientCapabilities(work_done_progress=True),
    )


class LanguageServer:
    """A lazily started server process for `root`, described by `spec`."""

    def __init__(self, spec: ServerSpec, root: Path, binary: str, limits: ServerLimits) -> None:
        self.spec = spec
        self.root = root
        self.binary = binary
        self.limits = limits
        self.users: set[str] = set()
        self.connection: ServerConnection | None = None
        self.capabilities: types.ServerCapabilities | None = None
        self.started_at: float | None = None
        self.last_error: str | None = None
        self.failed = False
        self.restarts = 0
        self.starts = 0
        self._documents: dict[str, _Document] = {}
        self._diagnostics: dict[str, tuple[int | None, list[types.Diagnostic]]] = {}
        self._publish_seq: dict[str, int] = {}
        self._waiters: list[tuple[str, int, int | None, asyncio.Future[None]]] = []
        self._pull_registered = False
        # Done when the server registers pull diagnostics (ty does so after `initialized`):
        # a wait for pushed diagnostics then turns into a pull.
        self._pull_registration: asyncio.Future[None] | None = None
        self._project_loaded = False
        self._settings = _nest(dict(spec.settings))
        self._lock = asyncio.Lock()
        # Who takes the edits a server sends (workspace/applyEdit) while a command runs.
        self._edit_taker: EditTaker | None = None
        self._command_lock = asyncio.Lock()

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.connection is not None and self.connection.alive and self.capabilities is not None

    async def ensure_started(self) -> None:
        """Start the server unless it runs; ServerUnavailable with the reason when it cannot."""
        if self.running:
            return
        async with self._lock:
            if self.running:
                return
            if self.failed:
                raise ServerStopped(self.spec.name, str(self.last_error))
            if self.connection is not None:  # it was running and exited: a crash
                self.last_error = self.connection.exit_description()
                await self._discard()
                self.restarts += 1
                if self.restarts > self.limits.max_restarts:
                    self.failed = True
                    raise ServerCrashed(self.spec.name, self.restarts, self.last_error)
            await self._start()

    async def _start(self) -> None:
        connection = ServerConnection(self.spec.name)
        self._pull_registration = asyncio.get_running_loop().create_future()
        self._register_handlers(connection)
        argv = [self.binary, *self.spec.command[1:]]
        self.starts += 1
        try:
            await connection.spawn(argv, self.root)
        except OSError as exc:
            self.failed = True
            self.last_error = f"could not start {self.binary}: {exc.strerror or exc}"
            raise ServerNotLaunched(self.spec.name, self.last_error) from None
        self.connection = connection
        root_uri = from_fs_path(str(self.root))
        params = types.InitializeParams(
            process_id=None,
            root_uri=root_uri,
            root_path=str(self.root),
            capabilities=_client_capabilities(),
            initialization_options=self.spec.initialization_options,
            workspace_folders=[types.WorkspaceFolder(uri=root_uri, name=self.root.name)],
            client_info=types.ClientInfo(name="jupyter-agent-tools"),
        )
        try:
            result = await connection.request(types.INITIALIZE, params, self.limits.initialize)
        except LspRequestError as exc:
            self.failed = True
            self.last_error = f"initialize failed: {exc}"
            await self._discard()
            raise ServerNotInitialized(self.spec.name, str(exc)) from None
        self.capabilities = result.capabilities
        connection.notify(types.INITIALIZED, types.InitializedParams())
        if self._settings:
            connection.notify(types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                              types.DidChangeConfigurationParams(settings=self._settings))
        self.started_at = time.time()

    async def _discard(self) -> None:
        if self.connection is not None:
            # A server that never initialized gets no shutdown request: it would not answer.
            await self.connection.close(self.limits.shutdown,
                                        graceful=self.capabilities is not None)
        self.connection = None
        self.capabilities = None
        self.started_at = None
        self._documents.clear()
        self._diagnostics.clear()
        self._pull_registered = False
        self._project_loaded = False
        for _, _, _, future in self._waiters:
            if not future.done():
                future.cancel()
        self._waiters.clear()

    async def stop(self) -> None:
        """shutdown/exit, then kill on the timeout. The server may be started again."""
        async with self._lock:
            await self._discard()

    async def reload(self) -> None:
        """Stop, forget errors and restarts, start again."""
        async with self._lock:
            await self._discard()
            self.failed = False
            self.last_error = None
            self.restarts = 0
        await self.ensure_started()

    def status(self) -> dict[str, Any]:
        connection = self.connection
        return {
            "server": self.spec.name,
            "root": str(self.root),
            "binary": self.binary,
            "running": self.running,
            "pid": connection.pid if connection and connection.alive else None,
            "uptime_seconds": round(time.time() - self.started_at, 1) if self.started_at else None,
            "starts": self.starts,
            "restarts": self.restarts,
            "open_documents": len(self._documents),
            "last_error": self.last_error,
        }

    # -- what the server asks of us -------------------------------------------------------

    def _register_handlers(self, connection: ServerConnection) -> None:
        @connection.feature(types.WORKSPACE_CONFIGURATION)
        def configuration(params: types.ConfigurationParams) -> list[Any]:
            return [self._setting(item.section) for item in params.items]

        @connection.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register(params: types.RegistrationParams) -> None:
            if any(r.method == types.TEXT_DOCUMENT_DIAGNOSTIC for r in params.registrations):
                self._pull_registered = True
                registration = self._pull_registration
                if registration is not None and not registration.done():
                    registration.set_result(None)

        @connection.feature(types.CLIENT_UNREGISTER_CAPABILITY)
        def unregister(_params: types.UnregistrationParams) -> None:
            return None

        @connection.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def progress_create(_params: types.WorkDoneProgressCreateParams) -> None:
            return None

        @connection.feature(types.WORKSPACE_APPLY_EDIT)
        async def apply_edit(params: types.ApplyWorkspaceEditParams
                             ) -> types.ApplyWorkspaceEditResult:
            # Edits reach disk only through our tools (staged, atomic, inside the root): one
            # is taken only while a command we asked for runs, and only by its taker.
            taker = self._edit_taker
            if taker is None:
                return types.ApplyWorkspaceEditResult(
                    applied=False, failure_reason="edits are taken only while a command runs")
            refusal = await taker(params.edit)
            return types.ApplyWorkspaceEditResult(applied=refusal is None,
                                                  failure_reason=refusal)

        @connection.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def show_message_request(_params: types.ShowMessageRequestParams) -> None:
            return None

        @connection.feature(types.WORKSPACE_WORKSPACE_FOLDERS)
        def workspace_folders(_params: None) -> list[types.WorkspaceFolder]:
            return [types.WorkspaceFolder(uri=from_fs_path(str(self.root)), name=self.root.name)]

        @connection.feature(types.WORKSPACE_DIAGNOSTIC_REFRESH)
        def diagnostic_refresh(_params: None) -> None:
            return None

        @connection.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: types.PublishDiagnosticsParams) -> None:
            self._on_publish(params)

        # typescript-language-server asks its client to start renaming what a refactoring
        # extracted (an editor's prompt); there is no one to type a name: nothing to do.
        connection.feature("_typescript.rename")(lambda _params: None)

        for quiet in (types.WINDOW_LOG_MESSAGE, types.WINDOW_SHOW_MESSAGE, types.PROGRESS,
                      types.TELEMETRY_EVENT, types.LOG_TRACE, "$/typescriptVersion"):
            connection.feature(quiet)(lambda _params: None)

    def _setting(self, section: str | None) -> Any:
        node: Any = self._settings
        for part in (section or "").split(".") if section else []:
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node

    def _on_publish(self, params: types.PublishDiagnosticsParams) -> None:
        uri = params.uri
        self._diagnostics[uri] = (params.version, list(params.diagnostics))
        seq = self._publish_seq.get(uri, 0) + 1
        self._publish_seq[uri] = seq
        for waiter in list(self._waiters):
            w_uri, after_seq, version, future = waiter
            if w_uri != uri or seq <= after_seq or future.done():
                continue
            if version is not None and params.version is not None and params.version < version:
                continue
            future.set_result(None)
            self._waiters.remove(waiter)

    # -- documents ------------------------------------------------------------------------

    @property
    def has_open_documents(self) -> bool:
        return bool(self._documents)

    @property
    def uses_pull_diagnostics(self) -> bool:
        return self.spec.diagnostics_source == "pull" or self._pull_registered or bool(
            self.capabilities and self.capabilities.diagnostic_provider
        )

    def _save_includes_text(self) -> bool:
        sync = self.capabilities.text_document_sync if self.capabilities else None
        if isinstance(sync, types.TextDocumentSyncOptions) and isinstance(
            sync.save, types.SaveOptions
        ):
            return bool(sync.save.include_text)
        return False

    async def sync(self, path: Path, text: str, *, save: bool = False) -> tuple[str, int, bool]:
        """Start the server if needed, then `sync_now`."""
        await self.ensure_started()
        return self.sync_now(path, text, save=save)

    def sync_now(self, path: Path, text: str, *, save: bool = False) -> tuple[str, int, bool]:
        """Make the running server see `text` for `path` (open or change); optionally save.

        Returns (uri, version, changed); `changed` is False when the server had it already.
        Synchronous on purpose: files synced back to back reach the server before it
        analyses any of them, so cross-file diagnostics are not computed half-way.
        """
        if self.connection is None:
            raise ServerNotRunning(self.spec.name)
        uri = from_fs_path(str(path))
        document = self._documents.get(uri)
        changed = True
        if document is None:
            while len(self._documents) >= self.limits.max_open_documents:
                self.close_document(next(iter(self._documents)))  # the least recently synced
            document = _Document(version=1, text=text)
            self._documents[uri] = document
            self.connection.notify(types.TEXT_DOCUMENT_DID_OPEN, types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id=self.spec.language_id(path) or "",
                                       version=1, text=text)
            ))
        elif document.text != text:
            document.version += 1
            document.text = text
            self.connection.notify(
                types.TEXT_DOCUMENT_DID_CHANGE,
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri,
                                                                        version=document.version),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                ),
            )
        else:
            changed = False
        self._documents[uri] = self._documents.pop(uri)  # most recently used last
        if save:
            self.connection.notify(types.TEXT_DOCUMENT_DID_SAVE, types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                text=text if self._save_includes_text() else None,
            ))
        return uri, document.version, changed

    def expect_publish(self, uri: str, version: int) -> asyncio.Future[None]:
        """A future resolved by the next publication for `uri` at `version` or later."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((uri, self._publish_seq.get(uri, 0), version, future))
        return future

    def published(self, uri: str, version: int) -> list[types.Diagnostic] | None:
        """Diagnostics already published for `uri` at `version` (None: not yet)."""
        entry = self._diagnostics.get(uri)
        if entry is None:
            return None
        published_version, items = entry
        if published_version is not None and published_version < version:
            return None
        return items

    async def diagnostics(self, uri: str, version: int, changed: bool,
                          wait: float, publish: asyncio.Future[None] | None = None
                          ) -> DiagnosticsSnapshot:
        """The server's diagnostics for a synced document, waiting at most `wait` seconds."""
        if self.spec.diagnostics_source == "tsserver":
            return await self._tsserver_diagnostics(uri, wait)
        if self.uses_pull_diagnostics:
            assert self.connection is not None
            try:
                report = await self.connection.request(
                    types.TEXT_DOCUMENT_DIAGNOSTIC,
                    types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri)),
                    wait,
                )
            except LspRequestError as exc:
                if exc.timed_out:
                    return DiagnosticsSnapshot(items=[], pending=True)
                raise
            items = list(getattr(report, "items", None) or [])
            if isinstance(report, (types.RelatedUnchangedDocumentDiagnosticReport,
                                   types.UnchangedDocumentDiagnosticReport)):
                items = self._diagnostics.get(uri, (None, []))[1]
            self._diagnostics[uri] = (version, items)
            return DiagnosticsSnapshot(items=items)
        if not changed and publish is None:
            known = self.published(uri, version)
            if known is not None:
                return DiagnosticsSnapshot(items=known)
        waiter = publish or self.expect_publish(uri, version)
        assert self.connection is not None
        exited = self.connection.exited
        registered = self._pull_registration
        loop = asyncio.get_running_loop()
        began = loop.time()
        try:
            either: set[asyncio.Future[Any]] = {waiter, exited}
            if registered is not None:
                either.add(registered)
            await asyncio.wait(either, timeout=wait,
                               return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            self._drop_waiter(waiter)
            raise
        if waiter.done() and not waiter.cancelled():
            return DiagnosticsSnapshot(items=self._diagnostics.get(uri, (None, []))[1])
        gone = exited.done() or waiter.cancelled()  # cancelled: the server was stopped
        self._drop_waiter(waiter)
        if not gone and registered is not None and registered.done():
            # It registered pull diagnostics while we waited for a push it will not send.
            return await self.diagnostics(uri, version, changed,
                                          max(0.0, wait - (loop.time() - began)))
        if gone:
            raise ServerExited(self.spec.name, self.connection.exit_description())
        known = self.published(uri, version)
        return DiagnosticsSnapshot(items=known or [], pending=True)

    async def project_loaded(self, uri: str, wait: float) -> None:
        """Wait (once per start, bounded) until the server answers from its whole project.

        tsserver answers navigation from syntax alone while its project loads (a hover on an
        imported function says only "import greet"); its semantic diagnostics wait for the
        load, so asking for them once is the barrier.
        """
        if self.spec.diagnostics_source != "tsserver" or self._project_loaded:
            return
        snapshot = await self._tsserver_diagnostics(uri, wait)
        self._project_loaded = not snapshot.pending

    def _drop_waiter(self, waiter: asyncio.Future[None]) -> None:
        if not waiter.done():
            waiter.cancel()
        self._waiters = [w for w in self._waiters if w[3] is not waiter]

    async def _tsserver_diagnostics(self, uri: str, wait: float) -> DiagnosticsSnapshot:
        assert self.connection is not None
        try:
            answers = await asyncio.gather(*(self.connection.request(method, params, wait)
                                             for method, params in tsserver_requests(uri)))
        except LspRequestError as exc:
            if exc.timed_out:
                return DiagnosticsSnapshot(items=[], pending=True)
            raise
        return DiagnosticsSnapshot(items=tsserver_diagnostics(answers))

    async def request(self, method: str, params: Any, timeout: float | None = None) -> Any:
        """A typed request with the configured timeout; ServerUnavailable when it died."""
        await self.ensure_started()
        assert self.connection is not None
        try:
            return await self.connection.request(method, params, timeout or self.limits.request)
        except LspRequestError as exc:
            if not self.connection.alive:
                self.last_error = str(exc)
            raise

    async def execute_command(self, command: types.Command, take: EditTaker) -> Any:
        """Run `command` (workspace/executeCommand); each edit the server sends meanwhile
        (workspace/applyEdit) goes to `take`, whose answer (None: taken, else why not) is the
        server's. One command at a time per server, so each edit has one taker."""
        async with self._command_lock:
            self._edit_taker = take
            try:
                return await self.request(types.WORKSPACE_EXECUTE_COMMAND, types.ExecuteCommandParams(
                    command=command.command, arguments=command.arguments))
            finally:
                self._edit_taker = None

    def files_created_or_deleted(self, created: list[str], deleted: list[str]) -> None:
        """Files appeared on or left the disk: servers re-resolve their importers' imports
        (a module the server once found missing stays missing until it hears of it)."""
        if self.connection is None:
            return
        for uri in deleted:
            self.close_document(uri)
        events = [types.FileEvent(uri=uri, type=types.FileChangeType.Created) for uri in created]
        events += [types.FileEvent(uri=uri, type=types.FileChangeType.Deleted) for uri in deleted]
        self.connection.notify(types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                               types.DidChangeWatchedFilesParams(changes=events))

    def close_document(self, uri: str) -> None:
        """Tell the server `uri` is closed and forget its diagnostics."""
        self._diagnostics.pop(uri, None)
        if self._documents.pop(uri, None) is not None and self.connection is not None:
            self.connection.notify(types.TEXT_DOCUMENT_DID_CLOSE, types.DidCloseTextDocumentParams(
                types.TextDocumentIdentifier(uri)
            ))
