"""A running cell's outputs written into its notebook as the kernel sends them.

The kernel's IOPub messages become nbformat outputs the way JupyterLab's output area makes
them: consecutive stream text of one name is one output, a display with a display id is
updated in place, `clear_output(wait=True)` clears when the next output comes. Each message
is one small change to the cell (`OutputChange`), so in an open notebook a long cell's
stream grows live in the human's view. What one cell writes is bounded in bytes.
"""

from __future__ import annotations

import json
from typing import Any

from .editing import CellEditor, OutputChange


def _size(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    return len(json.dumps(value, default=str).encode("utf-8"))


class LiveOutputs:
    """Writes the outputs of one execution into the cell `cell_id` of `editor`."""

    def __init__(self, editor: CellEditor, cell_id: str, *, max_bytes: int) -> None:
        self.editor = editor
        self.cell_id = cell_id
        self.max_bytes = max_bytes
        self.execution_count: int | None = None
        self.outputs: list[dict[str, Any]] = []  # a mirror of what the cell holds
        self._displays: dict[str, list[int]] = {}  # display id -> positions in outputs
        self._clear_on_next = False
        self._written = 0
        self._cut = False
        self._started = False

    @property
    def started(self) -> bool:
        """Whether the kernel began the execution (a cell queued behind the human's, or
        refused as busy, never touched the notebook)."""
        return self._started

    def end(self) -> None:
        """The execution is over: the cell shows its count and is no longer running."""
        if self._started:
            self.editor.end_execution(self.cell_id, self.execution_count)

    def take(self, msg_type: str, content: dict[str, Any]) -> None:
        """One IOPub message of the execution (status messages are not outputs). The cell's
        old outputs are cleared when the kernel starts it, as JupyterLab shows a run."""
        if not self._started:
            self._started = True
            self.editor.begin_execution(self.cell_id)
        if msg_type == "execute_input":
            self.execution_count = content.get("execution_count")
            return
        if msg_type == "clear_output":
            if content.get("wait"):
                self._clear_on_next = True
            else:
                self._clear()
            return
        if msg_type == "update_display_data":
            self._update_display(content)
            return
        output = _output(msg_type, content)
        if output is None:
            return
        if self._clear_on_next:
            self._clear()
        if msg_type == "execute_result" and content.get("execution_count") is not None:
            self.execution_count = content["execution_count"]
        if output["output_type"] == "stream":
            self._stream(output)
            return
        if not self._room_for(output):
            return
        display_id = (content.get("transient") or {}).get("display_id")
        if display_id:
            self._displays.setdefault(display_id, []).append(len(self.outputs))
        self._append(output)

    def _append(self, output: dict[str, Any]) -> None:
        self.outputs.append(output)
        self.editor.change_outputs(self.cell_id, OutputChange("append", output=output))

    def _stream(self, output: dict[str, Any]) -> None:
        text = output["text"]
        room = self.max_bytes - self._written
        if _size(text) > room:
            text = text.encode("utf-8")[:max(room, 0)].decode("utf-8", "ignore")
            self._note_cut()
            if not text:
                return
        self._written += _size(text)
        last = self.outputs[-1] if self.outputs else None
        if last is not None and last["output_type"] == "stream" and last["name"] == output["name"]:
            last["text"] += text
            self.editor.change_outputs(self.cell_id, OutputChange(
                "stream", position=len(self.outputs) - 1, text=text))
        else:
            self._append({**output, "text": text})

    def _update_display(self, content: dict[str, Any]) -> None:
        display_id = (content.get("transient") or {}).get("display_id")
        for position in self._displays.get(display_id or "", []):
            if position < len(self.outputs):
                updated = {**self.outputs[position], "data": content.get("data") or {},
                           "metadata": content.get("metadata") or {}}
                self.outputs[position] = updated
                self.editor.change_outputs(self.cell_id, OutputChange(
                    "replace", output=updated, position=position))

    def _clear(self) -> None:
        self._clear_on_next = False
        self.outputs.clear()
        self._displays.clear()
        self.editor.change_outputs(self.cell_id, OutputChange("clear"))

    def _room_for(self, output: dict[str, Any]) -> bool:
        size = _size(output)
        if self._written + size > self.max_bytes:
            self._note_cut()
            return False
        self._written += size
        return True

    def note(self, text: str) -> None:
        """Tell the human in the cell's outputs what happened to the run (e.g. the kernel
        died under it)."""
        if not self._started:
            self._started = True
            self.editor.begin_execution(self.cell_id)
        self._append({"output_type": "stream", "name": "stderr", "text": f"\n[{text}]\n"})

    def _note_cut(self) -> None:
        if self._cut:
            return
        self._cut = True
        self._append({"output_type": "stream", "name": "stderr",
                      "text": f"\n[agent-tools: further output of this cell was not written to "
                              f"the notebook: over {self.max_bytes:,} bytes "
                              "(c.Runtime.max_cell_output_bytes)]\n"})

    @property
    def cut(self) -> bool:
        return self._cut


def _output(msg_type: str, content: dict[str, Any]) -> dict[str, Any] | None:
    """The nbformat output an IOPub message makes (as nbformat.v4.output_from_msg), or None."""
    if msg_type == "stream":
        return {"output_type": "stream", "name": content.get("name", "stdout"),
                "text": str(content.get("text", ""))}
    if msg_type == "display_data":
        return {"output_type": "display_data", "data": content.get("data") or {},
                "metadata": content.get("metadata") or {}}
    if msg_type == "execute_result":
        return {"output_type": "execute_result", "data": content.get("data") or {},
                "metadata": content.get("metadata") or {},
                "execution_count": content.get("execution_count")}
    if msg_type == "error":
        return {"output_type": "error", "ename": str(content.get("ename", "")),
                "evalue": str(content.get("evalue", "")),
                "traceback": [str(line) for line in content.get("traceback") or []]}
    return None
