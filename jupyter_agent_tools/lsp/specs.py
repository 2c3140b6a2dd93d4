"""Language servers as data: how to find, start and configure each one.

The supervisor knows no server by name; it reads `ServerSpec`s. Built-in specs are below;
plug-ins add more through the `jupyter_agent_tools.lsp_specs` entry-point group (an entry
point names a `ServerSpec`, a dict of its fields, or a list of either), and users override
or disable any spec with `c.LanguageServerSupervisor.language_servers`.
"""

from __future__ import annotations

import dataclasses
import glob
import logging
import os
import re
import shutil
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

ENTRY_POINT_GROUP = "jupyter_agent_tools.lsp_specs"


@dataclass(frozen=True)
class ServerSpec:
    """How one language server is found, started and configured."""

    name: str
    # File extension (with its dot) → LSP languageId, for every file this server serves.
    extensions: Mapping[str, str]
    # A file named like one of these, in a folder between a file and the run's cwd,
    # makes that folder the server's workspace root.
    root_markers: tuple[str, ...]
    # argv; argv[0] is looked up through `executables` when given, else itself.
    command: tuple[str, ...]
    # Names tried in order for argv[0]; glob patterns (`clangd-*`) pick the highest version.
    executables: tuple[str, ...] = ()
    # Arguments that make the binary print its version and exit 0; a found binary counts as
    # available only when they do (a rustup shim without the component exits 1). Empty: no
    # probe (pyright's langserver has no such flag).
    version_args: tuple[str, ...] = ()
    initialization_options: Mapping[str, Any] | None = None
    # Answers to `workspace/configuration`, by section ("basedpyright.analysis", ...).
    settings: Mapping[str, Any] = field(default_factory=dict)
    # False for linters (ruff): navigation, hover and rename go to another server.
    navigation: bool = True
    # argv of the whole-project check behind `lsp diagnostics file="*"`, and its format.
    project_check: tuple[str, ...] = ()
    project_check_format: str = ""
    # "server": pulled when the server offers it, else awaited as published; "pull": always
    # asked (answers reflect every file synced before, where a publication may be half-way);
    # "tsserver": asked through typescript-language-server's tsserverRequest (it publishes
    # nothing for a file that stays clean).
    diagnostics_source: str = "server"
    # The server knows only the files it has open (clangd without a finished compile_commands
    # index): a rename first opens every source under its root, and `diagnostics "*"` checks
    # them through it; both bounded by the supervisor's `project_sources_max`.
    open_project_sources: bool = False
    enabled: bool = True

    @property
    def languages(self) -> list[str]:
        return sorted(set(self.extensions.values()))

    def language_id(self, path: Path) -> str | None:
        return self.extensions.get(path.suffix.lower())

    def serves(self, path: Path) -> bool:
        return self.enabled and path.suffix.lower() in self.extensions

    def find_root(self, path: Path, stop: Path) -> tuple[Path, str] | None:
        """The nearest folder from `path` up to `stop` holding a root marker, and that marker."""
        folder = path if path.is_dir() else path.parent
        while True:
            for marker in self.root_markers:
                if (folder / marker).exists():
                    return folder, marker
            if folder == stop or stop not in folder.parents:
                return None
            folder = folder.parent


def find_executable(names: Iterable[str]) -> str | None:
    """Resolve the first of `names` on PATH or in sys.prefix/bin (where pip put our servers)."""
    search = os.pathsep.join([os.environ.get("PATH", ""), str(Path(sys.prefix) / "bin")])
    for name in names:
        if any(ch in name for ch in "*?["):
            found = _versioned(name, search)
        else:
            found = shutil.which(name, path=search)
        if found:
            return found
    return None


def _versioned(pattern: str, search: str) -> str | None:
    matches = []
    for folder in search.split(os.pathsep):
        if folder:
            matches.extend(p for p in glob.glob(os.path.join(folder, pattern)) if os.access(p, os.X_OK))
    if not matches:
        return None

    def version(path: str) -> tuple[int, ...]:
        return tuple(int(n) for n in re.findall(r"\d+", os.path.basename(path)))

    return max(matches, key=version)


_PY_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt",
               "pyrightconfig.json", "Pipfile", "ruff.toml", ".ruff.toml")
_TS_EXTENSIONS = {".ts": "typescript", ".tsx": "typescriptreact", ".mts": "typescript",
                  ".cts": "typescript", ".js": "javascript", ".jsx": "javascriptreact",
                  ".mjs": "javascript", ".cjs": "javascript"}
