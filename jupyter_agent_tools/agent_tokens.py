"""Agent tokens: credentials the user mints for agents, each bound to a ceiling and an expiry.

The server's own token is the user's. An agent gets an agent token instead (`jat_…`): it
reaches the agent-tools routes only (auth.py accepts it in our handlers' own `prepare`, so
jupyter_server's contents, kernels, sessions and terminals never know it), and a run opened or
joined with it can have at most its **ceiling**: a surface no wider, an approvals policy at
least as strict, a working directory inside the ceiling's, and the ceiling's space when it
names one (`Ceiling.check_request`, the one place that decides). Options a request leaves out
are the ceiling's.

Tokens are stored hashed (sha256 of the whole token) in a small SQLite file in Jupyter's data
directory, with the runs each token opened: a token sees only those. No file tool reaches that
folder (files/denied.py), also when a server's root holds it (started in the home folder); a
file configured elsewhere in the root is refused.
`jupyter agent-tools token create|list|revoke` works on the file directly; a running server reads
it through at every agent-token request, so a revoked token is refused at its next request.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import re
import secrets
import sqlite3
import stat
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from jupyter_core.paths import jupyter_data_dir
from traitlets import Unicode
from traitlets.config import LoggingConfigurable

from .files.denied import deny_folders, is_denied
from .runtime import Approvals, Surface

T = TypeVar("T")

#: Every agent token starts with it: how a handler tells one from the server's token.
PREFIX = "jat_"
#: `jat_<id>_<secret>`: the id names the stored row, the secret is what only the holder knows.
_TOKEN = re.compile(r"jat_([0-9a-f]{16})_([A-Za-z0-9_-]{43})\Z")
#: Surfaces from the narrowest: a run may have its ceiling's or a narrower one.
SURFACE_ORDER = (Surface.READONLY, Surface.PLAN, Surface.FULL)
#: Approvals policies from the least strict: a run may have its ceiling's or a stricter one.
APPROVALS_ORDER = (Approvals.AUTO, Approvals.ASK, Approvals.DENY)
DEFAULT_EXPIRES_SECONDS = 30 * 86_400
MAX_EXPIRES_SECONDS = 366 * 86_400
MAX_LABEL_CHARS = 200
_DURATION = re.compile(r"\s*(\d+)\s*([smhdw]?)\s*\Z")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 7 * 86_400}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tokens (
    id TEXT PRIMARY KEY,
    hash TEXT NOT NULL,
    label TEXT NOT NULL,
    surface TEXT NOT NULL,
    approvals TEXT NOT NULL,
    cwd TEXT NOT NULL,
    space TEXT,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS token_runs (
    token_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    PRIMARY KEY (token_id, run_id)
);
"""


def default_path() -> Path:
    """Where tokens are kept unless configured: Jupyter's data directory."""
    return Path(jupyter_data_dir()) / "agent_tools" / "tokens.sqlite3"


def parse_duration(text: str) -> int:
    """Seconds of `30`, `90s`, `15m`, `12h`, `7d`, `2w`; ValueError saying the form otherwise."""
    match = _DURATION.match(text)
    if not match or int(match.group(1)) <= 0:
        raise ValueError(f"{text!r} is no duration: give a positive number with a unit, "
                         "e.g. 90s, 15m, 12h, 7d, 2w.")
    return int(match.group(1)) * _UNIT_SECONDS[match.group(2)]


def normalize_cwd(cwd: str) -> str:
    """A ceiling's folder as a path relative to the server root, `.` for the root itself.

    ValueError for what cannot name a folder under the root (absolute, `..`, NUL)."""
    if "\x00" in cwd:
        raise ValueError("cwd holds a NUL byte.")
    path = PurePosixPath(cwd.strip() or ".")
    if path.is_absolute() or ".." in path.parts:
        raise ValueError(f"cwd {cwd!r} must be a folder relative to the server root (like "
                         "'data/'), without '..'.")
    return path.as_posix()


def check_expires(seconds: int | None) -> int:
    seconds = DEFAULT_EXPIRES_SECONDS if seconds is None else seconds
    if not 0 < seconds <= MAX_EXPIRES_SECONDS:
        raise ValueError(f"An agent token expires after 1 second to {MAX_EXPIRES_SECONDS // 86_400} "
                         f"days; {seconds} seconds is not allowed.")
    return seconds


class CeilingExceeded(Exception):
    """A run asked for more than its agent token's ceiling allows (the message names both)."""


