"""A staged edit as a colored unified diff with Accept / Discard (which call `resolve`)."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

import ipywidgets as w

from .actions import outcome_error

if TYPE_CHECKING:
    from .actions import Outcome, PanelActions

_LINE_STYLES = (
    ("+++", "font-weight:bold"),
    ("---", "font-weight:bold"),
    ("@@", "color:#06c"),
    ("+", "background:#e6ffec;color:#05501d"),
    ("-", "background:#ffebe9;color:#82071e"),
)


def diff_html(diff: str, max_lines: int = 400) -> str:
    """A unified diff as HTML, one colored line per diff line (long diffs are cut)."""
    lines = diff.splitlines()
    shown = []
    for line in lines[:max_lines]:
        style = next((s for prefix, s in _LINE_STYLES if line.startswith(prefix)), "")
        shown.append(f"<div style='{style}'>{escape(line) or '&nbsp;'}</div>")
    if len(lines) > max_lines:
        shown.append(f"<div style='color:#888'>… {len(lines) - max_lines} more lines</div>")
    return ("<div style='font-family:monospace;font-size:12px;white-space:pre;overflow:auto;"
            "max-height:30em'>" + "".join(shown) + "</div>")


def edit_id(edit: dict[str, Any]) -> str:
    return str(edit.get("edit_id") or edit.get("id"))


def edit_diff(edit: dict[str, Any]) -> str:
    """The edit's unified diff, whether given whole or per file."""
    if edit.get("diff"):
        return str(edit["diff"])
    return "\n".join(str(f.get("diff", "")) for f in edit.get("files") or [] if isinstance(f, dict))


def edit_summary(edit: dict[str, Any]) -> str:
    """`pattern → rewrite · N replacements in M files`, from what the edit carries."""
    parts = []
    if edit.get("pattern"):
        parts.append(f"{edit['pattern']} → {edit.get('rewrite', '')}")
    files = edit.get("files")
    if edit.get("replacements") is not None and files is not None:
        parts.append(f"{edit['replacements']} replacements in {len(files)} files")
    return " · ".join(parts)


class StagedEditView(w.VBox):
    """One staged edit: its summary, its diff, and Accept / Discard."""

    def __init__(self, edit: dict[str, Any], actions: PanelActions) -> None:
        self.edit = edit
        self._actions = actions
        self.accept_button = w.Button(description="Accept", button_style="success", icon="check")
        self.discard_button = w.Button(description="Discard", button_style="danger", icon="times")
        self.accept_button.on_click(lambda _: self._resolve("accept"))
        self.discard_button.on_click(lambda _: self._resolve("discard"))
        self.status = w.HTML()
        title = w.HTML(f"<b>{escape(self.id)}</b> {escape(edit_summary(edit))}")
        super().__init__(
            [title, w.HTML(diff_html(edit_diff(edit))),
             w.HBox([self.accept_button, self.discard_button, self.status])],
            layout=w.Layout(border="1px solid #ddd", padding="6px", margin="4px 0"),
        )

    @property
    def id(self) -> str:
        return edit_id(self.edit)

    def _resolve(self, action: str) -> None:
        self.accept_button.disabled = self.discard_button.disabled = True
        self.status.value = f"<i>{action}ing…</i>"
        self._actions.resolve(self.id, action).add_done_callback(self._resolved)

    def _resolved(self, future: Outcome) -> None:
        error = outcome_error(future)
        result = None if error else future.result()
        if error is None and getattr(result, "ok", True):
            self.status.value = "<i>done</i>"
            return
        self.accept_button.disabled = self.discard_button.disabled = False
        message = str(error) if error else getattr(result, "text", "")
        self.status.value = f"<span style='color:#b00'>{escape(message)}</span>"

