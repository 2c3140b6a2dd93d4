"""Call wrappers: the layers between the approval gate and the tool.

A wrapper is `async (ctx, args, call_next) -> ToolResult`. The runtime composes them,
outermost first: output limits, then whatever resources contribute (diagnostics on write).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Awaitable, Callable
from typing import Any

from ..notebooks.images import SavedImage, fit_image
from .limits import bound_data, bound_text
from .results import ToolResult
from .tool import CallContext

CallNext = Callable[[], Awaitable[ToolResult]]
Wrapper = Callable[[CallContext, Any, CallNext], Awaitable[ToolResult]]


def output_limit(max_chars: int, max_image_bytes: int | None = None) -> Wrapper:
    """Bound what an agent reads, whatever the tool produced: the text, and the structured
    content like it (the strings in `data`, and in every block but an image's pixels), each
    cut where it is longest, marked `truncated`; and every image within `max_image_bytes`,
    kept legible (`notebooks.images.fit_image`: fewer colours and the right format before
    fewer pixels)."""

    async def wrapper(_ctx: CallContext, _args: Any, call_next: CallNext) -> ToolResult:
        result = await call_next()
        if max_image_bytes is not None:
            await _fit_images(result, max_image_bytes)
        result.text, cut = bound_text(result.text, max_chars)
        result.data, data_cut = bound_data(result.data, max_chars)
        blocks_cut = False
        if result.blocks:
            readable = [i for i, block in enumerate(result.blocks)
                        if block.get("type") not in ("image", "svg")]
            bounded, blocks_cut = bound_data([result.blocks[i] for i in readable], max_chars)
            for i, block in zip(readable, bounded, strict=True):
                result.blocks[i] = block
        if cut or data_cut or blocks_cut:
            result.data.setdefault("truncated", True)
        return result

    return wrapper


async def _fit_images(result: ToolResult, max_bytes: int) -> None:
    """Each image block over `max_bytes` re-encoded (in a thread: Pillow's work) to fit, the
    text saying so; one that cannot fit is replaced by a text block saying why."""
    over = [(index, block) for index, block in enumerate(result.blocks)
            if block.get("type") == "image" and isinstance(block.get("data"), str)
            and len(block["data"]) * 3 // 4 > max_bytes]
    if not over:
        return
    fitted = await asyncio.to_thread(
        lambda: [_fitted(block, max_bytes) for _, block in over])
    said = []
    images = [i for i, block in enumerate(result.blocks) if block.get("type") == "image"]
    for (index, _), image in zip(over, fitted, strict=True):
        number = images.index(index) + 1
        if image.data is None:
            result.blocks[index] = {"type": "text",
                                    "text": f"[image {number}: {image.line()}]"}
        else:
            result.blocks[index] = image.block()
        said.append(f"[image {number}: {image.line()}]")
    result.text = "\n".join(text for text in [result.text, *said] if text)


def _fitted(block: dict[str, Any], max_bytes: int) -> SavedImage:
    try:
        data = base64.b64decode(block["data"], validate=False)
    except (binascii.Error, ValueError):
        return SavedImage(0, str(block.get("mime_type", "image/png")), None, 0,
                          omitted="its base64 data is broken")
    return fit_image(data, str(block.get("mime_type", "image/png")), max_bytes)


async def notes(ctx: CallContext, _args: Any, call_next: CallNext) -> ToolResult:
    """Append what inner wrappers noted on the context to the result's text."""
    result = await call_next()
    if ctx.notes:
        result.text = "\n\n".join(text for text in [result.text, *ctx.notes] if text)
    return result
