"""What can go wrong in structural search and staged rewrites, as plain facts.

The tools (`tools/structural.py`) turn each into a contract error code and a message that
says what to do next. Paths here are as the user knows them (relative to the server root).
"""

from __future__ import annotations

from typing import Any


class StructuralError(Exception):
    """Base class of the parser resource's errors."""


class PathNotFound(StructuralError):
    def __init__(self, path: str | None) -> None:
        super().__init__(f"{path} does not exist")
        self.path = path


class RewriteNotEncodable(StructuralError):
    """A replacement has characters the file's encoding (kept on writing) cannot hold."""

    def __init__(self, path: str, encoding: str) -> None:
        super().__init__(f"{path} is {encoding} text, which cannot hold a replacement")
        self.path = path
        self.encoding = encoding


class LanguageMismatch(StructuralError):
    """A notebook's kernel language differs from the `language` asked for."""

    def __init__(self, path: str, notebook_language: str, asked: str) -> None:
        super().__init__(f"{path} is a {notebook_language} notebook, not {asked}")
        self.path = path
        self.notebook_language = notebook_language
        self.asked = asked


class UnknownLanguage(StructuralError):
    def __init__(self, language: str, close: list[str]) -> None:
        super().__init__(f"unknown language {language!r}")
        self.language = language
        self.close = close


class GrammarPackNeeded(StructuralError):
    """A language only tree-sitter-language-pack (the `grammars` extra) parses, and it is
    not installed."""

    def __init__(self, language: str, install: str) -> None:
        super().__init__(f"{language} needs tree-sitter-language-pack")
        self.language = language
        self.install = install


class LanguageNotInferred(StructuralError):
    """A file's extension names no known grammar."""

    def __init__(self, filename: str) -> None:
        super().__init__(f"cannot infer the language of {filename!r}")
        self.filename = filename


class LanguageRequired(StructuralError):
    """A folder is searched and no language was given."""

    def __init__(self) -> None:
        super().__init__("a language is required to search a folder")


class NoExtensions(StructuralError):
    """No file extension is known for the language, so a folder cannot be searched."""

    def __init__(self, language: str) -> None:
        super().__init__(f"no file extensions are known for {language!r}")
        self.language = language


class NotANotebook(StructuralError):
    def __init__(self, path: str) -> None:
        super().__init__(f"{path} is not nbformat JSON")
        self.path = path


class NoGrammar(StructuralError):
    """A notebook's kernel language has no tree-sitter grammar."""

    def __init__(self, path: str, language: str) -> None:
        super().__init__(f"no grammar for {language} (notebook {path})")
        self.path = path
        self.language = language


class TooLong(StructuralError):
    """A pattern or rewrite over its character limit."""

    def __init__(self, what: str, length: int, limit: int) -> None:
        super().__init__(f"the {what} is {length} characters, over {limit}")
        self.what = what
        self.length = length
        self.limit = limit


class UnparseablePattern(StructuralError):
    def __init__(self, pattern: str, language: str, reason: str, contexts: list[str]) -> None:
        super().__init__(f"the pattern does not parse as {language} ({reason})")
        self.pattern = pattern
        self.language = language
        self.reason = reason
        self.contexts = contexts


class UnboundMetavariables(StructuralError):
    """The rewrite uses metavariables the pattern does not bind."""

    def __init__(self, unbound: list[str], bound: list[str]) -> None:
        super().__init__(f"the rewrite uses unbound {', '.join(unbound)}")
        self.unbound = unbound
        self.bound = bound


class TooManyReplacements(StructuralError):
    def __init__(self, total: int, limit: int) -> None:
        super().__init__(f"{total} matches, over the {limit}-replacement limit")
        self.total = total
        self.limit = limit


class ChangedWhileComputing(StructuralError):
    """A file changed (or stopped being a valid notebook) between the search and the rewrite."""

    def __init__(self, path: str, notebook: bool = False) -> None:
        super().__init__(f"{path} changed while the edit was being computed")
        self.path = path
        self.notebook = notebook


class RewriteHitsMagics(StructuralError):
    """A notebook rewrite would change masked IPython syntax."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"in {path}: {reason}")
        self.path = path
        self.reason = reason


class RewriteBreaksSyntax(StructuralError):
    """The rewrite adds syntax errors; `broken` lists file, line and error counts."""

    def __init__(self, language: str, broken: list[dict[str, Any]]) -> None:
        super().__init__(f"the rewrite breaks the {language} syntax of {broken[0]['file']}")
        self.language = language
        self.broken = broken


class UnknownEdit(StructuralError):
    def __init__(self, edit_id: str) -> None:
        super().__init__(f"no staged edit {edit_id!r}")
        self.edit_id = edit_id


class EditAlreadyResolved(StructuralError):
    def __init__(self, edit_id: str, status: str) -> None:
        super().__init__(f"{edit_id} was already resolved ({status})")
        self.edit_id = edit_id
        self.status = status


class StaleEdit(StructuralError):
    """Files changed since the edit was staged; nothing was written."""

    def __init__(self, edit_id: str, stale_files: list[str]) -> None:
        super().__init__(f"{', '.join(stale_files)} changed since {edit_id} was staged")
        self.edit_id = edit_id
        self.stale_files = stale_files


class SearchFailed(StructuralError):
    """A search worker died, answered with an error, or (`timed_out`) took too long."""

    def __init__(self, reason: str, *, timed_out: bool, memory_limit: str | None = None
                 ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.timed_out = timed_out
        #: Set when a worker was killed for memory: the limit it ran under, described.
        self.memory_limit = memory_limit
