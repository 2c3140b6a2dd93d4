"""An agent shown in an open notebook as a collaborator of real-time collaboration.

A notebook open in JupyterLab with jupyter-collaboration has a room on the server, and the
room an awareness (pycrdt's): who is there, in which colour, with their cursor, broadcast to
every open view. While a run changes or runs cells of such a notebook, it is put there as one
more collaborator: the MCP client's name, a colour of its own, its cursor at the start of the
cell it works on (JupyterLab draws it with a flag bearing the name). Each run has a client id
of its own in the awareness, so two agents in one notebook are two collaborators.

An awareness forgets a collaborator whose state was not renewed for 30 s (the server's and
every browser's): an agent that stopped working leaves by itself.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

# Where jupyter_server_ydoc keeps its extension in the server's settings (its documented API).
_COLLABORATION_SETTING = "jupyter_server_ydoc"

#: Collaborator colours (JupyterLab's own user colours are from the same Material palette).
COLOURS = ("#EF6C00", "#6A1B9A", "#00838F", "#AD1457", "#2E7D32", "#1565C0", "#4E342E",
           "#C62828")

#: The awareness field where a front end finds which run a collaborator is, and its cell.
STATE_FIELD = "agent_tools"


@dataclass(frozen=True)
class AgentCollaborator:
    """A run as a collaborator: its own awareness client id, name and colour."""

    run_id: str
    name: str
    colour: str
    client_id: int

    @classmethod
    def of_run(cls, run_id: str, name: str) -> AgentCollaborator:
        digest = hashlib.sha256(run_id.encode()).digest()
        # A 31-bit id, as Yjs makes them, away from a browser's own by chance only.
        client_id = int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
        return cls(run_id, name[:60] or "agent", COLOURS[digest[4] % len(COLOURS)], client_id)

    def user(self) -> dict[str, Any]:
        """The `user` of an awareness state, as JupyterLab's own users carry it."""
        words = [word for word in self.name.replace("-", " ").replace("_", " ").split() if word]
        initials = "".join(word[0] for word in words[:2]).upper() or "AI"
        return {"username": f"agent-{self.run_id[:8]}", "name": self.name,
                # Said to be an agent, unless its name says so already.
                "display_name": self.name if "agent" in self.name.lower()
                else f"{self.name} (agent)", "initials": initials,
                "color": self.colour, "avatar_url": None}


async def open_room_document(server: Any, path: str) -> Any | None:
    """The shared document (jupyter_ydoc) of the notebook at `path` (from the server root)
    when it is open with real-time collaboration; None when it is not, or RTC is not here."""
    settings = getattr(getattr(server, "web_app", None), "settings", {})
    collaboration = settings.get(_COLLABORATION_SETTING)
    if collaboration is None or "file_id_manager" not in settings:
        return None
    # create=False (the default): a notebook nobody has open has no room, and gets none.
    return await collaboration.get_document(path=path, content_type="notebook",
                                            file_format="json", copy=False)


def cell_index_of(document: Any, cell: int | str | None) -> int | None:
    """The 0-based index of `cell` (a 1-based number or a cell id) in the document, or None."""
    if cell is None:
        return None
    cells = document.ycells
    if isinstance(cell, int):
        return cell - 1 if 1 <= cell <= len(cells) else None
    for index, ycell in enumerate(cells):
        if ycell.get("id") == cell:
            return index
    return None


def show_agent(document: Any, agent: AgentCollaborator, cell_index: int | None) -> bool:
    """Put (or renew) the agent in the document's room, its cursor at the start of the cell at
    `cell_index` (none: present, no cursor). False when the document has no awareness."""
    awareness = getattr(document, "awareness", None)
    if awareness is None:
        return False
    cursors: list[dict[str, Any]] = []
    where: dict[str, Any] = {"run_id": agent.run_id, "cell": None, "cell_id": None}
    cells = document.ycells
    if cell_index is not None and 0 <= cell_index < len(cells):
        from pycrdt import Assoc, Text

        ycell = cells[cell_index]
        where |= {"cell": cell_index + 1, "cell_id": ycell.get("id")}
        source = ycell.get("source")
        # An empty cell has no character to stick to (and pycrdt cannot make an index there):
        # the agent is present without a cursor.
        if isinstance(source, Text) and len(source) > 0:
            position = source.sticky_index(0, Assoc.AFTER).to_json()
            cursors = [{"anchor": position, "head": position, "primary": True, "empty": True}]
    _apply(awareness, agent.client_id,
           {"user": agent.user(), "cursors": cursors, STATE_FIELD: where})
    return True


def hide_agent(document: Any, agent: AgentCollaborator) -> None:
    """Take the agent out of the document's room now."""
    awareness = getattr(document, "awareness", None)
    if awareness is not None and agent.client_id in awareness.states:
        _apply(awareness, agent.client_id, None)


def _apply(awareness: Any, client_id: int, state: dict[str, Any] | None) -> None:
    """One client's state as an awareness update of this server's own ("local": the room
    broadcasts it to every open view), its clock one past the last."""
    from pycrdt import Encoder

    clock = int(awareness.meta.get(client_id, {}).get("clock", 0)) + 1  # a first must be 1
    encoder = Encoder()
    encoder.write_var_uint(1)
    encoder.write_var_uint(client_id)
    encoder.write_var_uint(clock)
    encoder.write_var_string(json.dumps(state, separators=(",", ":")))
    awareness.apply_awareness_update(encoder.to_bytes(), "local")
