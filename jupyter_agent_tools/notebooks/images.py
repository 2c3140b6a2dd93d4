"""Images saved in a notebook's outputs, fitted under a byte limit to be shown to an agent.

A matplotlib figure is 50-80 KB of PNG (70-100k characters of base64), more than many
clients of a tool take in one block. An image over the limit is first re-encoded (Pillow)
in fewer colours or a better format (a palette PNG for a plot, a JPEG for a photo), and
only then downscaled until its encoding fits, so that it stays legible; one that cannot fit
at a useful size, or cannot be decoded, is left out and says why. An SVG is text: it is
shown whole when it fits, else left out. `fit_image` is the one cap of every image a tool
returns (eval, notebook run, read).
"""

from __future__ import annotations

import base64
import binascii
import io
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

RASTER_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
SVG_TYPE = "image/svg+xml"
# Past this many pixels an image is not decoded at all (memory: 4 bytes a pixel).
MAX_DECODED_PIXELS = 40_000_000
# Downscaling stops here: a smaller picture shows nothing worth the tokens.
MIN_SIDE_PIXELS = 64
# No image wider or taller than this is returned (a 3925x2210 figure is shown at this size):
# more pixels than a model looks at.
MAX_SIDE_PIXELS = 2000
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
    reduced: str | None = None  # how it was re-encoded to fit ("palette PNG", "JPEG")

    @property
    def downscaled(self) -> bool:
        return self.size is not None and self.size != self.saved_size

    @property
    def changed(self) -> bool:
        """Whether what is shown differs from what was saved (re-encoded, downscaled)."""
        return self.reduced is not None

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
        if self.reduced is not None and self.saved_size is not None:
            width, height = self.saved_size
            how = "downscaled" if self.downscaled else "re-encoded"
            shown += (f" ({how} as {self.reduced} from {width}x{height}, "
                      f"{self.saved_bytes:,} bytes)")
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
    return fit_image(data, mime_type, max_bytes, number=number)


def fit_image(data: bytes, mime_type: str, max_bytes: int, *, number: int = 0) -> SavedImage:
    """The image (encoded as `mime_type`) within `max_bytes` and `MAX_SIDE_PIXELS`, kept
    legible: first its colours are reduced and its format chosen (a palette PNG for a plot, a
    JPEG for a photo), and only then its pixels, no more than it takes; or left out, saying
    why. The one cap of every image a tool returns (`runtime.wrappers.output_limit`)."""
    from PIL import Image, UnidentifiedImageError  # imported when an image is asked for

    try:
        with Image.open(io.BytesIO(data)) as image:
            saved_size = image.size
            if len(data) <= max_bytes and max(saved_size) <= MAX_SIDE_PIXELS:
                return SavedImage(number, mime_type, data, len(data), saved_size, saved_size)
            if saved_size[0] * saved_size[1] > MAX_DECODED_PIXELS:
                return SavedImage(number, mime_type, None, len(data), saved_size, saved_size,
                                  omitted=f"{saved_size[0]}x{saved_size[1]} pixels is too "
                                          "large to downscale here")
            return _reduced(number, mime_type, image, len(data), max_bytes)
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError):
        return SavedImage(number, mime_type, None, len(data),
                          omitted="Pillow cannot decode it")


def _encoders(mime_type: str, image: Any) -> list[tuple[str, str, Callable[[Any], bytes]]]:
    """How to encode the image smaller, best first: (mime type, how, encode)."""
    from PIL import Image

    def palette(picture: Any) -> bytes:
        rgba = picture.convert("RGBA")
        quantized = rgba.quantize(256, method=Image.Quantize.FASTOCTREE)
        buffer = io.BytesIO()
        quantized.save(buffer, "PNG", optimize=True)
        return buffer.getvalue()

    def jpeg(picture: Any) -> bytes:
        buffer = io.BytesIO()
        flat = picture.convert("RGBA")
        background = Image.new("RGB", flat.size, "white")  # transparency becomes white
        background.paste(flat, mask=flat.getchannel("A"))
        background.save(buffer, "JPEG", quality=85, optimize=True)
        return buffer.getvalue()

    png = ("image/png", "palette PNG", palette)
    jpg = ("image/jpeg", "JPEG", jpeg)
    if mime_type == "image/jpeg":
        return [jpg]
    # A plot has few colours (lines, text, flat fills, their anti-aliasing): a palette PNG
    # keeps it sharp. A photo has many: a JPEG holds it in far fewer bytes.
    sample = image.copy()
    sample.thumbnail((256, 256))
    colours = sample.convert("RGB").getcolors(maxcolors=4096)
    return [png, jpg] if colours is not None else [jpg, png]


def _reduced(number: int, mime_type: str, image: Any, saved_bytes: int,
             max_bytes: int) -> SavedImage:
    """The image encoded in fewer colours or another format, then, if it still does not fit,
    made smaller step by step until it does (never under `MIN_SIDE_PIXELS`)."""
    from PIL import Image

    saved_size = image.size
    image.load()
    encoders = _encoders(mime_type, image)
    scale = min(1.0, MAX_SIDE_PIXELS / max(saved_size))
    for _ in range(_MAX_ATTEMPTS):
        size = (max(1, round(saved_size[0] * scale)), max(1, round(saved_size[1] * scale)))
        if max(size) < MIN_SIDE_PIXELS:
            break
        picture = image if size == saved_size else image.resize(size, Image.Resampling.LANCZOS)
        smallest = 0
        for out_type, how, encode in encoders:
            encoded = encode(picture)
            if len(encoded) <= max_bytes:
                return SavedImage(number, out_type, encoded, saved_bytes, size, saved_size,
                                  reduced=how)
            smallest = min(smallest or len(encoded), len(encoded))
        # Encoded size grows about with the pixel count: scale by the root of the excess.
        scale *= math.sqrt(max_bytes / smallest) * 0.95
    return SavedImage(number, mime_type, None, saved_bytes, saved_size=saved_size,
                      omitted=f"{saved_bytes:,} bytes, over the {max_bytes:,}-byte image limit "
                              "(c.Runtime.max_read_image_bytes) even downscaled to "
                              f"{MIN_SIDE_PIXELS} pixels")
