"""Opening files under the root at the moment of use, never following a symbolic link.

A path is checked when a tool parses it (`resolve_inside`), but a folder can be swapped
for a link between that check and the read or write. So reads and writes open every
folder from the root down with O_NOFOLLOW|O_DIRECTORY and the file itself with
O_NOFOLLOW, relative to its folder's descriptor: what was checked is what is used.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from .denied import denied_reason
from .errors import (
    Action,
    FileMissing,
    FilesError,
    LinkSwapped,
    NotAFile,
    NotText,
    OsRefused,
    OutsideRoot,
    PathDenied,
    TooLarge,
)
from .paths import is_under, real_root
from .text import DecodedText

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
# O_NONBLOCK: opening a named pipe must not hang the call; regular files ignore it.
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
_SNIFF_BYTES = 8192


def shown_name(root: Path, path: Path) -> str:
    """How errors name a file: relative to the root (never a temporary file's name)."""
    try:
        return path.relative_to(real_root(root)).as_posix() or "."
    except ValueError:
        return path.as_posix()


def refuse_denied(path: Path, shown: str) -> None:
    """PathDenied when `path` (absolute, normal) is one of Jupyter's credentials
    (`files/denied.py`): checked again where bytes are read or written, whatever the caller
    checked when it parsed the path."""
    reason = denied_reason(path)
    if reason is not None:
        raise PathDenied(shown, reason)


def parts_under_root(root: Path, path: Path) -> tuple[str, ...]:
    """The names leading from the root to `path`; OutsideRoot when it is not under it.

    `path` is what `resolve_inside` returned: absolute and free of links when checked, so
    the test is lexical; the descent then proves no name has become a link since.
    """
    top = real_root(root)
    if not is_under(top, path):
        raise OutsideRoot(path.as_posix(), top)
    return path.relative_to(top).parts


@dataclass
class OpenedFolder:
    """A folder's descriptor, and the folders created on the way (to undo on failure)."""

    fd: int
    created: list[tuple[int, str]]

    def close(self) -> None:
        os.close(self.fd)
        _close_all(self.created)

    def remove_created(self) -> None:
        """Remove the folders this open created (emptied again by the caller's rollback)."""
        _remove_all(self.created)


def _remove_all(created: list[tuple[int, str]]) -> None:
    for parent, name in reversed(created):
        try:
            os.rmdir(name, dir_fd=parent)
        except OSError:
            pass  # something else put a file there meanwhile: keep it


def _close_all(created: list[tuple[int, str]]) -> None:
    for parent, _ in created:
        os.close(parent)


def open_folder(root: Path, folder: Path, *, create: bool = False,
                action: Action = "read", shown: str | None = None) -> OpenedFolder:
    """Open `folder` (under `root`) one name at a time from the root, following no link.

    With `create`, missing folders are made (mode 0o777 less the umask). A name that is
    now a symbolic link raises LinkSwapped; an OS error OsRefused, naming `shown` (the
    file the caller is after, as the user knows it) or the folder.
    """
    shown = shown or shown_name(root, folder)
    names = parts_under_root(root, folder)
    fd = os.open(real_root(root), FOLDER_FLAGS & ~os.O_NOFOLLOW)  # the root may be a link
    created: list[tuple[int, str]] = []
    try:
        for name in names:
            try:
                next_fd = _open_subfolder(fd, name, created if create else None)
            except (NotADirectoryError, FileNotFoundError) as refused:
                if _swapped(fd, name, missing=isinstance(refused, FileNotFoundError)):
                    raise LinkSwapped(shown, action) from None
                raise
            os.close(fd)
            fd = next_fd
    except BaseException as exc:
        os.close(fd)
        _remove_all(created)
        _close_all(created)
        if isinstance(exc, OSError):
            raise OsRefused(shown, exc, action) from None
        raise
    return OpenedFolder(fd, created)


def _open_subfolder(folder_fd: int, name: str, created: list[tuple[int, str]] | None) -> int:
    """The descriptor of the folder `name` in a folder, following no link. With `created`,
    a missing folder is made and recorded there (to undo on failure)."""
    try:
        return os.open(name, FOLDER_FLAGS, dir_fd=folder_fd)
    except FileNotFoundError:
        if created is None:
            raise
    try:
        os.mkdir(name, 0o777, dir_fd=folder_fd)
        created.append((os.dup(folder_fd), name))
    except FileExistsError:
        pass  # another writer made it meanwhile: use it, it is not ours to undo
    return os.open(name, FOLDER_FLAGS, dir_fd=folder_fd)


def _swapped(folder_fd: int, name: str, *, missing: bool) -> bool:
    """Whether a folder that failed to open as missing (or as no folder) is being swapped.

    A folder or a link there now means it changed during the call. After "no folder", a name
    gone again is a swap too: a lookup racing a rename sees neither side for an instant.
    """
    try:
        mode = os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode
    except OSError:
        return not missing
    return stat.S_ISLNK(mode) or stat.S_ISDIR(mode)


def _is_link(folder_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def open_file_in(folder_fd: int, name: str, shown: str, *, action: Action = "read") -> int | None:
    """A read descriptor of the regular file `name` in a folder, None if it does not exist.

    A link raises LinkSwapped; a folder, pipe or device NotAFile.
    """
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=folder_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP or _is_link(folder_fd, name):
            raise LinkSwapped(shown, action) from None
        raise OsRefused(shown, exc, action) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise NotAFile(shown, is_folder=stat.S_ISDIR(mode))
    return fd


def read_bytes_inside(root: Path, path: Path, max_bytes: int | None = None, *,
                      shown: str | None = None) -> bytes:
    """The bytes of the regular file `path` under `root`, opened without following links.

    FileMissing when it does not exist; TooLarge when it is over `max_bytes`. Errors name
    the file as `shown` (default: relative to the root).
    """
    shown = shown or shown_name(root, path)
    if path == real_root(root):
        raise NotAFile(shown, is_folder=True)
    refuse_denied(path, shown)
    folder = open_folder(root, path.parent, shown=shown)
    try:
        fd = open_file_in(folder.fd, path.name, shown)
    finally:
        folder.close()
    if fd is None:
        raise FileMissing(shown)
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(fd).st_size
        if max_bytes is not None and size > max_bytes:
            raise TooLarge(shown, size, max_bytes)
        try:
            if max_bytes is None:
                data = handle.read()
            else:
                # read(n) allocates n bytes first: ask for the size fstat gave (plus one, to see
                # growth), not the bound (megabytes, for a file of a few lines).
                data = handle.read(size + 1)
                if len(data) > size:  # grew since fstat: read on, up to the bound
                    data += handle.read(max_bytes + 1 - len(data))
        except OSError as exc:
            raise OsRefused(shown, exc, "read") from None
    if max_bytes is not None and len(data) > max_bytes:  # grew since fstat
        raise TooLarge(shown, None, max_bytes)
    return data


class FolderReader:
    """Reads files under the root as `read_bytes_inside` does (the folder opened from the
    root one name at a time, following no link; the file with O_NOFOLLOW relative to it),
    keeping the last `max_folders` folders' descriptors for the files read after in them: a
    search reads thousands of files from a few folders, and the descent from the root was
    most of each read. A folder swapped for a link before it is first opened is refused as
    by `read_bytes_inside`; keep a reader for one batch of reads, then close it."""

    def __init__(self, root: Path, max_folders: int = 32) -> None:
        self._root = root
        self._top = os.fspath(real_root(root))
        self._max_folders = max_folders
        self._folders: dict[str, int] = {}  # folder path -> descriptor, oldest first

    def read_bytes(self, path: str) -> bytes:
        """The bytes of the regular file `path` (absolute, under the root); the errors of
        `read_bytes_inside`."""
        shown = path[len(self._top) + 1:] if path.startswith(self._top + "/") else path
        if path == self._top:
            raise NotAFile(shown, is_folder=True)
        reason = denied_reason(path)
        if reason is not None:
            raise PathDenied(shown, reason)
        folder, _, name = path.rpartition("/")
        fd = open_file_in(self._folder(folder, shown), name, shown)
        if fd is None:
            raise FileMissing(shown)
        with os.fdopen(fd, "rb") as handle:
            try:
                return handle.read()
            except OSError as exc:
                raise OsRefused(shown, exc, "read") from None

    def _folder(self, folder: str, shown: str) -> int:
        fd = self._folders.get(folder)
        if fd is None:
            if len(self._folders) >= self._max_folders:
                os.close(self._folders.pop(next(iter(self._folders))))
            fd = self._folders[folder] = open_folder(self._root, Path(folder or "/"),
                                                     shown=shown).fd
        return fd

    def close(self) -> None:
        for fd in self._folders.values():
            os.close(fd)
        self._folders.clear()

    def __enter__(self) -> FolderReader:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def is_text(data: bytes) -> bool:
    """Whether a file's bytes are text as the tools take it: no NUL in its first 8 KiB."""
    return b"\x00" not in data[:_SNIFF_BYTES]


def read_text_inside(root: Path, path: Path, max_bytes: int, *,
                     shown: str | None = None) -> str:
    """A text file's content (see `read_decoded_inside`); binary files are refused."""
    return read_decoded_inside(root, path, max_bytes, shown=shown).text


def read_decoded_inside(root: Path, path: Path, max_bytes: int, *,
                        shown: str | None = None) -> DecodedText:
    """A text file's content and its encoding (UTF-8, else Windows-1252, else Latin-1:
    `files.text`); binary files are refused (NotText)."""
    shown = shown or shown_name(root, path)
    data = read_bytes_inside(root, path, max_bytes, shown=shown)
    if not is_text(data):
        raise NotText(shown)
    return DecodedText.of(data)


@dataclass(frozen=True)
class FileIdentity:
    """Which file a path named: its own and its folder's (device, inode).

    Equal content is not the same file: a folder swapped for a link to an outside copy
    has the same bytes but another identity.
    """

    device: int
    inode: int
    folder_device: int
    folder_inode: int

    @classmethod
    def of_descriptors(cls, file_fd: int, folder_fd: int) -> FileIdentity:
        own, folder = os.fstat(file_fd), os.fstat(folder_fd)
        return cls(own.st_dev, own.st_ino, folder.st_dev, folder.st_ino)

    @classmethod
    def of_path(cls, path: Path) -> FileIdentity | None:
        """The identity `path` names now (None if it is missing), following no final link."""
        try:
            own, folder = os.lstat(path), os.lstat(path.parent)
        except OSError:
            return None
        return cls(own.st_dev, own.st_ino, folder.st_dev, folder.st_ino)


def identity_inside(root: Path, path: Path) -> FileIdentity | None:
    """The identity of `path` reached from the root without links; None if unreachable."""
    try:
        folder = open_folder(root, path.parent)
    except FilesError:
        return None
    try:
        fd = open_file_in(folder.fd, path.name, shown_name(root, path))
        if fd is None:
            return None
        try:
            return FileIdentity.of_descriptors(fd, folder.fd)
        finally:
            os.close(fd)
    except FilesError:
        return None
    finally:
        folder.close()
