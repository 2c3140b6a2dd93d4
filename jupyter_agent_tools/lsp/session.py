"""A run's view of the language servers: which serve a file (or why none does), and the journal.

A notebook reaches its servers as its virtual document (the kernel's code cells joined,
IPython syntax masked; see `notebooks.virtual`) under a hidden name beside it,
`.analysis.ipynb.py`, that exists only in the servers' memory: never on disk. Every answer
that names that document is mapped back to the notebook's cells.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from ..discovery import BinaryCheck, StatOf, missing_binary, missing_marker, stat_on_disk
from ..files import FilesError, read_text_inside, resolve_inside
from ..files.cached import CachedLookup, NotCached
from ..files.walk import DEFAULT_SKIP_DIRS
from ..notebooks import (
    Cell,
    NotebookError,
    NotebookFile,
    VirtualDocument,
    is_notebook_path,
    read_notebook,
)
from ..notebooks.current import live_content, live_file, open_notebook
from ..runtime.run import Run
from .errors import LspError, LspRequestError, NoServer, ServerUnavailable, UnreadableNotebook
from .journal import SEVERITY_LEVELS, DiagnosticsJournal, FileDiagnostic
from .positions import char_index
from .server import LanguageServer
from .specs import ServerSpec

_TEXT_CACHE_FILES = 32
OUTSIDE_ROOT = "outside the server's root"
_SERVED_NOTEBOOK = re.compile(r"\A\.(.+\.ipynb)\.[^.]+\Z", re.IGNORECASE)
# Ruff flags imports below the first cell (E402), which notebooks do on purpose; ruff's own
# notebook mode allows them at the top of a cell, and the virtual document cannot say so.
_NOT_FOR_NOTEBOOKS = frozenset({("Ruff", "E402"), ("ruff", "E402")})
# "Unused expression" (basedpyright, ruff's B018): not on a cell's last line, whose value the
# notebook displays (ruff's notebook mode and Pylance's say the same).
_UNUSED_EXPRESSION = frozenset({"reportUnusedExpression", "B018"})


# Places whose listed code actions a run keeps (each a few actions).
_MAX_LISTED_PLACES = 32


@dataclass(frozen=True)
class OfferedActions:
    """Code actions a server offered on a document's text (its sha256)."""

    text_hash: str
    actions: list[tuple[LanguageServer, types.CodeAction | types.Command]]


@dataclass(frozen=True)
class SourceDocument:
    """A file as its servers see it: a source file as it is, a notebook as its virtual
    document under `served` (a hidden name beside it that is never written)."""

    path: Path
    served: Path
    text: str
    notebook: VirtualDocument | None = None
    cell_count: int = 0  # every cell of the notebook, code or not
    file: NotebookFile | None = None  # the notebook as read, for writing back its cells

    @cached_property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    def diagnostic(self, rel: str, diagnostic: types.Diagnostic, server: str
                   ) -> FileDiagnostic | None:
        """A server's diagnostic as results show it, addressed by cell in a notebook; None
        for one that is about masked IPython syntax or the blank lines between cells."""
        lines = self.lines
        item = FileDiagnostic.from_lsp(rel, diagnostic, server, lines)
        if self.notebook is None:
            return item
        start = diagnostic.range.start
        place = self.notebook.cell_position(start.line, item.column - 1)
        if (place is None or self.notebook.is_masked(start.line, item.column - 1)
                or (item.source, item.code) in _NOT_FOR_NOTEBOOKS
                or (item.code in _UNUSED_EXPRESSION
                    and diagnostic.range.end.line == self._last_code_line(place.cell))):
            return None
        return dataclasses.replace(item, cell=place.cell, line=place.line + 1)

    def _last_code_line(self, cell: int) -> int:
        """The document line of `cell`'s last non-blank line: an expression there is the
        value the cell displays, not an unused one."""
        assert self.notebook is not None
        span = next(s for s in self.notebook.spans if s.cell == cell)
        lines = self.lines[span.first_line:span.first_line + span.line_count]
        filled = [index for index, line in enumerate(lines) if line.strip()]
        return span.first_line + (filled[-1] if filled else 0)


