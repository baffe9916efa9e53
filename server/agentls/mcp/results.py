"""A tools/call result as what the model reads: text, embedded resources and images, with the
usual output cap (bash's: the first and the last 15 KB; McpTool saves the whole text)."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types

from agentls.tools.bash import HEAD_BYTES, TAIL_BYTES
from agentls.tools.support.text import human_size

# Images the API reads (the rest are described, not sent).
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
# The API refuses an image over 5 MB (base64 of up to 3.75 MB of bytes).
MAX_IMAGE_BASE64 = 5 * 1024 * 1024
# And a request over 32 MB: one result's images together stay well under it (they are sent again
# with every later request of the session).
MAX_IMAGES_BASE64 = 8 * 1024 * 1024
MAX_IMAGES = 8


@dataclass
class McpOutput:
    text: str
    is_error: bool = False
    # (media type, base64 data) of each image the model can see.
    images: list[tuple[str, str]] = field(default_factory=list)
    # The whole text when `text` was cut (McpTool saves it: tools/support/outputs.py).
    full: str | None = None


def cap(text: str, head: int = HEAD_BYTES, tail: int = TAIL_BYTES) -> str:
    """The text, or its start and end with a line saying how much was left out between."""
    if len(text) <= head + tail:
        return text
    omitted = len(text) - head - tail
    return (
        text[:head]
        + f"\n[... {omitted} characters of the tool's output omitted here; only the start and "
        "the end are shown ...]\n" + text[-tail:]
    )


def _image(mime: str, data: str, where: str, out: McpOutput, pieces: list[str]) -> None:
    if mime not in IMAGE_TYPES:
        pieces.append(f"[{where}: {mime}, not shown: the model reads only PNG, JPEG, GIF, WebP]")
        return
    if len(data) > MAX_IMAGE_BASE64:
        pieces.append(f"[{where}: {mime}, {human_size(len(data) * 3 // 4)}: too large to show]")
        return
    shown = sum(len(d) for _, d in out.images)
    if len(out.images) >= MAX_IMAGES or shown + len(data) > MAX_IMAGES_BASE64:
        pieces.append(
            f"[{where}: {mime}, {human_size(len(data) * 3 // 4)}: not shown: this result's images "
            f"already reach the limit ({MAX_IMAGES} images, {human_size(MAX_IMAGES_BASE64)})]"
        )
        return
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        pieces.append(f"[{where}: {mime}, not valid base64: not shown]")
        return
    out.images.append((mime, data))
    pieces.append(f"[{where} {len(out.images)}: {mime}, shown to the model]")


def _resource(resource: types.TextResourceContents | types.BlobResourceContents) -> str:
    mime = resource.mime_type or "unknown type"
    if isinstance(resource, types.TextResourceContents):
        return f"[resource {resource.uri} ({mime})]\n{resource.text}"
    size = len(resource.blob) * 3 // 4
    return f"[resource {resource.uri}: {mime}, {human_size(size)} of binary data, not shown]"


def convert(result: types.CallToolResult) -> McpOutput:
    """Text blocks as they are, embedded text resources with their uri, resource links as a line,
    images as images (within the API's limits), audio and binary described; structured content
    when there is no other."""
    out = McpOutput(text="", is_error=bool(result.is_error))
    pieces: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            pieces.append(block.text)
        elif isinstance(block, types.ImageContent):
            _image(block.mime_type, block.data, "image", out, pieces)
        elif isinstance(block, types.EmbeddedResource):
            resource = block.resource
            mime = resource.mime_type or ""
            if isinstance(resource, types.BlobResourceContents) and mime in IMAGE_TYPES:
                _image(mime, resource.blob, f"resource {resource.uri}", out, pieces)
            else:
                pieces.append(_resource(resource))
        elif isinstance(block, types.ResourceLink):
            pieces.append(f"[resource link {block.uri}: {block.name}]")
        elif isinstance(block, types.AudioContent):
            size = len(block.data) * 3 // 4
            pieces.append(f"[audio: {block.mime_type}, {human_size(size)}, not shown]")
    if not pieces and result.structured_content is not None:
        pieces.append(_json(result.structured_content))
    whole = "\n".join(pieces)
    out.text = cap(whole) if pieces else "(no output)"
    if pieces and out.text != whole:
        out.full = whole
    return out


def resource_contents(
    contents: list[types.TextResourceContents | types.BlobResourceContents],
) -> McpOutput:
    """A resources/read answer (or a prompt's embedded resources): text with its uri, images as
    images, other binary data described."""
    out = McpOutput(text="")
    pieces: list[str] = []
    for resource in contents:
        mime = resource.mime_type or ""
        if isinstance(resource, types.BlobResourceContents) and mime in IMAGE_TYPES:
            _image(mime, resource.blob, f"resource {resource.uri}", out, pieces)
        else:
            pieces.append(_resource(resource))
    whole = "\n".join(pieces)
    out.text = cap(whole) if pieces else "(the resource is empty)"
    if pieces and out.text != whole:
        out.full = whole
    return out


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=1)
    except (TypeError, ValueError):
        return str(value)
