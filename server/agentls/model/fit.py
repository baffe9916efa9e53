"""A request cut down to what its model takes: no thinking parameter for a model without
extended thinking, no cache breakpoints for one without prompt caching, and images replaced by a
line saying so for a text-only model. The history is never changed: messages with images are
copied (ApiHistory hands out the same dicts at every step)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from agentls.model.base import ModelRequest
from agentls.model.catalog import ModelInfo, model_info

IMAGE_OMITTED = "[an image was here; this model does not take images]"


def fit_request(request: ModelRequest, info: ModelInfo | None = None) -> ModelRequest:
    info = info or model_info(request.model)
    changes: dict[str, Any] = {}
    if request.thinking is not None and not info.thinking:
        changes["thinking"] = None
    if request.output_config is not None and not (info.thinking and info.adaptive_thinking):
        changes["output_config"] = None  # effort steers adaptive thinking only
    if request.cache and not info.caching:
        changes["cache"] = False
    if not info.images:
        messages = without_images(request.messages)
        if messages is not request.messages:
            changes["messages"] = messages
    return replace(request, **changes) if changes else request


def _blocks_without_images(blocks: list[Any]) -> list[Any] | None:
    """The blocks with each image (also inside a tool_result) a text line; None: no image."""
    out: list[Any] | None = None
    for i, block in enumerate(blocks):
        new = block
        if isinstance(block, dict) and block.get("type") == "image":
            new = {"type": "text", "text": IMAGE_OMITTED}
        elif isinstance(block, dict) and isinstance(block.get("content"), list):
            inner = _blocks_without_images(block["content"])
            if inner is not None:
                new = {**block, "content": inner}
        if new is not block:
            if out is None:
                out = list(blocks[:i])
            out.append(new)
        elif out is not None:
            out.append(block)
    return out


def without_images(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` itself when none holds an image, else a copy with each image a text line."""
    out: list[dict[str, Any]] | None = None
    for i, message in enumerate(messages):
        content = message.get("content")
        new = message
        if isinstance(content, list):
            blocks = _blocks_without_images(content)
            if blocks is not None:
                new = {**message, "content": blocks}
        if new is not message and out is None:
            out = list(messages[:i])
        if out is not None:
            out.append(new)
    return messages if out is None else out
