"""The run store: what lasts of runs across a restart (SQLite in Jupyter's data directory).

A run's descriptor, its transcript, its staged edits and its unanswered cards are written as
they change, so that after a restart (or a crash: `kill -9`) the runs are listed as ended by
it, their transcripts can be read and replayed, their staged edits accepted or discarded, and
their cards shown as ended. Kernels and debug sessions are processes: they do not last.

Every SQLite call happens on one writer thread, never on the event loop. Writes are queued
from the loop (a list append) and committed in batches, one transaction per batch; reads are
queued behind them on the same thread, so a read sees every write made before it. The queue
is bounded (`max_pending_writes`): past it a write is dropped and logged, never waited for.
The store holds only ended runs past its bounds: the oldest ended runs are removed past
`max_runs`, past `max_age_seconds` and past `max_bytes` of file.

Runs are kept per server root: two servers of one user share the file, and each lists only
the runs of its own root. At its start a server ends the runs that a server now gone left open
(each run names the server process that holds it), never those of another that still runs.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import sqlite3
import stat
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ..processes import owner_alive, owner_token
from .events import EventBus

T = TypeVar("T")

#: How a run ended: closed by its client, closed after it sat idle, or ended by a restart.
ENDED_BY = ("close", "idle", "restart")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    root TEXT NOT NULL,
    conversation_id TEXT,
    descriptor TEXT NOT NULL,
    created_at REAL NOT NULL,
    ended_at REAL,
    ended_by TEXT,
    transcript_dropped INTEGER NOT NULL DEFAULT 0,
    -- the server that holds it open (processes.owner_token): its restart ends it, not another's
    owner TEXT
);
CREATE INDEX IF NOT EXISTS runs_by_root ON runs (root, ended_at);
CREATE INDEX IF NOT EXISTS runs_by_conversation ON runs (root, conversation_id);
CREATE TABLE IF NOT EXISTS transcript (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    entry TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS edits (
    run_id TEXT NOT NULL,
    edit_id TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (run_id, edit_id)
);
CREATE TABLE IF NOT EXISTS cards (
    run_id TEXT NOT NULL,
    card_id TEXT NOT NULL,
    created_at REAL NOT NULL,
    card TEXT NOT NULL,
    PRIMARY KEY (run_id, card_id)
);
"""


@dataclass(frozen=True)
class StoreLimits:
    """The bounds of a run store (the runtime's config)."""

    max_runs: int
    max_age_seconds: float
    max_bytes: int
    max_pending_writes: int


_BYTES = "$agent_tools_bytes"


def _encode(value: Any) -> Any:
    """JSON for what json does not know: bytes (a staged edit's new content) as base64."""
    if isinstance(value, bytes | bytearray):
        return {_BYTES: base64.b64encode(value).decode("ascii")}
    if isinstance(value, Path):
        return str(value)
    return str(value)


def _decode(value: dict[str, Any]) -> Any:
    if len(value) == 1 and _BYTES in value:
        return base64.b64decode(value[_BYTES])
    return value


def dumps(value: Any) -> str:
    return json.dumps(value, default=_encode, separators=(",", ":"))


def loads(text: str) -> Any:
    return json.loads(text, object_hook=_decode)


_Write = tuple[str, tuple[Any, ...]]