@dataclass
class Availability:
    """Why a spec can or cannot serve a file: the intersection of root marker and binary."""

    spec: ServerSpec
    root: Path | None
    marker: str | None
    binary: str | None
    binary_problem: str | None = None
    # The root has none of the spec's build configuration (clangd: no compile database).
    guesses_build: bool = False
    # The server that serves the file in this one's place (`ServerSpec.yields_to`).
    yielded_to: str | None = None

    @property
    def ok(self) -> bool:
        return self.root is not None and self.binary is not None and self.yielded_to is None

    def reason(self) -> str:
        if self.yielded_to is not None and self.root is not None and self.binary is not None:
            return f"{self.spec.name}: {self.yielded_to} serves these files in its place"
        missing = []
        if self.root is None:
            missing.append(missing_marker(self.spec.root_markers,
                                          "between the file and the run's cwd"))
        if self.binary is None:
            missing.append(self.binary_problem
                           or missing_binary(self.spec.binary_names, self.spec.install))
        return f"{self.spec.name}: {' and '.join(missing)}"


@dataclass
class FileDiagnostics:
    """A file's current diagnostics across its servers, or why there are none."""

    path: Path
    items: list[FileDiagnostic] = field(default_factory=list)
    available: bool = True
    pending: list[str] = field(default_factory=list)
    # Why no server serves it, or why it could not be read (then `available` is False).
    problems: list[str] = field(default_factory=list)
    unreadable: FilesError | LspError | None = None
    # Servers by name: those that answered (maybe `pending`), those that failed (`failures`).
    answered: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    failures: list[Exception] = field(default_factory=list)

    def fail(self, server: LanguageServer, error: Exception) -> None:
        self.failed.append(server.spec.name)
        self.failures.append(error)

    @property
    def complete(self) -> bool:
        """Every server serving the file answered in time."""
        return not (self.pending or self.problems or self.unreadable or self.failures)


@dataclass(frozen=True)
class SessionLimits:
    """Bounds of a run's use of the servers, from the supervisor's traitlets at attach time."""

    request_timeout_seconds: float = 30.0
    diagnostics_timeout_seconds: float = 10.0
    project_check_timeout_seconds: float = 300.0
    diagnostics_min_severity: str = "info"
    max_diagnostics: int = 100
    max_references: int = 50
    max_workspace_symbols: int = 100
    max_file_symbols: int = 200
    max_command_scan_files: int = 10000
    max_project_sources: int = 100
    #: Diagnostics after a write from the light server of a language where one serves in a
    #: heavier one's place (ty, not basedpyright): `ServerSpec.yields_to` read the other way.
    light_write_diagnostics: bool = True


class ServerPool(Protocol):
    """What a session needs of the servers shared between runs (the supervisor)."""

    specs: dict[str, ServerSpec]

    def server(self, spec: ServerSpec, root: Path, binary: str) -> LanguageServer: ...

    def existing(self, key: tuple[Path, str]) -> LanguageServer | None: ...

    async def leave(self, key: tuple[Path, str], run_id: str) -> None: ...

    def find_root(self, spec: ServerSpec, path: Path, stop: Path,
                  stat_of: StatOf = ...) -> tuple[Path, str] | None: ...

    async def binary(self, spec: ServerSpec) -> str | None: ...

    async def binary_check(self, spec: ServerSpec) -> BinaryCheck: ...


# What status says of a notebook served from its own folder (no root marker around it).
NOTEBOOK_FOLDER = "(the notebook's folder)"


