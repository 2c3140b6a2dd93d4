"""The languages structural search knows: ids, file extensions and `$` placeholders.

ast-grep's engine (ast-grep-py, a dependency) parses the 27 languages of AST_GREP_LANGUAGES.
tree-sitter-language-pack (the `grammars` extra, 184 MB) adds 145 more and the grammars of
the built-in matcher, which also finds runs of several statements and checks that a rewrite
keeps the syntax. Its grammars are bundled inside the 0.13.0 wheel (no download at first
use), so loading one works offline. This module imports nothing of the runtime: search
workers load it too.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import threading
import time
from collections.abc import Callable
from functools import cache
from pathlib import PurePath
from typing import get_args

from tree_sitter import Language

GRAMMARS_INSTALL = "pip install 'jupyter-agent-tools[grammars]'"
_PACK = "tree_sitter_language_pack"

# The grammar ids (tree-sitter-language-pack's) that ast-grep-py parses, under the same names.
# Dart is left out on purpose: ast-grep's Dart grammar gives a call no node of its own, so
# `$X.dispose()` matches nothing there; the built-in matcher finds such calls (a documented
# difference from the CLI).
AST_GREP_LANGUAGES: frozenset[str] = frozenset({
    "bash", "c", "cpp", "csharp", "css", "elixir", "go", "haskell", "hcl", "html",
    "java", "javascript", "json", "kotlin", "lua", "nix", "php", "python", "ruby", "rust",
    "scala", "solidity", "swift", "tsx", "typescript", "yaml", "zig",
})

#: While the pack is missing, how long its absence is taken as known: past it, the next
#: question looks again (a pack installed while the server runs is used from then on).
RECHECK_SECONDS = 1.0


class _Pack:
    """Whether the pack is installed, and its grammar ids: imported at the first question
    (a worker searching in ast-grep's languages never loads it), and while it is missing,
    looked for again at most every RECHECK_SECONDS (import caches invalidated, then
    `find_spec`: a millisecond or so)."""

    def __init__(self) -> None:
        self.ids: frozenset[str] = frozenset()
        self._looked_at: float | None = None
        self._lock = threading.Lock()

    def get(self, recheck: bool = False) -> frozenset[str]:
        if self.ids:
            return self.ids
        with self._lock:
            now = time.monotonic()
            if self.ids or (self._looked_at is not None and not recheck
                            and now - self._looked_at < RECHECK_SECONDS):
                return self.ids
            first = self._looked_at is None
            self._looked_at = now
            if not first:  # installed since? (a new folder in site-packages)
                importlib.invalidate_caches()
                if importlib.util.find_spec(_PACK) is None:
                    return self.ids
            try:
                module = importlib.import_module(_PACK)
            except ImportError:  # the `grammars` extra is not installed
                return self.ids
            self.ids = frozenset(get_args(module.SupportedLanguage))
            return self.ids


_pack = _Pack()


def pack_ids(recheck: bool = False) -> frozenset[str]:
    """The grammar ids of tree-sitter-language-pack; none while it is not installed.
    `recheck`: look again now whether it was installed (a worker told to use it)."""
    return _pack.get(recheck)


def pack_installed() -> bool:
    return bool(pack_ids())


def has_grammar(language: str) -> bool:
    """Whether a grammar here parses `language` (ast-grep's, or the pack's; before saying
    no, looks again whether the pack was installed)."""
    return (language in AST_GREP_LANGUAGES or language in pack_ids()
            or language in pack_ids(recheck=True))


def grammar_ids() -> tuple[str, ...]:
    """Every grammar id a search can use, sorted."""
    return _sorted_ids(pack_ids())


@cache
def _sorted_ids(pack: frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted(pack | AST_GREP_LANGUAGES))


# File extension -> grammar id, for inferring the language of a file and for choosing the
# files of a folder search. For ast-grep's languages these are exactly the ast-grep CLI's
# sets (ast-grep 0.51, crates/language: `.scss` is css, `.tf` is hcl, `.zsh` is bash, ...);
# tests/structural/differential checks them against the CLI. The others are the pack's.
_CLI_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "bash": ("bash", "bats", "cgi", "command", "env", "fcgi", "ksh", "sh", "tmux", "tool",
             "zsh"),
    "c": ("c", "h"),
    "cpp": ("cc", "hpp", "cpp", "c++", "hh", "cxx", "cu", "ino"),
    "csharp": ("cs",),
    "css": ("css", "scss"),
    "elixir": ("ex", "exs"),
    "go": ("go",),
    "haskell": ("hs",),
    "hcl": ("hcl", "tf", "tfvars"),
    "html": ("html", "htm", "xhtml"),
    "java": ("java",),
    "javascript": ("cjs", "js", "mjs", "jsx"),
    "json": ("json",),
    "kotlin": ("kt", "ktm", "kts"),
    "lua": ("lua",),
    "nix": ("nix",),
    "php": ("php",),
    "python": ("py", "py3", "pyi", "bzl"),
    "ruby": ("rb", "rbw", "gemspec"),
    "rust": ("rs",),
    "scala": ("scala", "sc", "sbt"),
    "solidity": ("sol",),
    "swift": ("swift",),
    "typescript": ("ts", "cts", "mts"),
    "tsx": ("tsx",),
    "yaml": ("yaml", "yml"),
    "zig": ("zig",),
}
EXTENSIONS: dict[str, str] = {
    f".{ext}": language for language, exts in _CLI_EXTENSIONS.items() for ext in exts
} | {
    ".dart": "dart", ".jl": "julia", ".r": "r", ".R": "r", ".toml": "toml", ".sql": "sql",
    ".m": "objc", ".ml": "ocaml", ".elm": "elm", ".erl": "erlang", ".clj": "clojure",
    ".vue": "vue", ".svelte": "svelte", ".proto": "proto", ".groovy": "groovy",
}
# Pack grammars whose files the CLI gives to one of its languages: a folder search in them
# looks at those files all the same.
_ALSO_SEARCHED: dict[str, frozenset[str]] = {
    "terraform": frozenset({".tf", ".tfvars"}),
    "scss": frozenset({".scss"}),
}

# What stands in for `$` while a pattern is parsed. `$` itself where the grammar takes it
# in identifiers; elsewhere a non-ASCII letter (µ is an identifier letter in every grammar
# tried); zig and bash names are ASCII only, so they get an ASCII prefix no real code uses.
# tests/structural/test_languages.py checks every entry.
DEFAULT_PLACEHOLDER = "µ"
PLACEHOLDERS: dict[str, str] = {
    "javascript": "$", "typescript": "$", "tsx": "$", "java": "$", "dart": "$",
    "c": "$", "cpp": "$", "scala": "$", "lua": "$",
    "python": "µ", "go": "µ", "rust": "µ", "ruby": "µ", "kotlin": "µ", "php": "µ",
    "csharp": "µ", "swift": "µ", "elixir": "µ", "haskell": "µ", "julia": "µ",
    "r": "µ",
    "zig": "zZ9mv_",
    "bash": "zZ9mv_",  # µ is no variable name in $(( ... ))
    "sql": "zZ9mv_",  # tree-sitter-sql's identifiers are ASCII
}


def placeholder_for(language: str) -> str:
    """The text that replaces each `$` of a pattern before parsing it as `language`."""
    return PLACEHOLDERS.get(language, DEFAULT_PLACEHOLDER)


def language_for_path(path: str | PurePath) -> str | None:
    """The grammar id for a file, from its extension; None when unknown."""
    suffix = PurePath(path).suffix
    return EXTENSIONS.get(suffix) or EXTENSIONS.get(suffix.lower())


def extensions_for(language: str) -> frozenset[str]:
    """The file extensions a folder search in `language` looks at, as the endings of names
    (the CLI's file types are globs such as `*.env`: `x.env` is bash, `.env` is not)."""
    return frozenset(ext for ext, lang in EXTENSIONS.items() if lang == language) \
        | _ALSO_SEARCHED.get(language, frozenset())


def close_ids(name: str, limit: int = 5) -> list[str]:
    """Grammar ids resembling `name` (for error messages)."""
    lowered = name.lower()
    ids = grammar_ids()
    close = difflib.get_close_matches(lowered, ids, n=limit, cutoff=0.5)
    prefixed = [g for g in ids if g.startswith(lowered[:2]) and g not in close]
    return (close + prefixed)[:limit]


def known_without_pack(language: str) -> bool:
    """Whether `language` is a grammar id the pack would add (it is not installed)."""
    return (not pack_ids() and language not in AST_GREP_LANGUAGES
            and (language in EXTENSIONS.values() or language in PLACEHOLDERS))


@cache
def load_language(language: str) -> Language:
    """The tree-sitter Language for a grammar id of the pack (LookupError when the pack
    lacks it or is not installed: looked for again first, as the server may have seen it
    installed before this process looked)."""
    if language not in pack_ids() and language not in pack_ids(recheck=True):
        raise LookupError(f"no {language} grammar in tree-sitter-language-pack"
                          f"{'' if pack_ids() else f' (not installed; to add it: {GRAMMARS_INSTALL})'}")
    language_of: Callable[[str], Language] = importlib.import_module(_PACK).get_language
    return language_of(language)
