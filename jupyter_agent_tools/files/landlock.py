"""Kernel-enforced read confinement of a thread and the processes it starts (Linux Landlock).

A tool that hands a path to another program (rg) checks containment before and after, but
the program opens the path itself: a folder swapped for a link out of the root in between
would be read. Landlock closes that window: once a thread restricts itself, the kernel lets
it, and every process it starts afterwards, read only beneath the folders allowed here.

Only reading and executing are restricted (writes are not handled, so they stay as the
process's permissions allow). Restriction cannot be undone: it is meant for worker threads
that do nothing else. Where the kernel has no Landlock (before Linux 5.13, or disabled),
`available()` is False and nothing is restricted.
"""

from __future__ import annotations

import ctypes
import errno
import os
from functools import lru_cache
from pathlib import Path

# The syscall numbers are the same on every architecture (they came after the unified table).
_CREATE_RULESET = 444
_ADD_RULE = 445
_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE = 1 << 0
READ_FILE = 1 << 2
READ_DIR = 1 << 3
_HANDLED = EXECUTE | READ_FILE | READ_DIR


class LandlockError(Exception):
    """The kernel refused a step of the restriction (its errno is in the message)."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


@lru_cache(maxsize=1)
def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when it has none."""
    version = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0),
                              ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(version, 0)


def available() -> bool:
    return abi_version() > 0


def _check(result: int, step: str) -> int:
    if result < 0:
        number = ctypes.get_errno()
        raise LandlockError(f"landlock {step}: {errno.errorcode.get(number, number)} "
                            f"({os.strerror(number)})")
    return result


def restrict_thread_reads(allowed: dict[Path, int]) -> None:
    """From now on the calling thread, and what it starts, reads and executes only beneath
    the paths of `allowed` (each with its rights: READ_FILE, READ_DIR, EXECUTE).

    A path that is a file may carry only the file rights (READ_FILE, EXECUTE).
    """
    libc = _libc()
    attr = _RulesetAttr(_HANDLED)
    ruleset = _check(libc.syscall(_CREATE_RULESET, ctypes.byref(attr),
                                  ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0)),
                     "create_ruleset")
    try:
        for path, rights in allowed.items():
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = _PathBeneathAttr(rights, fd)
                _check(libc.syscall(_ADD_RULE, ctypes.c_int(ruleset),
                                    ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule),
                                    ctypes.c_uint32(0)), f"add_rule {path}")
            finally:
                os.close(fd)
        # Required of an unprivileged thread; it also keeps setuid programs from running.
        _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _check(libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)),
               "restrict_self")
    finally:
        os.close(ruleset)
