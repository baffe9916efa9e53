"""Image blocks as the API validates them (messages_api.validation.image_block): base64 of one of
four media types, valid, at most 5 MB, a readable image of at most 8000 px a side; or a url.
Also inside a tool_result."""

from __future__ import annotations

import base64
import io
from typing import Any

import anthropic
import pytest
from PIL import Image

from agentls.images import prepare
from messages_api import MessagesAPIServer
from messages_api.validation import validate_request
from tests.messages_api.conftest import body, sclient


def png_b64(width: int = 4, height: int = 4) -> str:
    out = io.BytesIO()
    Image.new("RGB", (width, height)).save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()


def image(data: str, media_type: str = "image/png", kind: str = "base64") -> dict[str, Any]:
    return {"type": "image", "source": {"type": kind, "media_type": media_type, "data": data}}


def asking(*blocks: dict[str, Any]) -> dict[str, Any]:
    return body([{"role": "user", "content": [*blocks, {"type": "text", "text": "what?"}]}])


def in_tool_result(block: dict[str, Any]) -> dict[str, Any]:
    use = {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": [block]}
    return body(
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [result]},
        ],
        tools=[{"name": "read", "input_schema": {"type": "object"}}],
    )


INVALID = [
    ("bmp", asking(image(png_b64(), "image/bmp")), "media_type: Input should be 'image/jpeg'"),
    ("not base64", asking(image("@@@not base64@@@")), "data: Invalid base64 data"),
    ("not an image", asking(image(base64.b64encode(b"hello").decode())), "Could not process"),
    ("over 5 MB", asking(image("A" * (5 * 1024 * 1024 + 4))), "image exceeds 5 MB maximum"),
    ("over 8000 px", asking(image(png_b64(8001, 2))), "exceed max allowed size: 8000 pixels"),
    ("bad source", asking(image(png_b64(), kind="file")), "expected tags: 'base64', 'url'"),
    ("no source", asking({"type": "image"}), "content.0.image.source: Field required"),
    ("in a tool_result", in_tool_result(image("%%")), "tool_result.content.0.image.source"),
]


@pytest.mark.parametrize(
    ("req", "expected"), [(b, e) for _, b, e in INVALID], ids=[c for c, _, _ in INVALID]
)
def test_an_invalid_image_is_refused(
    srv: MessagesAPIServer, req: dict[str, Any], expected: str
) -> None:
    srv.enqueue("must not be consumed")
    with pytest.raises(anthropic.BadRequestError) as info:
        sclient(srv).post("/v1/messages", cast_to=object, body=req)
    assert info.value.api_message is not None and expected in info.value.api_message
    assert srv.pending == 1


@pytest.mark.parametrize(
    "req",
    [
        asking(image(png_b64())),
        asking(image(png_b64(8000, 1), "image/png")),
        asking({"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}),
        in_tool_result(image(png_b64())),
    ],
    ids=["png", "8000 px", "url", "in a tool_result"],
)
def test_a_valid_image_is_accepted(req: dict[str, Any]) -> None:
    assert validate_request(req) is None


def with_bad_text_chunk() -> bytes:
    """A PNG with a tEXt chunk whose CRC is wrong (as the MCP reference server's tiny image has
    in its iCCP chunk): decoders skip it; a bad CRC in IDAT is a corrupt file."""
    raw = base64.b64decode(png_b64())
    chunk = (5).to_bytes(4, "big") + b"tEXta\x00bcd" + b"\x00\x00\x00\x00"
    return raw[:33] + chunk + raw[33:]


def test_an_ancillary_chunk_with_a_bad_crc_is_skipped_as_decoders_do() -> None:
    raw = with_bad_text_chunk()
    assert validate_request(asking(image(base64.b64encode(raw).decode()))) is None
    assert prepare(raw).width == 4
    broken = bytearray(raw)
    idat = broken.index(b"IDAT")
    broken[idat + 6] ^= 0xFF  # the image data itself, under its CRC
    problem = validate_request(asking(image(base64.b64encode(bytes(broken)).decode())))
    assert problem is not None and "Could not process image" in problem
