"""A `session/prompt`'s content blocks as the Agent's prompt: the text, and the context the
editor attached (embedded resources: a file or selection with its text; resource links: named)."""

from __future__ import annotations

from typing import Any

from acp import RequestError
from acp.schema import (
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from agentls.history import ContextPart


def prompt_of(blocks: list[Any]) -> tuple[str, list[ContextPart]]:
    """(text, context) of the prompt's blocks. A kind this agent did not advertise (image,
    audio, a binary resource) is refused, naming the block."""
    texts: list[str] = []
    context: list[ContextPart] = []
    for index, block in enumerate(blocks):
        if isinstance(block, TextContentBlock):
            texts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            texts.append(f"[{block.name}]({block.uri})")
        elif isinstance(block, EmbeddedResourceContentBlock) and isinstance(
            block.resource, TextResourceContents
        ):
            context.append(ContextPart(uri=block.resource.uri, text=block.resource.text))
        else:
            raise RequestError.invalid_params(
                {
                    "field": f"prompt[{index}]",
                    "message": f"content of type {block.type!r} is not supported here "
                    "(text, resource links and embedded text resources are)",
                }
            )
    return "\n".join(texts), context
