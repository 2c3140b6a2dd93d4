"""What a cell produced, gathered from IOPub and turned into a tool result like a notebook's.

Streams, display data and the last expression's value are kept in order, each display as its
richest representation: a figure as an image (or svg) block, a DataFrame as html plus its
text, Markdown / LaTeX / JSON displays as markdown / latex / json blocks. A bare
`<... object>` repr adds nothing beside a rich representation, so it is dropped there.
Everything is bounded: text to a number of characters, images to a count, with a note
saying what was cut.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..runtime.limits import bound_text

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_SVG = "image/svg+xml"
# Rich representations kept as a block, richest first: (mime type, block type). One block per
# display, as a notebook shows one rendering of it.
_RICH_TYPES = (("text/html", "html"), ("text/markdown", "markdown"), ("text/latex", "latex"),
               ("application/json", "json"))
# What the agent reads when text/plain says nothing: the sources, plainest first.
_READABLE_TYPES = ("text/markdown", "text/latex", "application/json", "text/html")
# A default repr, which says nothing: `<IPython.core.display.Markdown object>`, Python's
# `<m.Foo object at 0x7f...>`, IPython's `<m.Foo at 0x7f...>`.
_BARE_REPR = re.compile(r"<[\w.]+(?: object| at 0x[0-9a-fA-F]+| object at 0x[0-9a-fA-F]+)>")


def strip_ansi(text: str) -> str:
    """Text without terminal colour and cursor codes."""
    return _ANSI.sub("", text)


def message_text(msg_type: str, content: dict[str, Any]) -> str:
    """What one IOPub output message of a cell says as plain text, as it comes (a long
    call's output so far): streams as printed, a display's or value's plain text (an image
    as its type), a traceback without colour codes; nothing for other messages."""
    if msg_type == "stream":
        return strip_ansi(str(content.get("text", "")))
    if msg_type in ("display_data", "execute_result"):
        bundle = content.get("data") or {}
        image = next((t for t in (*_IMAGE_TYPES, _SVG) if t in bundle), None)
        plain = f"[{image} image]" if image else strip_ansi(str(bundle.get("text/plain", "")))
        return plain + "\n" if plain else ""
    if msg_type == "error":
        traceback = strip_ansi("\n".join(content.get("traceback") or []))
        return (traceback or f"{content.get('ename')}: {content.get('evalue')}") + "\n"
    return ""


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
    error: dict[str, Any] | None = None
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

    def add_reply_error(self, content: dict[str, Any]) -> None:
        """The execute reply says the cell failed; keep its error if IOPub sent none."""
        if self.error is None:
            self.error = {"ename": str(content.get("ename") or "Error"),
                          "evalue": str(content.get("evalue") or "")}

    def add_error(self, text: str, error: dict[str, Any]) -> None:
        """An error found by other means (a JavaScript syntax check), shown as a traceback."""
        self.error = error
        self.outputs.append(_Output("error", text=text))

    @property
    def has_traceback(self) -> bool:
        return any(output.kind == "error" and output.text for output in self.outputs)

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
            picture = self._picture(bundle)
            if picture is not None:
                if images < self.max_images:
                    images += 1
                    blocks.append(picture)
                    texts.append(f"[{picture.get('mime_type', _SVG)} image {images}]")
                else:
                    dropped_images += 1
                continue
            rich = self._rich_block(bundle)
            bare = not plain.strip() or bool(_BARE_REPR.fullmatch(plain.strip()))
            readable = (self._readable(bundle) if bare else "") or plain
            if rich is not None:
                blocks.append(rich)
            if readable and (rich is None or not bare):
                blocks.append({"type": "text", "text": readable})
            if readable:
                texts.append(readable)
            if output.kind == "result":
                result_text = readable
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

    def _picture(self, bundle: dict[str, Any]) -> dict[str, Any] | None:
        """An image block (raster first), or None; an svg over the size bound is none."""
        image_type = next((t for t in _IMAGE_TYPES if t in bundle), None)
        if image_type:
            return {"type": "image", "mime_type": image_type,
                    "data": str(bundle[image_type]).replace("\n", "")}
        if _SVG in bundle and len(str(bundle[_SVG])) <= self.max_chars:
            return {"type": "svg", "svg": str(bundle[_SVG])}
        return None

    def _rich_block(self, bundle: dict[str, Any]) -> dict[str, Any] | None:
        """The richest non-image representation as a block, if it fits whole.

        A cut table or formula is no table or formula: over the bound, the text carries it.
        """
        for mime, kind in _RICH_TYPES:
            if mime not in bundle:
                continue
            value = bundle[mime]
            size = len(value if isinstance(value, str) else json.dumps(value, default=str))
            if size > self.max_chars:
                return None
            return {"type": kind, kind: value if kind == "json" else str(value)}
        return None

    def _readable(self, bundle: dict[str, Any]) -> str:
        """What the agent reads of a display whose text/plain is a bare repr: its source."""
        for mime in _READABLE_TYPES:
            if mime in bundle:
                value = bundle[mime]
                readable = value if isinstance(value, str) else json.dumps(value, indent=1,
                                                                           default=str)
                return bound_text(readable, self.max_chars, what=mime)[0]
        return ""
