"""Images saved in a notebook's outputs, fitted under a byte limit to be shown to an agent.

A matplotlib figure is 50-80 KB of PNG (70-100k characters of base64), more than many
clients of a tool take in one block. An image over the limit is downscaled (Pillow) until
its encoding fits; one that cannot fit at a useful size, or cannot be decoded, is left out
and says why. An SVG is text: it is shown whole when it fits, else left out.
"""

from __future__ import annotations

import base64
import binascii
import io
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

RASTER_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
SVG_TYPE = "image/svg+xml"
# Past this many pixels an image is not decoded at all (memory: 4 bytes a pixel).
MAX_DECODED_PIXELS = 40_000_000
# Downscaling stops here: a smaller picture shows nothing worth the tokens.
MIN_SIDE_PIXELS = 64
_MAX_ATTEMPTS = 6


@dataclass(frozen=True)
class SavedImage:
    """One image output of a cell, as shown (or why not)."""

    output: int  # the output's number among the cell's outputs, from 1
    mime_type: str  # of `data` (a downscaled GIF or WebP becomes PNG)
    data: bytes | None  # the encoded image (an SVG's UTF-8 text); None when left out
    saved_bytes: int  # the size of the image as saved in the notebook
    size: tuple[int, int] | None = None  # width and height shown (raster images)
    saved_size: tuple[int, int] | None = None  # as saved
    omitted: str | None = None  # why it is left out

    @property
    def downscaled(self) -> bool:
        return self.size is not None and self.size != self.saved_size

    def block(self) -> dict[str, Any]:
        """The result block: an image (base64) or an svg."""
        assert self.data is not None
        if self.mime_type == SVG_TYPE:
            return {"type": "svg", "svg": self.data.decode("utf-8")}
        return {"type": "image", "mime_type": self.mime_type,
                "data": base64.b64encode(self.data).decode("ascii")}

    def line(self) -> str:
        """What the text says of it, e.g. `image/png 640x480, 31,204 bytes (downscaled ...)`."""
        size = f" {self.size[0]}x{self.size[1]}" if self.size else ""
        if self.omitted is not None:
            return f"{self.mime_type}{size}: not shown, {self.omitted}"
        shown = f"{self.mime_type}{size}, {len(self.data or b''):,} bytes"
        if self.downscaled and self.saved_size is not None:
            width, height = self.saved_size
            shown += f" (downscaled from {width}x{height}, {self.saved_bytes:,} bytes)"
        return shown


def saved_images(outputs: Iterable[Mapping[str, Any]], max_bytes: int) -> list[SavedImage]:
    """The image of each output that has one (raster first, else SVG), each within
    `max_bytes` (downscaled) or left out saying why."""
    images = []
    for number, output in enumerate(outputs, 1):
        bundle = output.get("data")
        if not isinstance(bundle, Mapping):
            continue
        raster = next((kind for kind in RASTER_TYPES if kind in bundle), None)
        if raster is not None:
            images.append(_raster(number, raster, bundle[raster], max_bytes))
        elif SVG_TYPE in bundle:
            images.append(_svg(number, bundle[SVG_TYPE], max_bytes))
    return images


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _svg(number: int, value: Any, max_bytes: int) -> SavedImage:
    data = _joined(value).encode("utf-8")
    if len(data) > max_bytes:
        return SavedImage(number, SVG_TYPE, None, len(data),
                          omitted=f"{len(data):,} bytes of SVG, over the {max_bytes:,}-byte "
                                  "limit (max_read_image_bytes)")
    return SavedImage(number, SVG_TYPE, data, len(data))


def _raster(number: int, mime_type: str, value: Any, max_bytes: int) -> SavedImage:
    try:
        data = base64.b64decode(_joined(value), validate=False)
    except (binascii.Error, ValueError):
        return SavedImage(number, mime_type, None, 0, omitted="its base64 data is broken")
    from PIL import Image, UnidentifiedImageError  # imported when an image is asked for

    try:
        with Image.open(io.BytesIO(data)) as image:
            saved_size = image.size
            if len(data) <= max_bytes:
                return SavedImage(number, mime_type, data, len(data), saved_size, saved_size)
            if saved_size[0] * saved_size[1] > MAX_DECODED_PIXELS:
                return SavedImage(number, mime_type, None, len(data), saved_size, saved_size,
                                  omitted=f"{saved_size[0]}x{saved_size[1]} pixels is too "
                                          "large to downscale here")
            return _downscaled(number, mime_type, image, len(data), max_bytes)
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError):
        return SavedImage(number, mime_type, None, len(data),
                          omitted="Pillow cannot decode it")


def _downscaled(number: int, mime_type: str, image: Any, saved_bytes: int,
                max_bytes: int) -> SavedImage:
    """The image made smaller, step by step, until its encoding fits in `max_bytes`."""
    from PIL import Image

    saved_size = image.size
    # A JPEG stays a JPEG (a photo); other rasters become PNG, which keeps a plot's lines.
    out_type = "image/jpeg" if mime_type == "image/jpeg" else "image/png"
    image.load()
    if out_type == "image/jpeg" and image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    elif out_type == "image/png" and image.mode not in ("RGB", "RGBA", "L", "LA", "P"):
        image = image.convert("RGBA")
    # Encoded size grows about with the pixel count: scale by the square root of the excess.
    scale = math.sqrt(max_bytes / saved_bytes) * 0.95
    for _ in range(_MAX_ATTEMPTS):
        size = (max(1, round(saved_size[0] * scale)), max(1, round(saved_size[1] * scale)))
        if max(size) < MIN_SIDE_PIXELS:
            break
        smaller = image.resize(size, Image.Resampling.LANCZOS)
        buffer = io.BytesIO()
        if out_type == "image/jpeg":
            smaller.save(buffer, "JPEG", quality=85, optimize=True)
        else:
            smaller.save(buffer, "PNG", optimize=True)
        encoded = buffer.getvalue()
        if len(encoded) <= max_bytes:
            return SavedImage(number, out_type, encoded, saved_bytes, size, saved_size)
        scale *= math.sqrt(max_bytes / len(encoded)) * 0.9
    return SavedImage(number, mime_type, None, saved_bytes, saved_size=saved_size,
                      omitted=f"{saved_bytes:,} bytes, over the {max_bytes:,}-byte limit "
                              "(max_read_image_bytes) even downscaled to "
                              f"{MIN_SIDE_PIXELS} pixels")