@dataclass(frozen=True)
class Ceiling:
    """The most a run opened or joined with an agent token may have."""

    surface: Surface
    approvals: Approvals
    cwd: str = "."
    space: str | None = None

    def describe(self) -> str:
        narrower = SURFACE_ORDER[:SURFACE_ORDER.index(self.surface) + 1]
        stricter = APPROVALS_ORDER[APPROVALS_ORDER.index(self.approvals):]
        parts = [f"surface {' | '.join(s.value for s in reversed(narrower))}",
                 f"approvals {' | '.join(a.value for a in stricter)}",
                 f"cwd {self.cwd!r} or a folder inside it"]
        parts.append(f"space {self.space!r}" if self.space else "any space")
        return ", ".join(parts)

    def _refuse(self, what: str) -> CeilingExceeded:
        return CeilingExceeded(f"{what}: this agent token's ceiling allows {self.describe()}. "
                               "Ask within it (or leave the option out to get the ceiling's), "
                               "or ask the user for a token with a higher ceiling.")

    def check_request(self, root: Path, *, cwd: str | None, surface: Surface | None,
                      approvals: Approvals | None, space: str | None,
                      notebook: str | None = None, kernel_id: str | None = None
                      ) -> dict[str, Any]:
        """A run's options (`RunRequest`'s) with the ceiling's where they are left out (None):
        `{cwd, surface, approvals, space}`; CeilingExceeded when they ask for more. `root` is
        the server root (resolved) the cwd is relative to."""
        surface = surface or self.surface
        approvals = approvals or self.approvals
        if SURFACE_ORDER.index(surface) > SURFACE_ORDER.index(self.surface):
            raise self._refuse(f"surface {surface.value!r} is wider than the ceiling")
        if APPROVALS_ORDER.index(approvals) < APPROVALS_ORDER.index(self.approvals):
            raise self._refuse(f"approvals {approvals.value!r} is less strict than the ceiling")
        space = space if space is not None else self.space
        if self.space is not None and space != self.space:
            raise self._refuse(f"space {space!r} is not the ceiling's")
        cwd = cwd if cwd is not None else self.cwd
        inside = self._folder(root)
        if not _resolved(root, cwd).is_relative_to(inside):
            raise self._refuse(f"cwd {cwd[:200]!r} is outside the ceiling's folder")
        if notebook is not None and not _resolved(
                root, os.path.join(cwd, notebook)).is_relative_to(inside):
            raise self._refuse(f"notebook {notebook[:200]!r} is outside the ceiling's folder")
        if kernel_id is not None and inside != root:
            raise self._refuse("kernel_id names a kernel that no folder confines")
        return {"surface": surface, "approvals": approvals, "space": space, "cwd": cwd}

    def check_run(self, described: dict[str, Any], root: Path) -> None:
        """CeilingExceeded when an existing run (its descriptor) has more than the ceiling."""
        try:
            self.check_request(root, cwd=described["cwd"], surface=Surface(described["surface"]),
                               approvals=Approvals(described["approvals"]),
                               space=described.get("space"))
        except CeilingExceeded as exc:
            raise CeilingExceeded(f"Run {described['id']} has more than this token may join: "
                                  f"{exc}") from None

    def _folder(self, root: Path) -> Path:
        return _resolved(root, self.cwd)


def _resolved(root: Path, relative: str) -> Path:
    """`relative` under `root`, links followed (realpath: microseconds, fine on the loop)."""
    return Path(os.path.realpath(root / relative))


@dataclass(frozen=True)
class AgentToken:
    """A stored agent token (never its secret)."""

    id: str
    label: str
    ceiling: Ceiling
    created_at: float
    expires_at: float

    def expired(self, now: float | None = None) -> bool:
        return (time.time() if now is None else now) >= self.expires_at

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "label": self.label, "surface": self.ceiling.surface.value,
                "approvals": self.ceiling.approvals.value, "cwd": self.ceiling.cwd,
                "space": self.ceiling.space, "created_at": self.created_at,
                "expires_at": self.expires_at, "expired": self.expired()}


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _row_token(row: tuple[Any, ...]) -> AgentToken:
    token_id, label, surface, approvals, cwd, space, created_at, expires_at = row
    return AgentToken(id=token_id, label=label,
                      ceiling=Ceiling(Surface(surface), Approvals(approvals), cwd, space),
                      created_at=created_at, expires_at=expires_at)


_COLUMNS = "id, label, surface, approvals, cwd, space, created_at, expires_at"