class RunStore:
    """One SQLite file of runs, written and read on one thread of its own."""

    def __init__(self, path: Path, root: Path, limits: StoreLimits,
                 log: logging.Logger | None = None) -> None:
        self.path = path
        self.root = str(root)
        self.limits = limits
        self.log = log or logging.getLogger(__name__)
        self.dropped_writes = 0
        self.failed: str | None = None  # why the store could not be used, if it could not
        self._connection: sqlite3.Connection | None = None
        self._pending: list[_Write | Callable[[sqlite3.Connection], None]] = []
        self._lock = threading.Lock()
        self._flush_scheduled = False
        self._closed = False
        # Who holds its open runs: this server process and this store (embedded runtimes of one
        # process each have their own), so that only a holder that is gone ends them.
        self.owner = f"{owner_token()}/{uuid.uuid4().hex}"
        _LIVE_OWNERS.add(self.owner)
        # Its one thread starts now, before the loop needs it (submit starts a thread on the
        # caller's thread); opening and ending the runs a crash left open happen on it.
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="agent-tools-run-store")
        self._executor.submit(self._open)

    # -- the writer thread ---------------------------------------------------------------------

    def _open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            folder = os.lstat(self.path.parent)
            if not stat.S_ISDIR(folder.st_mode) or folder.st_uid != os.getuid():
                raise OSError(f"{self.path.parent} is not a folder of this user's")
            connection = sqlite3.connect(self.path, check_same_thread=False,
                                         isolation_level=None)
            os.chmod(self.path, 0o600)  # transcripts hold what the agent read and wrote
            connection.execute("PRAGMA busy_timeout = 5000")
            # Set before the first table exists (else a no-op): freed pages can be returned.
            connection.execute("PRAGMA auto_vacuum = INCREMENTAL")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")  # a crash loses no commit
            connection.executescript(_SCHEMA)
            connection.execute("BEGIN IMMEDIATE")
            # What a server of this root that is gone left open ended with it; another server
            # of the same root still running (a named server of the same user) keeps its own.
            left_open = connection.execute(
                "SELECT id, owner FROM runs WHERE root = ? AND ended_at IS NULL", (self.root,))
            ended = [(time.time(), run_id) for run_id, owner in left_open.fetchall()
                     if not (owner and _holder_alive(owner))]
            connection.executemany("UPDATE runs SET ended_at = ?, ended_by = 'restart' "
                                   "WHERE id = ?", ended)
            self._prune(connection)
            connection.execute("COMMIT")
            self._connection = connection
        except (OSError, sqlite3.Error) as exc:
            self.failed = f"{type(exc).__name__}: {exc}"
            self.log.warning("agent-tools: the run store %s cannot be used (%s); runs will not "
                             "survive a restart", self.path, self.failed)

    def _flush(self) -> None:
        with self._lock:
            batch, self._pending = self._pending, []
            self._flush_scheduled = False
        connection = self._connection
        if connection is None or not batch:
            return
        try:  # one transaction a batch
            connection.execute("BEGIN IMMEDIATE")
            for write in batch:
                if callable(write):
                    write(connection)
                else:
                    connection.execute(*write)
            connection.execute("COMMIT")
        except (sqlite3.Error, ValueError, TypeError) as exc:
            self.log.warning("agent-tools: %d run store write(s) failed: %s", len(batch), exc)
            if connection.in_transaction:
                connection.rollback()

    def _prune(self, connection: sqlite3.Connection) -> None:
        """Remove ended runs past the store's bounds: age, count, then size; oldest first."""
        limits = self.limits
        ended = "SELECT id FROM runs WHERE ended_at IS NOT NULL"
        doomed: list[str] = []
        if limits.max_age_seconds > 0:
            cutoff = time.time() - limits.max_age_seconds
            doomed += [row[0] for row in connection.execute(
                ended + " AND ended_at < ?", (cutoff,))]
        if limits.max_runs >= 0:
            doomed += [row[0] for row in connection.execute(
                ended + " ORDER BY ended_at DESC LIMIT -1 OFFSET ?", (limits.max_runs,))]
        if doomed:
            self._delete_runs(connection, sorted(set(doomed)))
        while limits.max_bytes > 0 and self._used_bytes(connection) > limits.max_bytes:
            oldest = [row[0] for row in connection.execute(
                ended + " ORDER BY ended_at LIMIT 10")]
            if not oldest:
                self.log.warning("agent-tools: the run store holds %d bytes of open runs, more "
                                 "than c.Runtime.max_store_mb", self._used_bytes(connection))
                break
            self._delete_runs(connection, oldest)

    @staticmethod
    def _used_bytes(connection: sqlite3.Connection) -> int:
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        free = connection.execute("PRAGMA freelist_count").fetchone()[0]
        size = connection.execute("PRAGMA page_size").fetchone()[0]
        return int((pages - free) * size)

    @staticmethod
    def _delete_runs(connection: sqlite3.Connection, run_ids: list[str]) -> None:
        for table, column in (("transcript", "run_id"), ("edits", "run_id"),
                              ("cards", "run_id"), ("runs", "id")):
            connection.executemany(f"DELETE FROM {table} WHERE {column} = ?",
                                   [(run_id,) for run_id in run_ids])
        connection.execute("PRAGMA incremental_vacuum").fetchall()

    # -- writes (from the loop: queued, never waited for) --------------------------------------

    def _write(self, write: _Write | Callable[[sqlite3.Connection], None]) -> None:
        with self._lock:
            if self._closed:
                return
            if len(self._pending) >= self.limits.max_pending_writes:
                self.dropped_writes += 1
                if self.dropped_writes == 1 or self.dropped_writes % 1000 == 0:
                    self.log.warning("agent-tools: the run store is %d writes behind "
                                     "(c.Runtime.max_pending_store_writes); %d dropped so far",
                                     len(self._pending), self.dropped_writes)
                return
            self._pending.append(write)
            if self._flush_scheduled:
                return
            self._flush_scheduled = True
        self._executor.submit(self._flush)

    def run_opened(self, run_id: str, conversation_id: str | None, descriptor: dict[str, Any],
                   created_at: float) -> None:
        def write(connection: sqlite3.Connection) -> None:
            connection.execute(
                "INSERT OR REPLACE INTO runs "
                "(id, root, conversation_id, descriptor, created_at, owner) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (run_id, self.root, conversation_id, dumps(descriptor), created_at,
                 self.owner))
        self._write(write)

    def run_ended(self, run_id: str, ended_by: str, transcript_dropped: int) -> None:
        ended_at = time.time()

        def write(connection: sqlite3.Connection) -> None:
            connection.execute(
                "UPDATE runs SET ended_at = ?, ended_by = ?, transcript_dropped = ? "
                "WHERE id = ? AND ended_at IS NULL",
                (ended_at, ended_by, transcript_dropped, run_id))
            self._prune(connection)
        self._write(write)

    def entry_finished(self, run_id: str, seq: int, entry: dict[str, Any],
                       dropped: int | None = None) -> None:
        """Keep one finished call; `dropped` (when it changed): the calls the run's transcript
        no longer holds, which the store drops too."""
        def write(connection: sqlite3.Connection) -> None:
            connection.execute("INSERT OR REPLACE INTO transcript (run_id, seq, entry) "
                               "VALUES (?, ?, ?)", (run_id, seq, dumps(entry)))
            if dropped:
                connection.execute("DELETE FROM transcript WHERE run_id = ? AND seq < ?",
                                   (run_id, dropped))
                connection.execute("UPDATE runs SET transcript_dropped = ? WHERE id = ?",
                                   (dropped, run_id))
        self._write(write)

    def edit_staged(self, run_id: str, edit_id: str, status: str, created_at: float,
                    record: dict[str, Any]) -> None:
        def write(connection: sqlite3.Connection) -> None:
            connection.execute(
                "INSERT OR REPLACE INTO edits (run_id, edit_id, status, created_at, record) "
                "VALUES (?, ?, ?, ?, ?)", (run_id, edit_id, status, created_at, dumps(record)))
        self._write(write)

    def edit_status(self, run_id: str, edit_id: str, status: str) -> None:
        self._write(("UPDATE edits SET status = ? WHERE run_id = ? AND edit_id = ?",
                     (status, run_id, edit_id)))

    def edit_forgotten(self, run_id: str, edit_id: str) -> None:
        self._write(("DELETE FROM edits WHERE run_id = ? AND edit_id = ?", (run_id, edit_id)))

    def card_opened(self, run_id: str, card_id: str, created_at: float,
                    card: dict[str, Any]) -> None:
        def write(connection: sqlite3.Connection) -> None:
            connection.execute("INSERT OR REPLACE INTO cards (run_id, card_id, created_at, card) "
                               "VALUES (?, ?, ?, ?)", (run_id, card_id, created_at, dumps(card)))
        self._write(write)

    def card_closed(self, run_id: str, card_id: str) -> None:
        self._write(("DELETE FROM cards WHERE run_id = ? AND card_id = ?", (run_id, card_id)))

    def forget_run(self, run_id: str) -> None:
        """Remove an ended run and all it kept."""
        self._write(lambda connection: self._delete_runs(connection, [run_id]))

    # -- reads (awaited: queued behind the writes made before them) ----------------------------

    async def _read(self, read: Callable[[sqlite3.Connection], T], empty: T) -> T:
        def job() -> T:
            connection = self._connection
            if connection is None:
                return empty
            try:
                return read(connection)
            except (sqlite3.Error, ValueError) as exc:  # a file damaged or of another version
                self.log.warning("agent-tools: reading the run store failed: %s", exc)
                return empty
        if self._closed:
            return empty
        # Behind the flush of every write queued so far: one thread, first in, first out.
        return await asyncio.wrap_future(self._executor.submit(job))

    @staticmethod
    def _ended(row: tuple[Any, ...]) -> dict[str, Any]:
        descriptor, ended_at, ended_by, dropped, *staged = row
        ended = {**loads(descriptor), "state": "ended", "ended_at": ended_at,
                 "ended_by": ended_by, "transcript_dropped": dropped}
        if staged:  # its edits still waiting for a human's accept or discard
            ended["staged_edits"] = staged[0]
        return ended

    # An ended run's columns, with how many of its edits are still staged.
    _ENDED_COLUMNS = ("descriptor, ended_at, ended_by, transcript_dropped, (SELECT COUNT(*) "
                      "FROM edits WHERE edits.run_id = runs.id AND edits.status = 'staged')")

    async def ended_runs(self) -> list[dict[str, Any]]:
        """The descriptors of this root's ended runs, oldest first."""
        def read(connection: sqlite3.Connection) -> list[dict[str, Any]]:
            return [self._ended(row) for row in connection.execute(
                f"SELECT {self._ENDED_COLUMNS} FROM runs "
                "WHERE root = ? AND ended_at IS NOT NULL ORDER BY created_at", (self.root,))]
        return await self._read(read, [])

    async def ended_run(self, run_id: str) -> dict[str, Any] | None:
        def read(connection: sqlite3.Connection) -> dict[str, Any] | None:
            row = connection.execute(
                f"SELECT {self._ENDED_COLUMNS} FROM runs "
                "WHERE id = ? AND root = ? AND ended_at IS NOT NULL", (run_id, self.root)
            ).fetchone()
            return None if row is None else self._ended(row)
        return await self._read(read, None)

    async def last_ended_in_conversation(self, conversation_id: str
                                         ) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """The latest ended run of this root with `conversation_id`, and its transcript."""
        def read(connection: sqlite3.Connection
                 ) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
            row = connection.execute(
                "SELECT descriptor, ended_at, ended_by, transcript_dropped, id FROM runs "
                "WHERE root = ? AND conversation_id = ? AND ended_at IS NOT NULL "
                "ORDER BY created_at DESC LIMIT 1", (self.root, conversation_id)).fetchone()
            if row is None:
                return None
            return self._ended(row[:4]), self._transcript(connection, row[4])
        return await self._read(read, None)

    @staticmethod
    def _transcript(connection: sqlite3.Connection, run_id: str) -> list[dict[str, Any]]:
        return [loads(row[0]) for row in connection.execute(
            "SELECT entry FROM transcript WHERE run_id = ? ORDER BY seq", (run_id,))]

    async def transcript(self, run_id: str) -> list[dict[str, Any]]:
        return await self._read(lambda connection: self._transcript(connection, run_id), [])

    async def edits(self, run_id: str) -> list[tuple[str, dict[str, Any]]]:
        """(status, record) of each edit the run staged, in the order staged."""
        def read(connection: sqlite3.Connection) -> list[tuple[str, dict[str, Any]]]:
            return [(row[0], loads(row[1])) for row in connection.execute(
                "SELECT status, record FROM edits WHERE run_id = ? ORDER BY created_at",
                (run_id,))]
        return await self._read(read, [])

    async def cards(self, run_id: str) -> list[dict[str, Any]]:
        """The cards the run left unanswered, oldest first."""
        def read(connection: sqlite3.Connection) -> list[dict[str, Any]]:
            return [loads(row[0]) for row in connection.execute(
                "SELECT card FROM cards WHERE run_id = ? ORDER BY created_at", (run_id,))]
        return await self._read(read, [])

    async def flushed(self) -> None:
        """Wait until every write made so far is committed."""
        await self._read(lambda _connection: None, None)

    async def close(self) -> None:
        """Commit what is queued and close the file (once; later calls do nothing)."""
        if self._closed:
            return
        await self.flushed()
        with self._lock:
            self._closed = True
        _LIVE_OWNERS.discard(self.owner)

        def close() -> None:
            if self._connection is not None:
                self._connection.close()
                self._connection = None
        await asyncio.wrap_future(self._executor.submit(close))
        self._executor.shutdown(wait=False)


