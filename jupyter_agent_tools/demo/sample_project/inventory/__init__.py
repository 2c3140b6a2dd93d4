"""A tiny inventory: the sample project of the jupyter-agent-tools demo."""

from .stock import Item, Stock

__all__ = ["Item", "Stock"]
