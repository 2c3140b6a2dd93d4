"""The atomic multi-file writer: every file changes, or none does, and only inside the root."""

from __future__ import annotations

import errno
import hashlib
import itertools
import os
import re
import secrets
import stat
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .contained import (
    FileIdentity,
    OpenedFolder,
    open_file_in,
    open_folder,
    refuse_denied,
    shown_name,
)
from .errors import OsRefused, StaleFile
from .text import UTF8, detect_encoding, encode_text

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC
# A temporary name keeps the target's name (walkers and humans see what it is for),
# cut so that the prefix and suffix still fit in a 255-byte name.
_TEMP_STEM_BYTES = 200


@dataclass
class _Target:
    path: Path
    text: str | bytes | None  # as given; text is encoded in _prepare, in the file's encoding
    shown: str
    content: bytes | None = None
    folder: OpenedFolder | None = None
    original: bytes | None = None
    mode: int | None = None
    temp: str | None = None
    backup: str | None = None  # a second name of the original file, to put it back as it was
    # With a base to compare against: the original file, kept open, and its size and times
    # once checked, to see a write into it up to the moment it is replaced (and after).
    checked: bool = False
    fd: int | None = None
    signature: tuple[int, int, int, int] | None = None


def write_files_atomically(
    changes: Mapping[Path, str | bytes | None],
    *,
    root: Path | None = None,
    expected: Mapping[Path, FileIdentity | None] | None = None,
    based_on: Mapping[Path, str | None] | None = None,
    relpath: Callable[[Path], str] | None = None,
) -> list[Path]:
    """Write (str/bytes) or delete (None) every path in `changes`, all or nothing.

    Returns the paths it created (written, and absent before).

    Each target is re-resolved at the moment of writing: its folders are opened one by
    one from `root` (default: the file system's root) without following symbolic links,
    and every write, rename and delete goes through the folder's descriptor. A folder or
    file that became a link since the path was checked raises LinkSwapped and nothing is
    written anywhere. With `expected`, a file whose identity (device, inode, folder) is no
    longer the one given raises StaleFile. An OS failure raises OsRefused (action "write").

    With `based_on` (a path -> the sha256, hex, of the bytes the change was computed on; None:
    the file did not exist), the write is a compare-and-swap: a file whose bytes are not those
    any more (written meanwhile by anyone: another run, the user's editor, a shell) raises
    StaleFile(changed=True) and nothing is written anywhere. The bytes are compared when the
    file is opened for the write, its size and times again right before it is replaced, and the
    replaced file once more after every target is in place: a write into it that landed in
    between (Jupyter's contents API writes a file in place) puts every file back as it was, the
    other writer's bytes included, and raises StaleFile. A file based on nothing is created
    only if no file took its name meanwhile.

    Text (str) is written in the encoding the existing file is read in (`files.text`: UTF-8,
    Windows-1252 or Latin-1), so the bytes a change did not touch stay as they were; text
    that encoding cannot hold raises NotEncodable and nothing is written. New files are
    UTF-8. Bytes are written as given.

    New content goes first to a temporary file beside its target (new files get mode
    0o666 less the umask, existing ones keep theirs); then the targets are replaced one
    by one. If any step fails, every file already replaced is restored (or removed, if it
    did not exist) and the error names the file as `relpath` does (default: relative to
    the root), never the temporary one.
    """
    top = root if root is not None else Path("/")
    if relpath is None:
        relpath = (lambda path: shown_name(top, path)) if root is not None else Path.as_posix
    targets = [_Target(path, content, relpath(path)) for path, content in changes.items()]
    current: _Target | None = None
    done: list[_Target] = []
    try:
        for current in targets:
            # The last target is committed last: no later failure can need to undo it.
            _prepare(top, current, (expected or {}).get(current.path, _UNCHECKED),
                     (based_on or {}).get(current.path, _UNCHECKED),
                     keep_backup=current is not targets[-1])
        for current in targets:
            _commit(current)
            done.append(current)
        current = None
        for target in targets:
            _verify(target)
        _drop_backups(targets)
    except OSError as exc:
        _undo(targets, done)
        name = current.shown if current is not None else "a file"
        raise OsRefused(name, exc, "write") from None
    except BaseException:
        _undo(targets, done)
        raise
    finally:
        for target in targets:
            if target.fd is not None:
                os.close(target.fd)
                target.fd = None
            if target.folder is not None:
                target.folder.close()
    return [t.path for t in targets if t.content is not None and t.original is None]


_UNCHECKED = object()