class LspSession:
    """The per-run handle of the `lsp` resource."""

    def __init__(self, pool: ServerPool, limits: SessionLimits, run: Run) -> None:
        self.pool = pool
        self.limits = limits
        self.run = run
        self.journal = DiagnosticsJournal()
        self.servers: set[tuple[Path, str]] = set()
        # Keyed by (path, as a document?): a notebook is read both as its virtual document and,
        # where a server names the file itself, as text.
        self._texts: dict[tuple[Path, bool], tuple[tuple[int, int, int],
                                                   str | SourceDocument]] = {}
        self._texts_lock = threading.Lock()  # reads run in worker threads
        # Notebooks open in JupyterLab, as last taken from their shared documents (the file
        # is saved later): what the servers were sent, and what their answers are mapped on.
        self._live: dict[Path, SourceDocument] = {}
        self._cached_lookup = CachedLookup(run.runtime.root_path)
        # The code actions last listed at each place, so that applying one by its number
        # applies what was listed, and is refused once the file changed since.
        self.offered_actions: OrderedDict[tuple[Any, ...], OfferedActions] = OrderedDict()

    def remember_actions(self, place: tuple[Any, ...], offered: OfferedActions) -> None:
        """Keep the actions listed at `place`, the oldest places forgotten past a bound."""
        self.offered_actions.pop(place, None)
        self.offered_actions[place] = offered
        while len(self.offered_actions) > _MAX_LISTED_PLACES:
            self.offered_actions.popitem(last=False)

    # -- which servers ----------------------------------------------------------------------

    def _stop_dir(self, path: Path) -> Path:
        cwd = self.run.cwd
        return cwd if path.is_relative_to(cwd) else self.run.runtime.root_path

    async def availability(self, path: Path, specs: list[ServerSpec] | None = None, *,
                           light: bool = False) -> list[Availability]:
        """For each enabled spec serving `path` (or each of `specs`, whatever `path` is):
        the root marker and the binary, or what lacks. `light`: a spec that yields to
        another (`ServerSpec.yields_to`: ty to basedpyright) serves, and the other gives way."""
        # A notebook in a folder of data, with no project around it, is a project of its own.
        notebook_folder = path.parent if is_notebook_path(path.name) else None
        if specs is None:
            if is_notebook_path(path.name):
                document = self._last_read(path)
                if document is None:
                    document = await self.document(path)
                path = document.served
            suffix = path.suffix.lower()
            specs = [s for s in self.pool.specs.values() if suffix in s.extensions]
        stop = self._stop_dir(path)
        enabled = [spec for spec in specs if spec.enabled]
        if not enabled:
            return []
        def roots_and_builds(stat_of: StatOf) -> list[tuple[tuple[Path, str] | None, bool]]:
            found = []
            for spec in enabled:
                root = self.pool.find_root(spec, path, stop, stat_of)
                if root is None and notebook_folder is not None:
                    root = (notebook_folder, NOTEBOOK_FOLDER)
                found.append((root, root is not None and spec.lacks_build_config(root[0],
                                                                                 stat_of)))
            return found

        # From the kernel's caches on the loop, as it is once the markers were looked for;
        # else every spec's markers in one thread hop (a write asks this of each file).
        try:
            roots = roots_and_builds(self._lookup)
        except NotCached:
            roots = await asyncio.to_thread(roots_and_builds, stat_on_disk)
        found = []
        for spec, (root, guesses) in zip(enabled, roots, strict=True):
            binary = await self.pool.binary_check(spec)
            found.append(Availability(spec, root[0] if root else None, root[1] if root else None,
                                      binary.path, binary.problem, guesses))
        # A server that could not start (or crashed past its restarts) serves nothing: the one
        # yielding to it (ty, to a basedpyright out of memory) takes over until `lsp reload`.
        serving = [option.spec.name for option in found if option.ok and option.root and not (
            (server := self.pool.existing((option.root, option.spec.name))) is not None
            and server.failed)]
        if light:
            for option in found:
                option.yielded_to = next((other.spec.name for other in found
                                          if other.spec.name in serving
                                          and option.spec.name in other.spec.yields_to), None)
            return found
        for option in found:
            option.yielded_to = next((name for name in option.spec.yields_to
                                      if name in serving), None)
        return found

    async def servers_for(self, path: Path, *, light: bool = False
                          ) -> tuple[list[LanguageServer], str]:
        """The servers for `path` (not yet started), or none and the reason (`light`: see
        `availability`)."""
        options = await self.availability(path, light=light)
        if not options:
            if is_notebook_path(path.name):
                document = await self.document(path)
                language = document.notebook.language if document.notebook else "?"
                return [], f"no language server handles {language} notebooks"
            suffix = path.suffix or "extension-less"
            return [], f"no language server handles {suffix} files"
        servers = [self.server_at(a.spec, a.root, a.binary) for a in options
                   if a.ok and a.root is not None and a.binary is not None]
        return servers, "; ".join(a.reason() for a in options
                                  if not a.ok and a.yielded_to is None)

    async def start_light_servers(self, path: Path) -> None:
        """Start the servers a write of `path` gets its diagnostics from (`light`), unless
        they run: called beside the write, so that its diagnostics need not wait for a
        start. Never raises: the diagnostics after the write say what failed."""
        with contextlib.suppress(LspError, FilesError, OSError):
            servers, _ = await self.servers_for(path, light=True)
            await asyncio.gather(*(server.ensure_started() for server in servers
                                   if not server.running), return_exceptions=True)

    def server_at(self, spec: ServerSpec, root: Path, binary: str) -> LanguageServer:
        """The shared server for (root, spec), now counted as used by this run."""
        server = self.pool.server(spec, root, binary)
        server.users.add(self.run.id)
        self.servers.add((root, spec.name))
        return server

    async def navigation_server(self, path: Path) -> LanguageServer:
        """The server that answers navigation for `path`; `NoServer` says why there is none."""
        retried = False
        while True:
            servers, reason = await self.servers_for(path)
            chosen = next((server for server in sorted(servers, key=lambda s: s.failed)
                           if server.spec.navigation), None)  # a working one first
            if chosen is None:
                raise NoServer(path, self.run.relpath(path), reason or "only linters serve it")
            if chosen.failed or retried:
                return chosen  # its own error is said where it is used
            try:
                await chosen.ensure_started()
            except ServerUnavailable:
                if not chosen.failed:
                    raise
                retried = True  # it cannot start: the server yielding to it (ty) takes over
                continue
            return chosen

    # -- documents and diagnostics -------------------------------------------------------

    def contained(self, path: Path) -> Path | None:
        """`path` with its symlinks resolved when it stays under the server root, else None.

        Every file a server names goes through here before it is read or quoted: a folder
        inside the root may be a symlink to one outside it.
        """
        root = self.run.runtime.root_path
        try:
            return resolve_inside(root, root, path)
        except FilesError:
            return None

    def read_now(self, path: Path) -> str:
        """A file's text, in the calling (worker) thread; unchanged files (same inode, mtime
        and size) come from a small cache."""
        runtime = self.run.runtime

        def read() -> str:  # contained where the bytes are read, not only where checked
            return read_text_inside(runtime.root_path, path, runtime.max_read_bytes,
                                    shown=self.run.relpath(path))

        text = self._cached(path, read, document=False)
        assert isinstance(text, str)
        return text

    def document_now(self, path: Path) -> SourceDocument:
        """What the servers see of `path` (a notebook: its virtual document), in the calling
        (worker) thread; cached as `read_now`. A notebook that cannot be parsed is
        `UnreadableNotebook` saying why."""
        if not is_notebook_path(path.name):
            return SourceDocument(path, path, self.read_now(path))
        with self._texts_lock:
            live = self._live.get(path)
        if live is not None:  # open in JupyterLab: its shared document, as last taken
            return live
        runtime = self.run.runtime

        def read() -> SourceDocument:
            try:
                file = read_notebook(runtime.root_path, path, runtime.max_notebook_bytes,
                                     shown=self.run.relpath(path))
            except NotebookError as exc:
                raise UnreadableNotebook(path, exc) from None
            document = VirtualDocument.of(file.notebook)
            return SourceDocument(path, path.with_name(
                f".{path.name}{self._extension(document.language)}"), document.text, document,
                len(file.notebook.cells), file)

        document = self._cached(path, read, document=True)
        assert isinstance(document, SourceDocument)
        return document

    def _extension(self, language: str) -> str:
        """The suffix the servers of `language` expect (`.py` for python)."""
        for spec in self.pool.specs.values():
            for extension, language_id in spec.extensions.items():
                if language_id == language:
                    return extension
        return f".{language}"

    def _last_read(self, path: Path) -> SourceDocument | None:
        """The notebook's document as last read, without looking at the disk (on the loop).

        Good enough to pick servers by the kernel's language: what they are sent is read
        afresh; a kernel of another language since is seen from the next call on.
        """
        with self._texts_lock:
            live = self._live.get(path)
            cached = self._texts.get((path, True))
        if live is not None:
            return live
        return cached[1] if cached is not None and isinstance(cached[1], SourceDocument) else None

    def _cached(self, path: Path, read: Any, *, document: bool) -> str | SourceDocument:
        try:
            stat = os.stat(path)
        except OSError:
            return read()  # says what is wrong
        stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        known = self._remembered((path, document), stamp)
        if known is not None:
            return known
        text = read()
        with self._texts_lock:
            self._texts[(path, document)] = (stamp, text)
            while len(self._texts) > _TEXT_CACHE_FILES:
                del self._texts[next(iter(self._texts))]
        return text

    def _remembered(self, key: tuple[Path, bool], stamp: tuple[int, int, int]
                    ) -> str | SourceDocument | None:
        """What was read of the file at `stamp`, now the most recently used; else None."""
        with self._texts_lock:
            cached = self._texts.pop(key, None)
            if cached is None:
                return None
            self._texts[key] = cached  # most recently used last
        return cached[1] if cached[0] == stamp else None

    def _lookup(self, path: Path) -> os.stat_result | None:
        """`path`'s status from the kernel's caches, on the loop (`CachedLookup`); NotCached
        also when `Runtime.max_loop_read_bytes` is 0, which sends every look to a thread."""
        if self.run.runtime.max_loop_read_bytes <= 0:
            raise NotCached
        return self._cached_lookup(path)

    def _in_memory(self, path: Path, *, document: bool) -> str | SourceDocument | None:
        """What was read of `path` (as `document_now` or `read_now` keep it) if the file is
        unchanged since, asked on the event loop: its status comes from the kernel's caches,
        following no link. None when that cannot be said at once."""
        try:
            found = self._lookup(path)
        except NotCached:
            return None
        if found is None:
            return None
        return self._remembered((path, document), (found.st_ino, found.st_mtime_ns,
                                                   found.st_size))

    async def document(self, path: Path) -> SourceDocument:
        """`document_now` from the event loop: a file unchanged since it was read is not read
        again, nor sent to a thread. A notebook open in JupyterLab is its shared document as
        it is now (one truth with read and notebook), never its file, saved later."""
        if is_notebook_path(path.name):
            live = await self._live_document(path)
            if live is not None:
                return live
            known = self._in_memory(path, document=True)
            if isinstance(known, SourceDocument):
                return known
        else:
            text = self._in_memory(path, document=False)
            if isinstance(text, str):
                return SourceDocument(path, path, text)
        return await asyncio.to_thread(self.document_now, path)

    async def _live_document(self, path: Path) -> SourceDocument | None:
        """The virtual document of the notebook at `path` built from its shared document now,
        when it is open in JupyterLab (kept for the answers' mapping); else None."""
        runtime = self.run.runtime
        try:
            shared = await open_notebook(runtime.parent, runtime.root_path, path)
        except ValueError:  # not under the root: no shared document
            shared = None
        if shared is None:
            with self._texts_lock:
                self._live.pop(path, None)
            return None
        content = live_content(shared)
        with self._texts_lock:
            known = self._live.get(path)
        if known is not None and known.file is not None \
                and known.file.notebook.data == content:
            return known

        def build() -> SourceDocument:
            file = live_file(path, self.run.relpath(path), content)
            document = VirtualDocument.of(file.notebook)
            return SourceDocument(path, path.with_name(
                f".{path.name}{self._extension(document.language)}"), document.text, document,
                len(file.notebook.cells), file)

        built = await asyncio.to_thread(build)
        with self._texts_lock:
            self._live[path] = built
        return built

    def notebook_of(self, served: Path) -> SourceDocument | None:
        """The notebook whose virtual document a server named `served`, if it is one (in the
        calling worker thread)."""
        match = _SERVED_NOTEBOOK.match(served.name)
        if match is None or served.exists():  # a real file of that name is just a file
            return None
        notebook = served.with_name(match.group(1))
        if self.contained(notebook) is None:
            return None
        try:
            document = self.document_now(notebook)
        except (FilesError, LspError):
            return None
        return document if document.served == served else None

    async def open(self, server: LanguageServer, path: Path) -> str:
        """Sync `path`'s disk content to `server`; returns the text the server sees."""
        return (await self.open_document(server, path)).text

    async def open_document(self, server: LanguageServer, path: Path) -> SourceDocument:
        """Sync what `server` should see of `path` (a notebook: its virtual document)."""
        document = await self.document(path)
        uri, _, _ = await server.sync(document.served, document.text)
        await server.project_loaded(uri, self.limits.request_timeout_seconds)
        return document

    async def source_files(self) -> set[Path] | None:
        """The files the running servers of this run would analyse, found on disk under their
        roots (dot-folders, node_modules and __pycache__ skipped); None when no server runs or
        the roots hold more files of any kind than the limit `max_command_scan_files`.
        Listed in a worker thread."""
        extensions: dict[Path, set[str]] = {}
        for server in self._running_servers():
            extensions.setdefault(server.root, set()).update(server.spec.extensions)
        if not extensions:
            return None
        return await asyncio.to_thread(_list_sources, extensions,
                                       self.limits.max_command_scan_files)

    async def project_sources(self, server: LanguageServer) -> list[Path] | None:
        """The files `server` serves under its root, listed in a worker thread (dot-folders,
        node_modules, __pycache__ skipped); None when there are more than
        `max_project_sources`."""
        limit = self.limits.max_project_sources
        found = await asyncio.to_thread(_list_sources, {server.root: set(server.spec.extensions)},
                                        self.limits.max_command_scan_files, limit + 1)
        if found is None or len(found) > limit:
            return None
        return sorted(p for p in found if self.contained(p) is not None)

    async def notebooks_served_by(self, server: LanguageServer) -> list[Path] | None:
        """The notebooks under `server`'s root, listed as `project_sources` lists sources
        (None past `max_project_sources`)."""
        return await self.notebooks_under(server.root)

    async def notebooks_under(self, folder: Path) -> list[Path] | None:
        """The notebooks under `folder`, listed as `project_sources` lists sources (None past
        `max_project_sources`)."""
        limit = self.limits.max_project_sources

        def listed() -> list[Path] | None:
            found = _list_sources({folder: {".ipynb"}},
                                  self.limits.max_command_scan_files, limit + 1)
            if found is None or len(found) > limit:
                return None
            return sorted(p for p in found if self.contained(p) is not None)

        return await asyncio.to_thread(listed)

    def files_created_or_deleted(self, created: list[Path], deleted: list[Path]) -> None:
        """Tell this run's running servers, as a file watcher would; forget the deleted files."""
        for server in self._running_servers():
            server.files_created_or_deleted([from_fs_path(str(p)) for p in created],
                                            [from_fs_path(str(p)) for p in deleted])
            for path in deleted:  # a deleted notebook's virtual document goes with it
                if is_notebook_path(path.name):
                    for extension in set(server.spec.extensions):
                        server.close_document(from_fs_path(str(
                            path.with_name(f".{path.name}{extension}"))))
        for path in deleted:
            self.journal.forget(self.run.relpath(path))

    def _running_servers(self) -> Iterator[LanguageServer]:
        for key in self.servers:
            server = self.pool.existing(key)
            if server is not None and server.running:
                yield server

    def _sync_others(self, document: SourceDocument, asked: list[LanguageServer], *,
                     save: bool) -> None:
        """Send `document` to this run's running servers of its kind that are not `asked`
        for its diagnostics (basedpyright beside ty after a write), so that their answers
        (references, a rename) see the new text. Nothing is waited for."""
        served = document.served
        for server in list(self._running_servers()):
            if (server in asked or served.suffix.lower() not in server.spec.extensions
                    or not served.is_relative_to(server.root)):
                continue
            with contextlib.suppress(ServerUnavailable):
                server.sync_now(served, document.text, save=save)

    async def diagnostics(self, path: Path, *, save: bool) -> FileDiagnostics:
        """The current diagnostics of `path` from every server that serves it."""
        return (await self.diagnostics_many([path], save=save))[0]

    async def diagnostics_many(self, paths: list[Path], *, save: bool, light: bool = False
                               ) -> list[FileDiagnostics]:
        """Sync every path with its servers first, then collect each one's diagnostics.

        All files reach a server before it analyses any, so a rename across files does not
        report the half-way state of one file against the old text of another. `light`: from
        the light servers (see `availability`), as after a write.
        """
        reports = [FileDiagnostics(path) for path in paths]
        # Notebooks open in JupyterLab: their shared documents now, for `document_now` below.
        for path in paths:
            if is_notebook_path(path.name):
                await self._live_document(path)
        work: list[tuple[FileDiagnostics, LanguageServer, SourceDocument]] = []
        served: list[tuple[FileDiagnostics, list[LanguageServer]]] = []
        for report in reports:
            servers, reason = await self.servers_for(report.path, light=light)
            if not servers:
                report.available = False
                report.problems.append(reason)
            else:
                served.append((report, servers))
        read = await asyncio.to_thread(_read_all, self.document_now, [r.path for r, _ in served])
        documents: dict[int, SourceDocument] = {}
        for (report, servers), document in zip(served, read, strict=True):
            if isinstance(document, (FilesError, LspError)):
                report.available = False
                report.unreadable = document
                continue
            documents[id(report)] = document
            work.extend((report, server, document) for server in servers)
            if light:  # a heavier server running for `lsp` still hears of it, unasked
                self._sync_others(document, servers, save=save)
        servers = list({id(s): s for _, s, _ in work}.values())
        outcomes = await asyncio.gather(*(s.ensure_started() for s in servers),
                                        return_exceptions=True)
        failed = {id(s): o for s, o in zip(servers, outcomes, strict=True)
                  if isinstance(o, Exception)}
        pending = []
        for report, server, document in work:
            if id(server) in failed:
                report.fail(server, failed[id(server)])
                continue
            try:
                uri, version, changed = server.sync_now(document.served, document.text,
                                                        save=save)
            except ServerUnavailable as exc:
                report.fail(server, exc)
                continue
            waiter = server.expect_publish(uri, version) if changed else None
            pending.append((report, server, uri, version, changed, waiter))
        wait = self.limits.diagnostics_timeout_seconds
        least = SEVERITY_LEVELS[self.limits.diagnostics_min_severity]

        async def collect(report: FileDiagnostics, server: LanguageServer, uri: str,
                          version: int, changed: bool, waiter: asyncio.Future[None] | None) -> None:
            try:
                snapshot = await server.diagnostics(uri, version, changed, wait, waiter)
            except (ServerUnavailable, LspRequestError) as exc:
                report.fail(server, exc)
                return
            report.answered.append(server.spec.name)
            if snapshot.pending:
                report.pending.append(server.spec.name)
            rel = self.run.relpath(report.path)
            document = documents[id(report)]
            report.items.extend(item for d in snapshot.items if (d.severity or 1) <= least
                                if (item := document.diagnostic(rel, d, server.spec.name)))

        await asyncio.gather(*(collect(*item) for item in pending))
        for report in reports:
            report.items.sort(key=lambda d: (d.cell or 0, d.line, d.column))
            report.answered.sort()
        return reports

    # -- answers as results show them ----------------------------------------------------

    async def locations(self, found: list[tuple[str, types.Range]]) -> list[dict[str, Any]]:
        """Locations as results show them: the path as the server named it (relative when it
        can be), the 1-based line and the line's text. A file outside the server root (a
        symlinked folder can lead there) is marked `outside_root`, never read. Read in a
        worker thread, unless every place is in a small file already read and unchanged."""
        in_memory = self._locations_in_memory(found)
        return (in_memory if in_memory is not None
                else await asyncio.to_thread(self._locations_now, found))

    def _locations_in_memory(self, found: list[tuple[str, types.Range]]
                             ) -> list[dict[str, Any]] | None:
        """`_locations_now` on the loop, when each place is a plain file beneath the root
        (reached by no link) whose text is in memory and small; else None."""
        lines_of: dict[Path, list[str]] = {}
        for uri, _ in found:
            path = Path(to_fs_path(uri) or uri)
            if path in lines_of:
                continue
            if _SERVED_NOTEBOOK.match(path.name) or is_notebook_path(path.name):
                return None
            text = self._in_memory(path, document=False)
            if not isinstance(text, str) or len(text) > self.run.runtime.max_loop_read_bytes:
                return None
            lines_of[path] = text.splitlines()
        return [self._file_location(path, lines_of[path], range_.start)
                for path, range_ in ((Path(to_fs_path(uri) or uri), range_)
                                     for uri, range_ in found)]

    def _locations_now(self, found: list[tuple[str, types.Range]]) -> list[dict[str, Any]]:
        lines_of: dict[Path, list[str] | None] = {}
        entries = []
        for uri, range_ in found:
            path = Path(to_fs_path(uri) or uri)
            notebook = self.notebook_of(path)
            if notebook is not None:
                entries.append(self.cell_location(notebook, range_.start))
                continue
            if is_notebook_path(path.name):  # the server read the notebook file itself
                entries.append(self._native_cell_location(path, urlsplit(uri).fragment,
                                                          range_.start))
                continue
            real = self.contained(path)
            if real is not None and real not in lines_of:
                try:
                    lines_of[real] = self.read_now(real).splitlines()
                except FilesError:
                    lines_of[real] = []
            entries.append(self._file_location(path, lines_of[real] if real else None,
                                               range_.start))
        return entries

    def _file_location(self, path: Path, lines: list[str] | None, start: types.Position
                       ) -> dict[str, Any]:
        """A place in a plain file; `lines` None: the file is outside the root, never read."""
        entry: dict[str, Any] = {"path": self.run.relpath(path), "line": start.line + 1}
        if lines is None:
            entry["outside_root"] = True
        elif start.line < len(lines):
            entry["text"] = lines[start.line].strip()
        return entry

    def _native_cell_location(self, path: Path, fragment: str, start: types.Position
                              ) -> dict[str, Any]:
        """A place a server names in a notebook it read from disk itself (basedpyright does, in
        its workspace): `analysis.ipynb#2` is the notebook's third code cell as basedpyright
        counts them, the range within that cell. By cell, as any place in a notebook; never
        the file's JSON."""
        entry: dict[str, Any] = {"path": self.run.relpath(path), "line": start.line + 1}
        if self.contained(path) is None:
            return {**entry, "outside_root": True}
        try:
            document = self.document_now(path)
        except (FilesError, LspError):
            return entry
        cell = _native_cell(document, fragment)
        if cell is None:
            return entry
        lines = cell.lines
        text = lines[start.line] if start.line < len(lines) else ""
        column = char_index(text, start.character)
        return {**entry, "cell": cell.number, "column": column + 1, "text": text.strip()}

    def cell_location(self, document: SourceDocument, start: types.Position) -> dict[str, Any]:
        """A place in a notebook's virtual document as results show it: the notebook, the
        cell, the line and column within it (1-based) and the line's text."""
        lines = document.lines
        text = lines[start.line] if start.line < len(lines) else ""
        column = char_index(text, start.character)
        entry: dict[str, Any] = {"path": self.run.relpath(document.path)}
        place = document.notebook.cell_position(start.line, column) if document.notebook else None
        if place is not None:
            entry.update(cell=place.cell, line=place.line + 1, column=column + 1)
        else:  # between cells: only a server's odd answer lands here
            entry.update(line=start.line + 1, column=column + 1)
        entry["text"] = text.strip()
        return entry

    async def release(self) -> None:
        for key in list(self.servers):
            await self.pool.leave(key, self.run.id)
        self.servers.clear()


