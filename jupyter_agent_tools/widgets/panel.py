"""The agent panel: pending cards, staged edits and a live transcript, for one space and run."""

from __future__ import annotations

import threading
from html import escape
from typing import Any

import ipywidgets as w

from ..questions.cards import CardJSON
from .actions import PanelActions
from .cards import CardView
from .edits import StagedEditView, edit_id
from .transcript import TranscriptView


class AgentPanel(w.VBox):
    """A composition of standard controls, fed by events and driven by clicks.

    The feeding methods may be called from a background thread (the server link): a lock keeps
    the children lists consistent with the widget callbacks of the kernel's main thread.
    """

    def __init__(self, actions: PanelActions, space: str, run_id: str | None = None) -> None:
        self.actions = actions
        self.space = space
        self.run_id = run_id
        self.cards: dict[str, CardView] = {}
        self.edits: dict[str, StagedEditView] = {}
        self._lock = threading.RLock()
        self.header = w.HTML()
        self.cards_box = w.VBox()
        self.edits_box = w.VBox()
        self.edits_title = w.HTML("<b>Staged edits</b>", layout=w.Layout(display="none"))
        self.transcript = TranscriptView()
        self.set_status("connecting…")
        super().__init__([self.header, self.cards_box, self.edits_title, self.edits_box,
                          w.HTML("<b>Transcript</b>"), self.transcript],
                         layout=w.Layout(border="1px solid #ccc", padding="6px"))

    def set_status(self, status: str) -> None:
        run = f" · run <code>{self.run_id[:8]}</code>" if self.run_id else ""
        self.header.value = (f"<b>Agent</b> · space <code>{escape(self.space)}</code>{run}"
                             f" · <i>{escape(status)}</i>")

    # -- cards --------------------------------------------------------------------------------

    def show_card(self, card: CardJSON) -> None:
        with self._lock:
            if card["id"] in self.cards or card.get("status", "pending") != "pending":
                return
            self.cards[card["id"]] = CardView(card, self.actions)
            self.cards_box.children = tuple(self.cards.values())

    def drop_card(self, card_id: str) -> None:
        with self._lock:
            if self.cards.pop(card_id, None) is not None:
                self.cards_box.children = tuple(self.cards.values())

    # -- staged edits ---------------------------------------------------------------------------

    def set_edits(self, edits: list[dict[str, Any]]) -> None:
        """Show these staged edits (pending ones only), keeping views that did not change."""
        with self._lock:
            pending = [e for e in edits if e.get("status", "pending") in ("pending", "staged")]
            self.edits = {edit_id(e): self.edits.get(edit_id(e)) or StagedEditView(e, self.actions)
                          for e in pending}
            self.edits_box.children = tuple(self.edits.values())
            self.edits_title.layout.display = "" if self.edits else "none"

    # -- events -------------------------------------------------------------------------------------

    def handle_event(self, event: dict[str, Any]) -> None:
        """Fold one event of the space or run stream into the panel."""
        kind = event.get("type")
        if kind == "question_asked":
            self.show_card(event["card"])
        elif kind == "question_closed":
            self.drop_card(event["card"]["id"])
        elif kind == "humans":
            self.set_status(f"connected ({event.get('humans')} watching)")
        self.transcript.add_event(event)
