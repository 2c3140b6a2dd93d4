"""What every tool call answers: `ToolResult`, and the `ToolError` a tool raises to fail."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class ErrorCode(str, Enum):
    """Machine-readable error codes of the public contract."""

    UNKNOWN_TOOL = "unknown_tool"
    INVALID_ARGUMENTS = "invalid_arguments"
    PERMISSION_DENIED = "permission_denied"
    PATH_OUTSIDE_ROOT = "path_outside_root"
    # Jupyter's own credentials (runtime directory, kernel connection files, config holding
    # the server's token): no file tool touches them, whatever the root (files/denied.py).
    PATH_DENIED = "path_denied"
    NOT_FOUND = "not_found"
    UNPARSEABLE_PATTERN = "unparseable_pattern"
    UNAVAILABLE = "unavailable"
    MISSING_SYMBOL = "missing_symbol"
    SYMBOL_NOT_FOUND = "symbol_not_found"
    UNKNOWN_EDIT = "unknown_edit"
    STALE_EDIT = "stale_edit"
    SESSION_EXISTS = "session_exists"
    NO_SESSION = "no_session"
    TIMEOUT = "timeout"
    NO_HUMAN = "no_human"
    KERNEL_DIED = "kernel_died"
    # The resource is taken now (a notebook's kernel running the human's cell): call later.
    BUSY = "busy"
    # Not in the contract's list, but needed: a tool's own failure (a shell command that
    # could not start, a file that is not text). The message says what happened.
    FAILED = "failed"


class ToolError(Exception):
    """Raised by a tool (or the dispatch pipeline) to answer with an error.

    `message` must say what to do next; `data` and `blocks` carry whatever was produced
    before the failure (partial output of a cell, the matches of a stale edit, ...).
    """

    def __init__(
        self,
        code: ErrorCode | str,
        message: str,
        *,
        data: dict[str, Any] | None = None,
        blocks: list[dict[str, Any]] | None = None,
        text: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = ErrorCode(code)
        self.message = message
        self.data = data or {}
        self.blocks = blocks or []
        self.text = text

    def to_result(self) -> ToolResult:
        text = f"Error [{self.code.value}]: {self.message}"
        if self.text:
            text = f"{self.text}\n\n{text}"
        return ToolResult(
            ok=False,
            text=text,
            data=self.data,
            error={"code": self.code.value, "message": self.message},
            blocks=self.blocks,
        )


@dataclass
class ToolResult:
    """The answer of one call, the same over every transport."""

    ok: bool = True
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    error: dict[str, str] | None = None
    blocks: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def success(
        cls, text: str, data: dict[str, Any] | None = None, blocks: list[dict[str, Any]] | None = None
    ) -> ToolResult:
        return cls(ok=True, text=text, data=data or {}, blocks=blocks or [])

    @property
    def code(self) -> str | None:
        """The error code, or None when the call succeeded."""
        return self.error["code"] if self.error else None

    def to_json(self) -> dict[str, Any]:
        blocks = self.blocks or [{"type": "text", "text": self.text}]
        return {
            "ok": self.ok,
            "text": self.text,
            "data": self.data,
            "error": self.error,
            "blocks": blocks,
        }

    @classmethod
    def from_json(cls, payload: dict[str, Any]) -> ToolResult:
        return cls(
            ok=bool(payload.get("ok")),
            text=payload.get("text", ""),
            data=payload.get("data") or {},
            error=payload.get("error"),
            blocks=payload.get("blocks") or [],
        )