class TokenStore:
    """The token file: plain SQLite calls, for the CLI directly and for a server on a thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._connection: sqlite3.Connection | None = None

    def connection(self) -> sqlite3.Connection:
        if self._connection is None:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            folder = os.lstat(self.path.parent)
            if not stat.S_ISDIR(folder.st_mode) or folder.st_uid != os.getuid():
                raise OSError(f"{self.path.parent} is not a folder of this user's")
            # Created 0600 before SQLite opens it: token hashes are nobody else's business.
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
            os.chmod(self.path, 0o600)
            connection = sqlite3.connect(self.path, check_same_thread=False,
                                         isolation_level=None)
            connection.execute("PRAGMA busy_timeout = 5000")
            connection.executescript(_SCHEMA)
            self._connection = connection
        return self._connection

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def create(self, label: str, ceiling: Ceiling,
               expires_seconds: int | None = None) -> tuple[AgentToken, str]:
        """A new token: its record and the token itself (shown once, stored only hashed)."""
        token_id = secrets.token_hex(8)
        secret = f"{PREFIX}{token_id}_{secrets.token_urlsafe(32)}"
        now = time.time()
        record = AgentToken(id=token_id, label=label[:MAX_LABEL_CHARS],
                            ceiling=Ceiling(ceiling.surface, ceiling.approvals,
                                            normalize_cwd(ceiling.cwd), ceiling.space),
                            created_at=now, expires_at=now + check_expires(expires_seconds))
        self.connection().execute(
            "INSERT INTO tokens (id, hash, label, surface, approvals, cwd, space, created_at, "
            "expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (record.id, _hash(secret), record.label, record.ceiling.surface.value,
             record.ceiling.approvals.value, record.ceiling.cwd, record.ceiling.space,
             record.created_at, record.expires_at))
        return record, secret

    def tokens(self) -> list[AgentToken]:
        rows = self.connection().execute(
            f"SELECT {_COLUMNS} FROM tokens ORDER BY created_at").fetchall()
        return [_row_token(row) for row in rows]

    def revoke(self, token_id: str) -> bool:
        """Forget the token (its runs' records too); False when there was none."""
        connection = self.connection()
        connection.execute("BEGIN IMMEDIATE")
        try:
            gone = connection.execute("DELETE FROM tokens WHERE id = ?", (token_id,)).rowcount
            connection.execute("DELETE FROM token_runs WHERE token_id = ?", (token_id,))
        finally:
            connection.execute("COMMIT")
        return gone > 0

    def verify(self, presented: str) -> AgentToken | None:
        """The token `presented` is, when it is stored and unexpired; else None."""
        match = _TOKEN.match(presented)
        if match is None:
            return None
        row = self.connection().execute(
            f"SELECT {_COLUMNS}, hash FROM tokens WHERE id = ?",
            (match.group(1),)).fetchone()
        if row is None or not hmac.compare_digest(row[-1], _hash(presented)):
            return None
        token = _row_token(row[:-1])
        return None if token.expired() else token

    def record_run(self, token_id: str, run_id: str) -> None:
        self.connection().execute(
            "INSERT OR IGNORE INTO token_runs (token_id, run_id) VALUES (?, ?)",
            (token_id, run_id))

    def runs_of(self, token_id: str) -> set[str]:
        return {row[0] for row in self.connection().execute(
            "SELECT run_id FROM token_runs WHERE token_id = ?", (token_id,))}


class AgentTokens(LoggingConfigurable):
    """A server's view of the token file: every SQLite call on one thread of its own."""

    path = Unicode(
        None, allow_none=True,
        help="The SQLite file where agent tokens are kept (hashed), with the runs each opened. "
        "Unset: <Jupyter data directory>/agent_tools/tokens.sqlite3, the file `jupyter "
        "agent-tools token create` writes; that folder is out of every file tool's reach "
        "(path_denied), wherever the server root is. A file set here must be outside the root "
        "(or in a folder file tools are denied): elsewhere in the root, agent tokens are "
        "refused and the log says why.",
    ).tag(config=True)

    def __init__(self, root: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # Jupyter's data folder of ours (tokens, the run store): no file tool reads or writes
        # it, also when the root holds it (a server started in the home folder).
        deny_folders(default_path().parent)
        path = Path(os.path.expanduser(self.path)) if self.path else default_path()
        self.store_path = Path(os.path.realpath(path))
        #: Why agent tokens cannot be used here, or None.
        self.failed: str | None = None
        if self.store_path.is_relative_to(root) and not is_denied(self.store_path):
            self.failed = (f"the agent token file {self.store_path} would be inside the server "
                           f"root {root}, where agents could read and write it; set "
                           "c.AgentTokens.path outside the root (or leave it unset)")
            self.log.warning("agent-tools: %s; agent tokens are refused.", self.failed)
        self._store = TokenStore(self.store_path)
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="agent-tools-tokens")
        self._lock = threading.Lock()

    async def _call(self, function: Any, *args: Any) -> Any:
        if self.failed is not None:
            raise OSError(self.failed)

        def locked() -> Any:
            with self._lock:
                return function(*args)

        return await asyncio.get_running_loop().run_in_executor(self._executor, locked)

    async def verify(self, presented: str) -> AgentToken | None:
        """The stored, unexpired token `presented` is; None for any other (or no usable file)."""
        try:
            return await self._call(self._store.verify, presented)
        except (OSError, sqlite3.Error) as exc:
            self.log.warning("agent-tools: cannot read agent tokens (%s)", exc)
            return None

    async def create(self, label: str, ceiling: Ceiling,
                     expires_seconds: int | None) -> tuple[AgentToken, str]:
        result: tuple[AgentToken, str] = await self._call(self._store.create, label, ceiling,
                                                          expires_seconds)
        return result

    async def tokens(self) -> list[AgentToken]:
        result: list[AgentToken] = await self._call(self._store.tokens)
        return result

    async def revoke(self, token_id: str) -> bool:
        return bool(await self._call(self._store.revoke, token_id))

    async def record_run(self, token_id: str, run_id: str) -> None:
        await self._call(self._store.record_run, token_id, run_id)

    async def runs_of(self, token_id: str) -> set[str]:
        result: set[str] = await self._call(self._store.runs_of, token_id)
        return result

    def close(self) -> None:
        self._executor.submit(self._store.close)
        self._executor.shutdown(wait=False)
