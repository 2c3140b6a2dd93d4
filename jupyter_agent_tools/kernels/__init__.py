"""Kernels for `eval`: the factory (a resource provider), sessions, and the in-cell bridge."""

from .factory import KernelFactory
from .interpreters import RunInterpreters
from .session import CellEnd, KernelSession

__all__ = ["CellEnd", "KernelFactory", "KernelSession", "RunInterpreters"]
