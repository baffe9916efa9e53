"""A `session/prompt`'s content blocks as the Agent's prompt: the text, and the context the
editor attached (embedded resources: a file or selection with its text; resource links: named;
images: PNG, JPEG, GIF or WebP, downscaled past the API's limits)."""

from __future__ import annotations

from typing import Any

from acp import RequestError
from acp.schema import (
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from agentls.history import Attachment, ContextPart, ImagePart
from agentls.session.images import ImageRefused, pasted_image


def prompt_of(blocks: list[Any]) -> tuple[str, list[Attachment]]:
    """(text, context) of the prompt's blocks. A kind this agent did not advertise (audio, a
    binary resource) or an image it cannot read is refused, naming the block; so is a prompt of
    neither text nor an image (one of images only is their image blocks alone)."""
    texts: list[str] = []
    context: list[Attachment] = []
    for index, block in enumerate(blocks):
        if isinstance(block, TextContentBlock):
            texts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            texts.append(f"[{block.name}]({block.uri})")
        elif isinstance(block, EmbeddedResourceContentBlock) and isinstance(
            block.resource, TextResourceContents
        ):
            context.append(ContextPart(uri=block.resource.uri, text=block.resource.text))
        elif isinstance(block, ImageContentBlock):
            try:
                image = pasted_image(block.data)
            except ImageRefused as exc:
                raise RequestError.invalid_params(
                    {"field": f"prompt[{index}]", "message": str(exc)}
                ) from None
            context.append(image.model_copy(update={"uri": block.uri}))
        else:
            raise RequestError.invalid_params(
                {
                    "field": f"prompt[{index}]",
                    "message": f"content of type {block.type!r} is not supported here "
                    "(text, images, resource links and embedded text resources are)",
                }
            )
    text = "\n".join(texts)
    if not text.strip() and not any(isinstance(c, ImagePart) for c in context):
        raise RequestError.invalid_params(
            {"field": "prompt", "message": "a prompt needs text, or an image"}
        )
    return text, context
