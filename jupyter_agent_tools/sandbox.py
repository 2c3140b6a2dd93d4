"""Confine a process and all it starts (Linux Landlock, and a network namespace): a sandbox.

    python -I -S sandbox.py --policy JSON -- ARGV...     confine this process, then exec ARGV
    python -I -S sandbox.py --probe                      print what this machine can confine

The policy (JSON; `policy()` builds it) says

- `write`: folders (and files) the process may change, everything beneath them: the run's
  folder (`workspace-write`) and its private temp folder; a few devices (/dev/null, ...) are
  always writable;
- `deny`: folders nothing beneath which may be read or executed (Jupyter's runtime directory,
  with the server's and kernels' connection files). Landlock only allows, so reading is
  granted on every entry of `/` that is not such a folder, going down the folders that hold
  one and granting their other entries: what exists when the process starts. File *names*
  stay listable everywhere (reading directories is granted on `/` whole). A file created
  later directly in a folder that holds a denied one (the home folder, when the runtime
  directory is beneath it) is readable only by processes confined after it was made;
- `read`: files or folders readable even beneath a denied one (a kernel's connection file);
- `network`: False cuts the network off: a new network namespace with only loopback when
  `netns` is set and the system permits it (no socket of any kind reaches outside), else
  Landlock's TCP rules (ABI 4; connect and bind refused but for `ports`; UDP is not covered);
- `ports`: TCP ports a confined process may still bind and connect to (a kernel's own).

Standard library only (run as a script with -I -S it starts in milliseconds), importing
nothing of ours: the keeper (keeper.py) loads it by path to confine itself and its command;
`processes.py` and the kernel provisioner put `sandbox_argv` in front of a command.
"""

from __future__ import annotations

import json
import os
import sys

_CREATE_RULESET = 444
_ADD_RULE = 445
_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_RULE_NET_PORT = 2
_PR_SET_NO_NEW_PRIVS = 38
_CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1

_EXECUTE = 1 << 0
_WRITE_FILE = 1 << 1
_READ_FILE = 1 << 2
_READ_DIR = 1 << 3
_REMOVE_DIR = 1 << 4
_REMOVE_FILE = 1 << 5
_MAKE_ALL = sum(1 << bit for bit in range(6, 13))  # char, dir, reg, sock, fifo, block, sym
_REFER = 1 << 13  # ABI 2
_TRUNCATE = 1 << 14  # ABI 3
_NET_BIND_TCP = 1 << 0  # ABI 4
_NET_CONNECT_TCP = 1 << 1

_READ = _READ_FILE | _EXECUTE
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE
#: Devices any confined process may write (and read).
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts",
           "/dev/random", "/dev/urandom")
SCRIPT = os.path.abspath(__file__)


class SandboxError(Exception):
    """The process could not be confined (what failed is in the message)."""


def policy(*, write: list[str], deny: list[str], read: list[str] | None = None,
           network: bool = True, ports: list[int] | None = None, netns: bool = False) -> str:
    """A policy as the launcher and the keeper take it (JSON)."""
    return json.dumps({"write": write, "deny": deny, "read": read or [], "network": network,
                       "ports": ports or [], "netns": netns})


def sandbox_argv(policy_json: str, argv: list[str]) -> list[str]:
    """`argv` run confined by `policy_json` (the launcher in front of it)."""
    return [sys.executable, "-I", "-S", SCRIPT, "--policy", policy_json, "--", *argv]


# -- the kernel's side ------------------------------------------------------------------------

_LIBC: list[object] = []