def _native_cell(document: SourceDocument, fragment: str) -> Cell | None:
    """The cell basedpyright numbers `fragment` (from 0 over the code cells, less those VS Code
    marks as another language), or None when the fragment is not such a number."""
    if document.file is None or not fragment.isdigit():
        return None
    raw_cells = document.file.notebook.data["cells"]
    code = [cell for cell, raw in zip(document.file.notebook.cells, raw_cells, strict=True)
            if cell.cell_type == "code"
            and ((raw.get("metadata") or {}).get("vscode") or {}).get("languageId",
                                                                       "python") == "python"]
    index = int(fragment)
    return code[index] if index < len(code) else None


def unique_locations(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`entries` without repeats: a server that reads notebooks itself names a place in one
    twice, through the notebook's file and through its virtual document."""
    seen: set[tuple[Any, ...]] = set()
    kept = []
    for entry in entries:
        key = tuple(entry.get(name) for name in ("path", "cell", "line", "column", "name"))
        if key not in seen:
            seen.add(key)
            kept.append(entry)
    return kept


def describe_location(entry: dict[str, Any]) -> str:
    """`path:line: text`, or `path:line (outside the server's root)`."""
    if entry.get("outside_root"):
        return f"{entry['path']}:{entry['line']} ({OUTSIDE_ROOT})"
    if "cell" in entry:  # `analysis.ipynb [cell 3] 4:5: text`
        place = f"{entry['path']} [cell {entry['cell']}] {entry['line']}:{entry['column']}"
        return f"{place}: {entry.get('text', '')}".rstrip()
    return f"{entry['path']}:{entry['line']}: {entry.get('text', '')}".rstrip()


def _read_all(read: Any, paths: list[Path]) -> list[Any]:
    texts: list[Any] = []
    for path in paths:
        try:
            texts.append(read(path))
        except (FilesError, LspError) as error:  # said in the file's report
            texts.append(error)
    return texts


def _list_sources(extensions: dict[Path, set[str]], max_files: int,
                  max_sources: int | None = None) -> set[Path] | None:
    """Files with the given suffixes under each root; None past `max_files` files of any kind
    (or, when given, past `max_sources` matching ones)."""
    budget = max_files
    found: set[Path] = set()
    for root, suffixes in extensions.items():
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d not in DEFAULT_SKIP_DIRS]
            budget -= len(files)
            if budget < 0:
                return None
            found.update(Path(folder, name) for name in files
                         if os.path.splitext(name)[1].lower() in suffixes)
            if max_sources is not None and len(found) > max_sources:
                return found
    return found