_C_EXTENSIONS = {".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp",
                 ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp"}

BUILTIN_SPECS: tuple[ServerSpec, ...] = (
    ServerSpec(
        name="basedpyright",
        extensions={".py": "python", ".pyi": "python"},
        root_markers=_PY_MARKERS,
        command=("basedpyright-langserver", "--stdio"),
        diagnostics_source="pull",
        # `standard` mode: the default (`recommended`) floods an agent with style warnings.
        settings={
            "basedpyright.analysis": {"typeCheckingMode": "standard",
                                      "diagnosticMode": "openFilesOnly"},
            "python.analysis": {"typeCheckingMode": "standard"},
        },
        project_check=("basedpyright", "--outputjson", "--level", "error"),
        project_check_format="pyright",
    ),
    ServerSpec(
        name="ruff",
        extensions={".py": "python", ".pyi": "python"},
        root_markers=_PY_MARKERS,
        command=("ruff", "server"),
        version_args=("--version",),
        navigation=False,
        project_check=("ruff", "check", "--output-format", "json", "--exit-zero", "."),
        project_check_format="ruff",
    ),
    ServerSpec(
        name="typescript-language-server",
        extensions=_TS_EXTENSIONS,
        root_markers=("tsconfig.json", "jsconfig.json", "package.json"),
        command=("typescript-language-server", "--stdio"),
        version_args=("--version",),
        diagnostics_source="tsserver",
        project_check=("tsc", "--noEmit", "--pretty", "false"),
        project_check_format="tsc",
    ),
    ServerSpec(
        name="clangd",
        extensions=_C_EXTENSIONS,
        root_markers=("compile_commands.json", "compile_flags.txt", ".clangd", "CMakeLists.txt"),
        command=("clangd", "--log=error"),
        version_args=("--version",),
        executables=("clangd", "clangd-*"),
        open_project_sources=True,
    ),
    ServerSpec(
        name="rust-analyzer",
        extensions={".rs": "rust"},
        root_markers=("Cargo.toml",),
        command=("rust-analyzer",),
        version_args=("--version",),
    ),
    ServerSpec(
        name="gopls",
        extensions={".go": "go"},
        root_markers=("go.mod", "go.work"),
        command=("gopls",),
        version_args=("version",),
    ),
    ServerSpec(
        name="dart",
        extensions={".dart": "dart"},
        root_markers=("pubspec.yaml",),
        command=("dart", "language-server", "--protocol=lsp"),
        version_args=("--version",),
    ),
)

_FIELDS = {f.name for f in dataclasses.fields(ServerSpec)}


def spec_from_dict(name: str, data: Mapping[str, Any], base: ServerSpec | None = None) -> ServerSpec:
    """A spec from config data, over `base` when overriding a known one."""
    unknown = set(data) - _FIELDS
    if unknown:
        raise ValueError(f"unknown field(s) {sorted(unknown)}; known: {sorted(_FIELDS)}")
    values = dict(data)
    for key in ("root_markers", "command", "executables", "version_args", "project_check"):
        if key in values:
            values[key] = tuple(values[key])
    if base is not None:
        return dataclasses.replace(base, **values)
    return ServerSpec(**{"name": name, **values})


def load_specs(overrides: Mapping[str, Mapping[str, Any]], log: logging.Logger) -> tuple[
    dict[str, ServerSpec], dict[str, str]
]:
    """Built-ins, then entry points, then config overrides; errors are contained per spec."""
    specs = {spec.name: spec for spec in BUILTIN_SPECS}
    errors: dict[str, str] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = ep.load()
            loaded = loaded() if callable(loaded) and not isinstance(loaded, ServerSpec) else loaded
            for item in loaded if isinstance(loaded, (list, tuple)) else [loaded]:
                spec = item if isinstance(item, ServerSpec) else spec_from_dict(ep.name, item)
                specs[spec.name] = spec
        except Exception as exc:  # one bad plug-in never takes the others down
            log.exception("could not load language server spec %s", ep.name)
            errors[ep.name] = f"{type(exc).__name__}: {exc}"
    for name, data in overrides.items():
        try:
            specs[name] = spec_from_dict(name, data, specs.get(name))
        except Exception as exc:
            log.error("invalid language server config %s: %s", name, exc)
            errors[name] = f"{type(exc).__name__}: {exc}"
    return specs, errors