#: The run stores of this process still open (their `owner`).
_LIVE_OWNERS: set[str] = set()


def _holder_alive(owner: str) -> bool:
    """Whether the store that holds a run open is still there: in another process, whether that
    process runs; in this one, whether that store is still open."""
    process, _, _ = owner.partition("/")
    if process == owner_token():
        return owner in _LIVE_OWNERS
    return owner_alive(process)


@dataclass
class EndedRun:
    """A minimal handle on an ended run, for the code that resolves its staged edits as a
    live run's (the structural session): its id, the runtime (root, server), its record in
    the store, and an event bus nobody listens to."""

    id: str
    runtime: Any
    record: RunRecorder
    events: EventBus = field(default_factory=EventBus)


class RunRecorder:
    """What one run writes to the store as it changes (a no-op without a store)."""

    def __init__(self, store: RunStore | None, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self._dropped = 0

    def __bool__(self) -> bool:
        return self.store is not None

    def opened(self, conversation_id: str | None, descriptor: dict[str, Any],
               created_at: float) -> None:
        if self.store is not None:
            self.store.run_opened(self.run_id, conversation_id, descriptor, created_at)

    def ended(self, ended_by: str, transcript_dropped: int) -> None:
        if self.store is not None:
            self.store.run_ended(self.run_id, ended_by, transcript_dropped)

    def entry_finished(self, seq: int, entry: dict[str, Any], dropped: int) -> None:
        if self.store is not None:
            changed = dropped if dropped != self._dropped else None
            self._dropped = dropped
            self.store.entry_finished(self.run_id, seq, entry, changed)

    def edit_staged(self, edit_id: str, status: str, created_at: float,
                    record: dict[str, Any]) -> None:
        if self.store is not None:
            self.store.edit_staged(self.run_id, edit_id, status, created_at, record)

    def edit_status(self, edit_id: str, status: str) -> None:
        if self.store is not None:
            self.store.edit_status(self.run_id, edit_id, status)

    def edit_forgotten(self, edit_id: str) -> None:
        if self.store is not None:
            self.store.edit_forgotten(self.run_id, edit_id)

    def card_opened(self, card_id: str, created_at: float, card: dict[str, Any]) -> None:
        if self.store is not None:
            self.store.card_opened(self.run_id, card_id, created_at, card)

    def card_closed(self, card_id: str) -> None:
        if self.store is not None:
            self.store.card_closed(self.run_id, card_id)
