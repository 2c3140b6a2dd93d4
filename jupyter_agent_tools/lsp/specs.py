"""Language servers as data: how to find, start and configure each one.

The supervisor knows no server by name; it reads `ServerSpec`s. Built-in specs are below;
plug-ins add more through the `jupyter_agent_tools.lsp_specs` entry-point group (an entry
point names a `ServerSpec`, a dict of its fields, or a list of either), and users override
or disable any spec with `c.LanguageServerSupervisor.language_servers`.
"""

from __future__ import annotations

import logging
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ..discovery import Spec, StatOf, find_executable, find_root, stat_on_disk
from ..discovery import load_specs as load_validated

ENTRY_POINT_GROUP = "jupyter_agent_tools.lsp_specs"

__all__ = ["BUILTIN_SPECS", "ENTRY_POINT_GROUP", "ServerSpec", "find_executable", "load_specs"]


class ServerSpec(Spec):
    """How one language server is found, started and configured."""

    extensions: dict[str, str] = Field(
        description="File extension (with its dot) → LSP languageId, for every file served.")
    root_markers: tuple[str, ...] = Field(
        description="A file named like one of these, in a folder between a file and the run's "
        "cwd, makes that folder the server's workspace root.")
    command: tuple[str, ...] = Field(
        description="argv; argv[0] is looked up through `executables` when given, else itself.")
    executables: tuple[str, ...] = Field(
        (), description="Names tried in order for argv[0]; globs (clangd-*) pick the highest "
        "version.")
    version_args: tuple[str, ...] = Field(
        (), description="Arguments that make the binary print its version and exit 0; a found "
        "binary counts as available only when they do (a rustup shim without the component "
        "exits 1). Empty: no probe (pyright's langserver has no such flag).")
    initialization_options: dict[str, Any] | None = None
    settings: dict[str, Any] = Field(
        default_factory=dict,
        description="Answers to `workspace/configuration`, by section.")
    navigation: bool = Field(
        True, description="False for linters (ruff): navigation, hover and rename go to "
        "another server.")
    project_check: tuple[str, ...] = Field(
        (), description="argv of the whole-project check behind `lsp diagnostics file=\"*\"`.")
    project_check_format: Literal["", "pyright", "ruff", "tsc", "gitlab"] = ""
    # "server": pulled when the server offers it, else awaited as published; "pull": always
    # asked (answers reflect every file synced before, where a publication may be half-way);
    # "tsserver": asked through typescript-language-server's tsserverRequest (it publishes
    # nothing for a file that stays clean).
    diagnostics_source: Literal["server", "pull", "tsserver"] = "server"
    # The server knows only the files it has open (clangd without a finished compile_commands
    # index): a rename first opens every source under its root, and `diagnostics "*"` checks
    # them through it; both bounded by the supervisor's `project_sources_max`.
    open_project_sources: bool = False
    # Files that tell the server how the project builds (clangd: a compile database); with
    # none in the root (or its build/ folder) the server guesses, and `build_config_hint`
    # says what to add.
    build_config: tuple[str, ...] = ()
    build_config_hint: str = ""
    yields_to: tuple[str, ...] = Field(
        (), description="Servers that serve the same files in this one's place when they can "
        "(ty yields to basedpyright, installed by the [basedpyright] extra).")
    enabled: bool = True

    @property
    def languages(self) -> list[str]:
        return sorted(set(self.extensions.values()))

    @property
    def binary_names(self) -> tuple[str, ...]:
        return self.executables or self.command[:1]

    def language_id(self, path: Path) -> str | None:
        return self.extensions.get(path.suffix.lower())

    def serves(self, path: Path) -> bool:
        return self.enabled and path.suffix.lower() in self.extensions

    def find_root(self, path: Path, stop: Path,
                  stat_of: StatOf = stat_on_disk) -> tuple[Path, str] | None:
        """The nearest folder from `path` up to `stop` holding a root marker, and that marker."""
        return find_root(self.root_markers, path, stop, stat_of)

    def lacks_build_config(self, root: Path, stat_of: StatOf = stat_on_disk) -> bool:
        """Whether the server will guess how `root`'s project builds."""
        return bool(self.build_config) and not any(
            (found := stat_of(folder / name)) is not None and stat.S_ISREG(found.st_mode)
            for folder in (root, root / "build") for name in self.build_config)