def _signature(info: os.stat_result) -> tuple[int, int, int, int]:
    return info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def _prepare(root: Path, target: _Target, identity: object, base: object, *,
             keep_backup: bool) -> None:
    """Open the target's folder, keep its original bytes and mode, write the temp file."""
    refuse_denied(target.path, target.shown)
    target.folder = open_folder(root, target.path.parent, create=target.text is not None,
                                action="write", shown=target.shown)
    _sweep_once_in_a_while(target.folder.fd)
    fd = open_file_in(target.folder.fd, target.path.name, target.shown, action="write")
    if identity is not _UNCHECKED:
        now = FileIdentity.of_descriptors(fd, target.folder.fd) if fd is not None else None
        if now != identity:
            if fd is not None:
                os.close(fd)
            raise StaleFile(target.shown)
    target.checked = base is not _UNCHECKED
    if fd is None and target.checked and base is not None:
        raise StaleFile(target.shown, changed=True)  # gone since the change read it
    if fd is not None:
        if target.checked:
            target.fd = fd  # kept open (closed by the caller): the file as it was
        with os.fdopen(fd, "rb", closefd=not target.checked) as handle:
            target.mode = os.fstat(fd).st_mode & 0o7777
            target.original = handle.read()
        if target.checked:
            if base is None or hashlib.sha256(target.original).hexdigest() != base:
                raise StaleFile(target.shown, changed=True)
        if keep_backup or target.checked:
            target.backup = _link_backup(target.folder.fd, target.path.name)
        if target.checked:  # after the link, which changes the file's ctime
            target.signature = _signature(os.fstat(fd))
    if isinstance(target.text, str):
        encoding = detect_encoding(target.original) if target.original is not None else UTF8
        target.content = encode_text(target.text, encoding, target.shown)
    else:
        target.content = target.text
    if target.content is not None:
        target.temp = _write_temp(target.folder.fd, target.path.name, target.content, target.mode)


# The writer's own scratch files (a temp copy, a backup link): searches never report them.
SCRATCH_GLOBS = (".*.[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f].tmp",
                 ".*.[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f].orig")
SCRATCH_NAME = re.compile(r"\..+\.[0-9a-f]{8}\.(?:tmp|orig)", re.DOTALL)

# A scratch file whose inode has not changed for this long belongs to no write in progress (a
# write lasts well under a second): it is what a crash left, and goes. ctime, not mtime: a
# backup is a hard link, with the original's old mtime but a ctime of its linking.
STALE_SCRATCH_SECONDS = 600.0
# A folder is looked through for leftovers at most this often (a listing costs).
_SWEEP_EVERY_SECONDS = 60.0
_MAX_SWEPT_FOLDERS = 4096
_MAX_SWEPT_ENTRIES = 100_000
_swept: dict[tuple[int, int], float] = {}
_swept_lock = threading.Lock()


def remove_stale_scratch(folder_fd: int, *, older_than: float | None = None) -> list[str]:
    """Remove what interrupted writes left in a folder: regular files named as the writer
    names its scratch files (SCRATCH_NAME), unchanged for `older_than` seconds (default:
    STALE_SCRATCH_SECONDS). The names removed."""
    removed: list[str] = []
    older_than = STALE_SCRATCH_SECONDS if older_than is None else older_than
    now = time.time()
    try:
        # The names only, at most _MAX_SWEPT_ENTRIES of them: a write into a huge folder
        # does not pay for listing all of it.
        with os.scandir(folder_fd) as entries:  # scandir reads a duplicate of the descriptor
            names = [entry.name for entry in itertools.islice(entries, _MAX_SWEPT_ENTRIES)]
    except OSError:
        return removed
    for name in names:
        if not SCRATCH_NAME.fullmatch(name):
            continue
        try:
            info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and now - info.st_ctime >= older_than:
                os.unlink(name, dir_fd=folder_fd)
                removed.append(name)
        except OSError:
            continue  # gone meanwhile, or not ours to remove
    return removed


def _sweep_once_in_a_while(folder_fd: int) -> None:
    """remove_stale_scratch in the folder a write goes to, unless done there lately."""
    try:
        info = os.fstat(folder_fd)
    except OSError:
        return
    key, now = (info.st_dev, info.st_ino), time.monotonic()
    with _swept_lock:
        if now - _swept.get(key, -_SWEEP_EVERY_SECONDS) < _SWEEP_EVERY_SECONDS:
            return
        if len(_swept) >= _MAX_SWEPT_FOLDERS:
            _swept.clear()
        _swept[key] = now
    remove_stale_scratch(folder_fd)


def _hidden_name(name: str, suffix: str) -> str:
    stem = os.fsdecode(os.fsencode(name)[:_TEMP_STEM_BYTES])
    return f".{stem}.{secrets.token_hex(4)}.{suffix}"


