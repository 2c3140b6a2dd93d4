"""One question or permission card as widgets: options, checkboxes, a text box, Skip."""

from __future__ import annotations

import json
from html import escape
from typing import TYPE_CHECKING, Any

import ipywidgets as w

from ..questions.cards import CardJSON
from .actions import outcome_error

if TYPE_CHECKING:
    from .actions import Outcome, PanelActions

_PERMISSION_STYLES = {"allow_once": "success", "allow_run": "warning", "deny": "danger"}


class CardView(w.VBox):
    """A pending card. Clicking sends the answer through `actions`; the panel removes the card
    when the server announces it closed (whoever answered it)."""

    def __init__(self, card: CardJSON, actions: PanelActions) -> None:
        self.card = card
        self._actions = actions
        self.option_buttons: list[w.Button] = []
        self.checkboxes: list[w.Checkbox] = []
        self.text = w.Textarea(placeholder="Type an answer…", layout=w.Layout(width="100%"))
        self.submit_button = w.Button(description="Send", button_style="primary", icon="paper-plane")
        self.skip_button = w.Button(description="Skip", tooltip="Let the agent continue on its "
                                    "stated assumption")
        self.status = w.HTML()
        permission = card["kind"] == "permission"
        header = w.HTML(
            f"<b>#{card['number']}</b> {escape(card['question'])}"
            f" <small style='color:#888'>run {card['run_id'][:8]}</small>"
        )
        rows: list[w.Widget] = [header]
        if card["context"] and not permission:
            rows.append(w.HTML(f"<div style='color:#555'>{escape(card['context'])}</div>"))
        if permission:
            rows.append(_args_view(card))
        if card["multi_select"]:
            self.checkboxes = [
                w.Checkbox(description=o["label"], indent=False,
                           tooltip=o.get("description", ""))
                for o in card["options"]
            ]
            rows.append(w.VBox(self.checkboxes))
        else:
            for option in card["options"]:
                button = w.Button(
                    description=option["label"], tooltip=option.get("description", ""),
                    button_style=_PERMISSION_STYLES.get(option.get("value", ""), "info")
                    if permission else "info",
                    layout=w.Layout(width="auto"),
                )
                button.on_click(self._option_clicked)
                self.option_buttons.append(button)
            rows.append(w.HBox(self.option_buttons, layout=w.Layout(flex_flow="row wrap")))
        if card["allow_free_text"]:
            rows.append(self.text)
        actions_row: list[w.Widget] = []
        if card["multi_select"] or card["allow_free_text"]:
            self.submit_button.on_click(self._submit_clicked)
            actions_row.append(self.submit_button)
        if not permission:  # Deny is the permission card's way out
            self.skip_button.on_click(lambda _: self._send(self._actions.skip(self.card)))
            actions_row.append(self.skip_button)
        rows.append(w.HBox([*actions_row, self.status]))
        super().__init__(rows, layout=w.Layout(border="1px solid #ddd", padding="6px",
                                               margin="4px 0"))

    @property
    def id(self) -> str:
        return self.card["id"]

    def _option_clicked(self, button: w.Button) -> None:
        self._send(self._actions.answer(self.card, button.description, self.text.value or None))

    def _submit_clicked(self, _: w.Button) -> None:
        chosen: Any = [box.description for box in self.checkboxes if box.value]
        if not self.card["multi_select"]:
            chosen = None
        self._send(self._actions.answer(self.card, chosen, self.text.value or None))

    def _send(self, future: Outcome) -> None:
        self._set_enabled(False)
        self.status.value = "<i>sending…</i>"
        future.add_done_callback(self._sent)

    def _sent(self, future: Outcome) -> None:
        error = outcome_error(future)
        if error is None:
            self.status.value = "<i>sent</i>"
            return
        self._set_enabled(True)
        self.status.value = f"<span style='color:#b00'>{escape(str(error))}</span>"

    def _set_enabled(self, enabled: bool) -> None:
        for control in (*self.option_buttons, *self.checkboxes, self.text, self.submit_button,
                        self.skip_button):
            control.disabled = not enabled


def _args_view(card: CardJSON) -> w.HTML:
    """The call to approve, in full: users want to see exactly what they allow."""
    shown = json.dumps(card["args"], indent=2, ensure_ascii=False)
    return w.HTML(
        f"<div><code>{escape(card['label'] or card['tool'] or '')}</code></div>"
        f"<pre style='max-height:20em;overflow:auto;background:#f6f6f6;padding:4px;"
        f"margin:2px 0'>{escape(shown)}</pre>"
    )

