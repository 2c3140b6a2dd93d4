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
from functools import cache
from pathlib import PurePath
from typing import get_args

from tree_sitter import Language

try:
    from tree_sitter_language_pack import SupportedLanguage, get_language
except ImportError:  # the `grammars` extra is not installed
    PACK_IDS: frozenset[str] = frozenset()
else:
    PACK_IDS = frozenset(get_args(SupportedLanguage))

GRAMMARS_INSTALL = "pip install 'jupyter-agent-tools[grammars]'"

# The grammar ids (tree-sitter-language-pack's) that ast-grep-py parses, under the same names.
# Dart is left out on purpose: ast-grep's Dart grammar gives a call no node of its own, so
# `$X.dispose()` matches nothing there; the built-in matcher finds such calls (a documented
# difference from the CLI).
AST_GREP_LANGUAGES: frozenset[str] = frozenset({
    "bash", "c", "cpp", "csharp", "css", "elixir", "go", "haskell", "hcl", "html",
    "java", "javascript", "json", "kotlin", "lua", "nix", "php", "python", "ruby", "rust",
    "scala", "solidity", "swift", "tsx", "typescript", "yaml", "zig",
})

GRAMMAR_IDS: tuple[str, ...] = tuple(sorted(PACK_IDS | AST_GREP_LANGUAGES))


def pack_installed() -> bool:
    return bool(PACK_IDS)

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


def known_without_pack(language: str) -> bool:
    """Whether `language` is a grammar id the pack would add (it is not installed)."""
    return (not PACK_IDS and language not in AST_GREP_LANGUAGES
            and (language in EXTENSIONS.values() or language in PLACEHOLDERS))


@cache
def load_language(language: str) -> Language:
    """The tree-sitter Language for a grammar id of the pack (LookupError when the pack
    lacks it or is not installed)."""
    if language not in PACK_IDS:
        raise LookupError(f"no {language} grammar in tree-sitter-language-pack"
                          f"{'' if PACK_IDS else f' (not installed; to add it: {GRAMMARS_INSTALL})'}")
    return get_language(language)  # type: ignore[arg-type]