def _link_backup(folder_fd: int, name: str) -> str | None:
    """A hard link to the original: a rollback then restores the very file (inode, mode,
    owner), so a staged edit's identity check still recognises it. None where the file
    system has no hard links; the rollback then rewrites the original bytes."""
    backup = _hidden_name(name, "orig")
    try:
        os.link(name, backup, src_dir_fd=folder_fd, dst_dir_fd=folder_fd, follow_symlinks=False)
    except OSError:
        return None
    return backup


def _drop_backups(targets: list[_Target]) -> None:
    for target in targets:
        if target.backup is not None and target.folder is not None:
            try:
                os.unlink(target.backup, dir_fd=target.folder.fd)
            except OSError:
                pass  # every file is written; a stray hidden link is no reason to fail
            target.backup = None


def _write_temp(folder_fd: int, name: str, data: bytes, mode: int | None) -> str:
    temp = _hidden_name(name, "tmp")
    # 0o666 is what open() gives any new file: the umask makes it 0o644 typically.
    fd = os.open(temp, _TEMP_FLAGS, 0o666, dir_fd=folder_fd)
    try:
        if mode is not None:
            os.fchmod(fd, mode)  # an existing file keeps its mode, umask or not
        with os.fdopen(fd, "wb", closefd=False) as handle:
            handle.write(data)
    except BaseException:
        os.close(fd)
        os.unlink(temp, dir_fd=folder_fd)
        raise
    os.close(fd)
    return temp


def _commit(target: _Target) -> None:
    assert target.folder is not None
    folder_fd, name = target.folder.fd, target.path.name
    if target.checked:
        _check_in_place(target)
        if target.fd is None and target.content is not None:
            # Based on no file: created only if nobody created one meanwhile (a link fails
            # on a name that exists, where a rename would replace it).
            assert target.temp is not None
            try:
                os.link(target.temp, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd,
                        follow_symlinks=False)
            except FileExistsError:
                raise StaleFile(target.shown, changed=True) from None
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
                    raise
                # No hard links here: replaced, as any write is.
            else:
                os.unlink(target.temp, dir_fd=folder_fd)
                target.temp = None
                return
    if target.content is None:
        if target.original is not None:
            os.unlink(name, dir_fd=folder_fd)
        return
    assert target.temp is not None
    os.replace(target.temp, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
    target.temp = None


def _check_in_place(target: _Target) -> None:
    """StaleFile unless the target's name still holds the file the change was checked
    against, unwritten since (or still no file, for a file the change creates)."""
    assert target.folder is not None
    try:
        now: os.stat_result | None = os.stat(target.path.name, dir_fd=target.folder.fd,
                                             follow_symlinks=False)
    except FileNotFoundError:
        now = None
    if target.fd is None:
        if now is not None:
            raise StaleFile(target.shown, changed=True)
        return
    if now is None or _signature(now) != target.signature:
        raise StaleFile(target.shown, changed=True)


def _verify(target: _Target) -> None:
    """After the replace: StaleFile if the replaced file was written in the meantime (between
    the last check and the replace), so that everything is put back, its bytes included."""
    if target.fd is None:
        return
    assert target.original is not None
    after = os.pread(target.fd, len(target.original) + 1, 0)
    # Not the ctime: replacing the name took a link of the file away.
    if after != target.original or (
            _signature(os.fstat(target.fd))[:3] != (target.signature or ())[:3]):
        if target.backup is None:  # no hard links here: the rollback writes what it holds now
            size = os.fstat(target.fd).st_size
            target.original = os.pread(target.fd, size, 0)
        raise StaleFile(target.shown, changed=True)


def _undo(targets: list[_Target], done: list[_Target]) -> None:
    """Put back what `done` changed, drop temporary files and created folders."""
    for target in reversed(done):
        assert target.folder is not None
        folder_fd, name = target.folder.fd, target.path.name
        try:
            if target.backup is not None:
                os.replace(target.backup, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
                target.backup = None
            elif target.original is None:
                os.unlink(name, dir_fd=folder_fd)
            else:
                temp = _write_temp(folder_fd, name, target.original, target.mode)
                os.replace(temp, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
        except OSError:
            pass  # best effort: the error being raised says what failed first
    for target in reversed(targets):
        if target.folder is None:
            continue
        for leftover in (target.temp, target.backup):
            if leftover is not None:
                try:
                    os.unlink(leftover, dir_fd=target.folder.fd)
                except OSError:
                    pass
        target.temp = target.backup = None
        target.folder.remove_created()
