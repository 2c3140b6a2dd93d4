"""Jupyter's own credentials: the paths no file tool reads, writes, lists or searches.

The one place the denied set is decided:

- **runtime folders**, whole: Jupyter's runtime directory (`jupyter_runtime_dir()`, from
  `JUPYTER_RUNTIME_DIR`, `JUPYTER_DATA_DIR`, `HOME`, ...) and the server's own `runtime_dir`
  and the kernels' `connection_dir` (registered by the extension at start): server
  info files (`jpserver-*.json`, with the server's token) and kernel connection files
  (`kernel-*.json`, with the key that signs messages to a kernel: enough to run code in it);
- **configuration that may hold the server's token**, wherever it is under the root:
  `jupyter_server_config.{json,py}`, `jupyter_notebook_config.{json,py}`,
  `jupyter_config.{json,py}` and the `*.d` folders beside them (Jupyter reads these from its
  config path and from the folder it starts in, and a `.py` one runs as code at start-up);
- **jupyter-ai's MCP settings**, `mcp_settings.json` in a `.jupyter` folder (at any depth) or
  in Jupyter's config directory (jupyter_core's, and the server's `config_dir`): its
  entries carry `Authorization` headers.

Names are matched on the resolved path (links followed), so a link to a denied file is
denied too. The check is string work on a path that is already absolute and normal: a set
look-up and a prefix test against a few folders, well under a microsecond.
"""

from __future__ import annotations

import os
import threading

from jupyter_core.paths import jupyter_config_dir, jupyter_runtime_dir

CONFIG_FILES = frozenset(
    f"{stem}.{ext}" for stem in ("jupyter_server_config", "jupyter_notebook_config",
                                 "jupyter_config") for ext in ("json", "py"))
CONFIG_FOLDERS = ("jupyter_server_config.d", "jupyter_notebook_config.d", "jupyter_config.d")
MCP_SETTINGS = "mcp_settings.json"
_DOT_JUPYTER_MCP = f"/.jupyter/{MCP_SETTINGS}"

_lock = threading.Lock()
# Resolved: folders denied whole, and config folders whose mcp_settings.json is denied.
# jupyter_core's are added at the first check (its environment then: reading os.environ at
# every check would cost microseconds); a server adds its own at start (`deny_folders`).
_folders: tuple[str, ...] = ()
_configs: tuple[str, ...] = ()
_defaults_added = False


def deny_folders(*folders: str | os.PathLike[str] | None,
                 config_dirs: tuple[str | os.PathLike[str] | None, ...] = ()) -> None:
    """Add folders (with everything in them) to the denied set: a server's runtime_dir and its
    kernels' connection_dir; and `config_dirs`, whose mcp_settings.json is denied. None and
    empty values are ignored."""
    global _folders, _configs
    with _lock:
        _folders = _added(_folders, folders)
        _configs = _added(_configs, config_dirs)


def _added(known: tuple[str, ...], more: tuple[str | os.PathLike[str] | None, ...]) -> tuple[str, ...]:
    real = {os.path.realpath(os.fspath(folder)) for folder in more if folder}
    return tuple(sorted(set(known) | real))


def denied_folders() -> tuple[str, ...]:
    """The folders denied whole (resolved): Jupyter's runtime directories."""
    return _current()[0]


def _current() -> tuple[tuple[str, ...], tuple[str, ...]]:
    if not _defaults_added:
        _add_defaults()
    return _folders, _configs


def _add_defaults() -> None:
    global _defaults_added
    runtime, config = jupyter_runtime_dir(), jupyter_config_dir()
    deny_folders(runtime, config_dirs=(config,))
    _defaults_added = True


def denied_reason(path: str | os.PathLike[str]) -> str | None:
    """Why the resolved absolute `path` is one of Jupyter's credentials, or None if it is not."""
    text = os.fspath(path)
    folder, _, name = text.rpartition("/")
    if name in CONFIG_FILES:
        return "a Jupyter configuration file, which may hold the server's token"
    folders, configs = _current()
    if name == MCP_SETTINGS and (text.endswith(_DOT_JUPYTER_MCP) or folder in configs):
        return "jupyter-ai's MCP settings, whose entries carry the server's token"
    if "_config.d" in text:
        for part in CONFIG_FOLDERS:
            if f"/{part}/" in text or text.endswith(f"/{part}"):
                return "a Jupyter configuration folder, which may hold the server's token"
    for denied in folders:
        if text == denied or text.startswith(denied + "/"):
            return ("in Jupyter's runtime directory (server and kernel connection files: "
                    "the server's token, the keys that run code in kernels)")
    return None


def is_denied(path: str | os.PathLike[str]) -> bool:
    """Whether the resolved absolute `path` is one of Jupyter's credentials."""
    return denied_reason(path) is not None


def denied_globs(root: str | os.PathLike[str]) -> list[str]:
    """rg `--glob` exclusions for the denied set under `root` (resolved): searches and
    listings never open them. Folders outside the root need none (rg stays in it)."""
    top = os.path.join(os.fspath(root), "")  # ends with one "/", also for the root "/"
    globs = [f"!{name}" for name in sorted(CONFIG_FILES)]
    globs += [f"!{name}/" for name in CONFIG_FOLDERS]
    globs.append(f"!**/.jupyter/{MCP_SETTINGS}")
    folders, configs = _current()
    for folder in (*folders, *(os.path.join(config, MCP_SETTINGS) for config in configs)):
        if folder.startswith(top):
            relative = folder[len(top):]
            escaped = "/".join(_glob_escape(part) for part in relative.split("/"))
            globs.append(f"!/{escaped}" + ("/" if folder in folders else ""))
    return globs


def _glob_escape(text: str) -> str:
    return "".join(f"\\{c}" if c in "*?[]{}!\\" else c for c in text)
