"""Debug Adapter Protocol: adapters as data, a typed client, sessions and their supervisor."""

from .adapters import BUILTIN_ADAPTERS, AdapterSpec
from .errors import DebugError
from .supervisor import DebugSupervisor

__all__ = ["BUILTIN_ADAPTERS", "AdapterSpec", "DebugError", "DebugSupervisor"]
