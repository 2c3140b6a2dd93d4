"""The grammars of tree-sitter-language-pack: ids, file extensions and `$` placeholders.

Grammars are bundled inside the 0.13.0 wheel (no download at first use), so loading one
works offline. This module imports nothing of the runtime: search workers load it too.
"""

from __future__ import annotations

import difflib
from functools import cache
from pathlib import PurePath
from typing import get_args

from tree_sitter import Language
from tree_sitter_language_pack import SupportedLanguage, get_language

GRAMMAR_IDS: tuple[str, ...] = tuple(sorted(get_args(SupportedLanguage)))

# File extension -> grammar id, for inferring the language of a file and for choosing the
# files of a folder search. The same sets as the ast-grep CLI where it has the language.
EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".tsx": "tsx",
    ".rs": "rust", ".go": "go",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
    ".java": "java", ".dart": "dart", ".rb": "ruby", ".kt": "kotlin", ".kts": "kotlin",
    ".php": "php", ".cs": "csharp", ".swift": "swift", ".scala": "scala", ".lua": "lua",
    ".sh": "bash", ".bash": "bash", ".ex": "elixir", ".exs": "elixir", ".hs": "haskell",
    ".jl": "julia", ".r": "r", ".R": "r", ".zig": "zig", ".css": "css", ".scss": "scss",
    ".html": "html", ".htm": "html", ".json": "json", ".yaml": "yaml", ".yml": "yaml",
    ".toml": "toml", ".sql": "sql", ".m": "objc", ".ml": "ocaml", ".elm": "elm",
    ".erl": "erlang", ".clj": "clojure", ".nix": "nix", ".tf": "terraform", ".sol": "solidity",
    ".vue": "vue", ".svelte": "svelte", ".proto": "proto", ".groovy": "groovy",
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
}


def placeholder_for(language: str) -> str:
    """The text that replaces each `$` of a pattern before parsing it as `language`."""
    return PLACEHOLDERS.get(language, DEFAULT_PLACEHOLDER)


def language_for_path(path: str | PurePath) -> str | None:
    """The grammar id for a file, from its extension; None when unknown."""
    suffix = PurePath(path).suffix
    return EXTENSIONS.get(suffix) or EXTENSIONS.get(suffix.lower())


def extensions_for(language: str) -> frozenset[str]:
    """The file extensions a folder search in `language` looks at."""
    return frozenset(ext for ext, lang in EXTENSIONS.items() if lang == language)


def close_ids(name: str, limit: int = 5) -> list[str]:
    """Grammar ids resembling `name` (for error messages)."""
    lowered = name.lower()
    close = difflib.get_close_matches(lowered, GRAMMAR_IDS, n=limit, cutoff=0.5)
    prefixed = [g for g in GRAMMAR_IDS if g.startswith(lowered[:2]) and g not in close]
    return (close + prefixed)[:limit]


@cache
def load_language(language: str) -> Language:
    """The tree-sitter Language for a grammar id (raises LookupError when unknown)."""
    if language not in GRAMMAR_IDS:
        raise LookupError(language)
    return get_language(language)  # type: ignore[arg-type]