_PY_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt",
               "pyrightconfig.json", "Pipfile", "ruff.toml", ".ruff.toml")
_TS_EXTENSIONS = {".ts": "typescript", ".tsx": "typescriptreact", ".mts": "typescript",
                  ".cts": "typescript", ".js": "javascript", ".jsx": "javascriptreact",
                  ".mjs": "javascript", ".cjs": "javascript"}
_C_EXTENSIONS = {".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp",
                 ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp"}

_EXTRA = "pip install 'jupyter-agent-tools[{}]'"

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
            # Imports resolve in the server's environment, where its Python kernel runs (a
            # notebook's `import pandas` resolves when pandas is installed for the kernel),
            # not in whichever `python` is first on PATH.
            "python.pythonPath": sys.executable,
        },
        project_check=("basedpyright", "--outputjson", "--level", "error"),
        project_check_format="pyright",
        install=_EXTRA.format("basedpyright"),
    ),
    # The Python server of a default install (a 40 MB binary, no Node.js); basedpyright (above,
    # the [basedpyright] extra) serves instead when installed. scripts/
    # compare_python_language_servers.py compares them.
    ServerSpec(
        name="ty",
        extensions={".py": "python", ".pyi": "python"},
        root_markers=_PY_MARKERS,
        command=("ty", "server"),
        version_args=("--version",),
        project_check=("ty", "check", "--output-format", "gitlab", "--exit-zero"),
        project_check_format="gitlab",
        yields_to=("basedpyright",),
        install="pip install ty",
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
        install=_EXTRA.format("lsp"),
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
        install="npm install -g typescript-language-server typescript",
    ),
    ServerSpec(
        name="clangd",
        extensions=_C_EXTENSIONS,
        root_markers=("compile_commands.json", "compile_flags.txt", ".clangd", "CMakeLists.txt"),
        command=("clangd", "--log=error"),
        version_args=("--version",),
        executables=("clangd", "clangd-*"),
        open_project_sources=True,
        build_config=("compile_commands.json", "compile_flags.txt"),
        build_config_hint=(
            "Without a compile database clangd does not know the include paths and flags, so "
            "the project's own headers are 'file not found'. Add one: with CMake, `cmake -S . "
            "-B build -DCMAKE_EXPORT_COMPILE_COMMANDS=ON` (clangd reads "
            "build/compile_commands.json); with make, `bear -- make`; or write a "
            "compile_flags.txt in the root, one flag a line (e.g. `-Iinclude` and `-std=c17`)."),
        install="apt-get install clangd (or your system's clangd package)",
    ),
    ServerSpec(
        name="rust-analyzer",
        extensions={".rs": "rust"},
        root_markers=("Cargo.toml",),
        command=("rust-analyzer",),
        version_args=("--version",),
        install="rustup component add rust-analyzer",
    ),
    ServerSpec(
        name="gopls",
        extensions={".go": "go"},
        root_markers=("go.mod", "go.work"),
        command=("gopls",),
        version_args=("version",),
        install="go install golang.org/x/tools/gopls@latest",
    ),
    ServerSpec(
        name="dart",
        extensions={".dart": "dart"},
        root_markers=("pubspec.yaml",),
        command=("dart", "language-server", "--protocol=lsp"),
        version_args=("--version",),
        install="install the Dart SDK (https://dart.dev/get-dart)",
    ),
)

def load_specs(overrides: Mapping[str, Any], log: logging.Logger) -> tuple[
    dict[str, ServerSpec], dict[str, str]
]:
    """Built-ins, then entry points, then config overrides; errors are contained per spec."""
    return load_validated(ServerSpec, BUILTIN_SPECS, overrides, log, "language server",
                          ENTRY_POINT_GROUP)
