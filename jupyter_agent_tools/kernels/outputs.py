"""What a cell produced, gathered from IOPub and turned into a tool result like a notebook's.

Streams, display data and the last expression's value are kept in order; a DataFrame comes
back as html plus text blocks, a figure as an image block. Everything is bounded: text to a
number of characters, images to a count, with a note saying what was cut.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..runtime.limits import bound_text

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def strip_ansi(text: str) -> str:
    """Text without terminal colour and cursor codes."""
    return _ANSI.sub("", text)


@dataclass
class _Output:
    kind: str  # "stream" | "display" | "result" | "error"
    text: str = ""
    bundle: dict[str, Any] = field(default_factory=dict)
    display_id: str | None = None


@dataclass
class CellOutput:
    """The outputs of one execute request, in the order the kernel sent them."""

    max_chars: int = 30_000
    max_images: int = 8
    outputs: list[_Output] = field(default_factory=list)
    execution_count: int | None = None
    error: dict[str, str] | None = None
    _stream_chars: int = 0
    _stream_cut: int = 0

    def add(self, msg_type: str, content: dict[str, Any]) -> None:
        """Take one IOPub message of the cell."""
        if msg_type == "stream":
            self._add_stream(content.get("text", ""))
        elif msg_type in ("display_data", "execute_result"):
            kind = "result" if msg_type == "execute_result" else "display"
            display_id = (content.get("transient") or {}).get("display_id")
            self.outputs.append(_Output(kind, bundle=content.get("data") or {},
                                        display_id=display_id))
            if msg_type == "execute_result":
                self.execution_count = content.get("execution_count")
        elif msg_type == "update_display_data":
            display_id = (content.get("transient") or {}).get("display_id")
            for output in self.outputs:
                if display_id and output.display_id == display_id:
                    output.bundle = content.get("data") or {}
        elif msg_type == "clear_output":
            self.outputs = [o for o in self.outputs if o.kind == "error"]
            self._stream_chars = 0
        elif msg_type == "error":
            traceback = "\n".join(content.get("traceback") or [])
            text = strip_ansi(traceback) or f"{content.get('ename')}: {content.get('evalue')}"
            self.error = {"ename": content.get("ename", ""), "evalue": content.get("evalue", "")}
            self.outputs.append(_Output("error", text=text))

    def _add_stream(self, text: str) -> None:
        room = self.max_chars - self._stream_chars
        if room <= 0:
            self._stream_cut += len(text)
            return
        kept = text[:room]
        self._stream_cut += len(text) - len(kept)
        self._stream_chars += len(kept)
        kept = strip_ansi(kept)
        if self.outputs and self.outputs[-1].kind == "stream":
            self.outputs[-1].text += kept
        else:
            self.outputs.append(_Output("stream", text=kept))

    @property
    def produced(self) -> bool:
        return bool(self.outputs)

    def render(self) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
        """(text for the agent, blocks, data) — bounded, with notes where output was cut."""
        texts: list[str] = []
        blocks: list[dict[str, Any]] = []
        images = dropped_images = 0
        result_text: str | None = None
        for output in self.outputs:
            if output.kind in ("stream", "error"):
                texts.append(output.text)
                blocks.append({"type": "text", "text": output.text})
                continue
            bundle = output.bundle
            plain = strip_ansi(str(bundle.get("text/plain", "")))
            image_type = next((t for t in _IMAGE_TYPES if t in bundle), None)
            if image_type:
                if images < self.max_images:
                    images += 1
                    blocks.append({"type": "image", "mime_type": image_type,
                                   "data": str(bundle[image_type]).replace("\n", "")})
                    texts.append(f"[{image_type} image {images}]")
                else:
                    dropped_images += 1
                continue
            if "text/html" in bundle:
                html, cut = bound_text(str(bundle["text/html"]), self.max_chars, what="html")
                if not cut:  # a cut table is no table: the text block carries it then
                    blocks.append({"type": "html", "html": html})
            if plain:
                texts.append(plain)
                blocks.append({"type": "text", "text": plain})
            elif "text/markdown" in bundle:
                texts.append(str(bundle["text/markdown"]))
                blocks.append({"type": "text", "text": str(bundle["text/markdown"])})
            if output.kind == "result":
                result_text = plain
        if self._stream_cut:
            note = (f"[... {self._stream_cut} more characters of output were cut; print less, "
                    "or write it to a file and read parts of it ...]")
            texts.append(note)
            blocks.append({"type": "text", "text": note})
        if dropped_images:
            note = f"[{dropped_images} more images were not returned; show fewer figures per cell]"
            texts.append(note)
            blocks.append({"type": "text", "text": note})
        text = "\n".join(t.rstrip("\n") for t in texts if t)
        text, cut = bound_text(text, self.max_chars)
        data: dict[str, Any] = {
            "status": "error" if self.error else "ok",
            "execution_count": self.execution_count,
            "result": result_text,
            "images": images,
        }
        if self.error:
            data["error"] = self.error
        if cut or self._stream_cut or dropped_images:
            data["truncated"] = True
        return text, blocks, data
