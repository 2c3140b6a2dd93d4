"""Language servers: specs as data, the supervisor, the per-run sessions and their journal."""

from .errors import LspError
from .journal import DiagnosticsJournal, FileDiagnostic
from .specs import ENTRY_POINT_GROUP, ServerSpec
from .supervisor import LanguageServerSupervisor

__all__ = [
    "ENTRY_POINT_GROUP", "DiagnosticsJournal", "FileDiagnostic", "LanguageServerSupervisor",
    "LspError", "ServerSpec",
]
