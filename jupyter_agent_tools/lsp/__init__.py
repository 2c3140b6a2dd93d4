"""Language servers: specs as data, the supervisor, the per-run journal, diagnostics on write."""

from .errors import LspError
from .journal import DiagnosticsJournal, FileDiagnostic
from .specs import ENTRY_POINT_GROUP, ServerSpec
from .supervisor import LanguageServerSupervisor

__all__ = [
    "ENTRY_POINT_GROUP", "DiagnosticsJournal", "FileDiagnostic", "LanguageServerSupervisor",
    "LspError", "ServerSpec",
]