def _libc():  # noqa: ANN202 - ctypes is imported only when confining
    if not _LIBC:
        import ctypes
        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    return _LIBC[0]


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when it has none."""
    import ctypes
    version = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0),
                              ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def _check(result: int, step: str) -> int:
    if result < 0:
        import ctypes
        import errno
        number = ctypes.get_errno()
        raise SandboxError(f"{step}: {errno.errorcode.get(number, number)} "
                           f"({os.strerror(number)})")
    return result


def readable_roots(deny: list[str]) -> list[str]:
    """Every path beneath which reading is granted so that nothing beneath `deny` is: the
    entries of `/` but the folders that hold a denied one, whose other entries go in instead.
    Symbolic links are left out (what they point to is granted, or not, where it is)."""
    denied = {os.path.realpath(path) for path in deny}
    holders = {os.path.dirname(path) for path in denied}
    for path in list(holders):
        while path != "/":
            path = os.path.dirname(path)
            holders.add(path)
    if not denied:
        return ["/"]
    roots: list[str] = []
    pending = ["/"]
    while pending:
        folder = pending.pop()
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            path = os.path.join(folder, name)
            if path in denied or os.path.islink(path):
                continue
            if path in holders:
                pending.append(path)
            else:
                roots.append(path)
    return roots


def apply(policy_json: str) -> None:
    """Confine this process (its calling thread, and all it starts from now on) by the policy.
    SandboxError when any step fails: the caller must then not run what it meant to."""
    import ctypes
    rules = json.loads(policy_json)
    libc = _libc()
    if not rules.get("network", True) and rules.get("netns"):
        _check(libc.unshare(_CLONE_NEWNET), "unshare(CLONE_NEWNET)")
        _loopback_up()
    abi = abi_version()
    if abi < 1:
        raise SandboxError("the kernel has no Landlock")
    handled_fs = _EXECUTE | _WRITE_FILE | _READ_FILE | _READ_DIR | _REMOVE_DIR | _REMOVE_FILE \
        | _MAKE_ALL | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)
    net_rules = not rules.get("network", True) and not rules.get("netns")
    if net_rules and abi < 4:
        raise SandboxError(f"Landlock ABI {abi} cannot confine the network (needs 4)")

    class RulesetAttr(ctypes.Structure):
        _fields_ = [("handled_access_fs", ctypes.c_uint64),
                    ("handled_access_net", ctypes.c_uint64)]

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    class NetPort(ctypes.Structure):
        _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]

    attr = RulesetAttr(handled_fs, (_NET_BIND_TCP | _NET_CONNECT_TCP) if net_rules else 0)
    size = ctypes.sizeof(attr) if abi >= 4 else ctypes.sizeof(ctypes.c_uint64)
    ruleset = _check(libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size),
                                  ctypes.c_uint32(0)), "landlock_create_ruleset")

    def allow(path: str, rights: int) -> None:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return  # gone meanwhile, or never there: nothing to grant
        try:
            if not os.path.isdir(path):
                rights &= _FILE_RIGHTS
            rule = PathBeneath(rights & handled_fs, fd)
            _check(libc.syscall(_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                                ctypes.byref(rule), ctypes.c_uint32(0)), f"landlock_add_rule {path}")
        finally:
            os.close(fd)

    try:
        deny = [str(path) for path in rules.get("deny", [])]
        allow("/", _READ_DIR)
        for path in readable_roots(deny):
            allow(path, _READ)
        for path in rules.get("read", []):
            allow(path, _READ | _READ_DIR)
        writes = ~(_READ_FILE | _EXECUTE) & handled_fs
        for path in [*rules.get("write", []), *DEVICES]:
            real = os.path.realpath(path)
            holds_denied = any(os.path.realpath(d) == real
                               or os.path.realpath(d).startswith(os.path.join(real, ""))
                               for d in deny)
            # Beneath a folder that is or holds no denied one, new files are readable at once
            # too; else only what `readable_roots` found when the process started.
            allow(path, writes | (0 if holds_denied else _READ))
        for port in rules.get("ports", []) if net_rules else []:
            rule = NetPort(_NET_BIND_TCP | _NET_CONNECT_TCP, int(port))
            _check(libc.syscall(_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_NET_PORT),
                                ctypes.byref(rule), ctypes.c_uint32(0)),
                   f"landlock_add_rule port {port}")
        _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
        _check(libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)),
               "landlock_restrict_self")
    finally:
        os.close(ruleset)


def _loopback_up() -> None:
    """Bring `lo` up in a new network namespace (it starts down): loopback keeps working."""
    import fcntl
    import socket
    import struct
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH22x", b"lo", 0)
        flags = struct.unpack("16sH22x", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | _IFF_UP))


def probe() -> dict[str, object]:
    """What this machine can confine: Landlock's ABI, and whether a network namespace may be
    made (tried in a child, which then exits)."""
    abi = abi_version()
    netns = False
    pid = os.fork()
    if pid == 0:
        try:
            _check(_libc().unshare(_CLONE_NEWNET), "unshare")
            _loopback_up()
        except BaseException:  # noqa: BLE001 - the child only reports, by its exit code
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    netns = os.waitstatus_to_exitcode(status) == 0
    return {"landlock_abi": abi, "network_namespace": netns}


def main(args: list[str]) -> None:
    if args == ["--probe"]:
        print(json.dumps(probe()))
        return
    if len(args) < 4 or args[0] != "--policy" or args[2] != "--":
        sys.exit("usage: sandbox.py --policy JSON -- ARGV... | sandbox.py --probe")
    try:
        apply(args[1])
    except (SandboxError, OSError, ValueError) as exc:
        sys.exit(f"sandbox: cannot confine the command, so it does not run: {exc}")
    argv = args[3:]
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        sys.exit(f"cannot run {argv[0]}: {exc.strerror}")


if __name__ == "__main__":
    main(sys.argv[1:])
