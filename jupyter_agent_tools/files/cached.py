"""Reading a small file under the root on the event loop, when the kernel can serve it from its
caches alone (Linux 5.12+), so a call skips the hop to a worker thread.

The open is one `openat2` from the root's folder with RESOLVE_BENEATH (nothing above the
root), RESOLVE_NO_SYMLINKS (no link on the way, as `contained` opens folder by folder) and
RESOLVE_NO_XDEV (no other mount, where sizes may not be what a read gives) and RESOLVE_CACHED
(EAGAIN rather than a lookup that would wait for the disk); the read is a
`preadv` with RWF_NOWAIT (EAGAIN rather than waiting for pages not in memory). Whatever is
not that simple — a link, a miss in the caches, a file over the bound or not a regular file,
another system — answers None, and the caller reads in a thread the usual way, which also
says why a file cannot be read. Neither call can block the loop.

`CachedLookup` asks the same of a name's status (is it there, a folder, a file, its size and
times): an `O_PATH` open (nothing is opened for reading, a device's open has no effect) under
the same rules, and `fstat`. A name the caches know to be absent answers None; one they
cannot answer for raises `NotCached`, and the caller asks in a thread.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import sys
from functools import lru_cache
from pathlib import Path

from .denied import is_denied

# openat2's number is the same on every architecture (it came after the unified table).
_OPENAT2 = 437
_RESOLVE_NO_XDEV = 0x01
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_RESOLVE_CACHED = 0x20
_FILE_RESOLVE = (_RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS
                 | _RESOLVE_NO_XDEV | _RESOLVE_CACHED)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC
_LOOKUP_FLAGS = getattr(os, "O_PATH", 0) | _CLOEXEC
_AT_FDCWD = -100


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]


@lru_cache(maxsize=1)
def _syscall() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    """libc's syscall(), if this system can do the whole path (else nothing is tried)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "RWF_NOWAIT"):
        return None
    call = ctypes.CDLL(None, use_errno=True).syscall
    call.restype = ctypes.c_long
    # A cached lookup of "/" tells whether openat2 and RESOLVE_CACHED exist (5.12+) and are
    # allowed here (a seccomp filter may refuse them).
    fd = _openat2(call, _AT_FDCWD, b"/", _ROOT_HOW)
    if fd < 0:
        return None
    os.close(fd)
    return call


# The kernel only reads these: built once, not per call.
_ROOT_HOW = _OpenHow(_FOLDER_FLAGS, 0, _RESOLVE_CACHED)
_FILE_HOW = _OpenHow(_FILE_FLAGS, 0, _FILE_RESOLVE)
_LOOKUP_HOW = _OpenHow(_LOOKUP_FLAGS, 0, _FILE_RESOLVE)
_HOW_SIZE = ctypes.c_size_t(ctypes.sizeof(_OpenHow))


def _openat2(call: ctypes._CFuncPtr, folder: int, path: bytes,  # type: ignore[name-defined]
             how: _OpenHow) -> int:
    return int(call(_OPENAT2, ctypes.c_int(folder), path, ctypes.byref(how), _HOW_SIZE))


def available() -> bool:
    return _syscall() is not None


def _open_beneath(root: bytes, relative: bytes, how: _OpenHow) -> tuple[int, int]:
    """(fd, 0) of `relative` opened beneath the real `root` as `how` says, or (-1, errno)."""
    call = _syscall()
    if call is None or b"\x00" in relative:
        return -1, errno.EAGAIN
    folder = _openat2(call, _AT_FDCWD, root, _ROOT_HOW)
    if folder < 0:
        return -1, ctypes.get_errno()
    try:
        fd = _openat2(call, folder, relative, how)
        return fd, 0 if fd >= 0 else ctypes.get_errno()
    finally:
        os.close(folder)


def read_cached_beneath(root: Path, relative: str, max_bytes: int) -> bytes | None:
    """The bytes of the regular file `relative` (to the real `root`, at most `max_bytes`), if
    the kernel gives them at once from its caches, following no link; else None (also for
    Jupyter's credentials: the usual read refuses them, saying why)."""
    # No link is followed below, so the lexical path is the one opened.
    if is_denied(os.path.normpath(os.path.join(root, relative))):
        return None
    fd, _ = _open_beneath(os.fsencode(root), os.fsencode(relative), _FILE_HOW)
    if fd < 0:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        buffer = bytearray(info.st_size + 1)  # one more, to see a file that grew
        got = os.preadv(fd, [buffer], 0, os.RWF_NOWAIT)
        # Short (part of it not in memory) or grown since fstat: the usual read says.
        return bytes(buffer[:got]) if got == info.st_size else None
    except OSError:  # EAGAIN (not in memory), EOPNOTSUPP (no RWF_NOWAIT here), ...
        return None
    finally:
        os.close(fd)


class NotCached(Exception):
    """The kernel's caches cannot answer without the disk (or the name is reached through a
    link, or this system cannot say): ask in a worker thread."""


class CachedLookup:
    """`stat` of names beneath the real `root`, answered on the event loop from the kernel's
    caches: None for a name they know is absent, `NotCached` for anything they cannot
    answer at once. Follows no link (a link raises `NotCached`; the thread's `os.stat`
    follows it)."""

    def __init__(self, root: Path) -> None:
        self.root = os.fsencode(root)
        self._beneath = self.root.rstrip(b"/") + b"/"  # bytes, not pathlib: a call is µs

    def __call__(self, path: Path) -> os.stat_result | None:
        name = os.fsencode(path)
        if name == self.root:
            relative = b"."
        elif name.startswith(self._beneath):
            relative = name[len(self._beneath):]
        else:
            raise NotCached
        fd, failure = _open_beneath(self.root, relative, _LOOKUP_HOW)
        if fd < 0:
            # Absent, or a file where a folder was expected: what `os.stat` fails on too.
            if failure in (errno.ENOENT, errno.ENOTDIR):
                return None
            raise NotCached
        try:
            return os.fstat(fd)
        finally:
            os.close(fd)
