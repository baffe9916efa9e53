"""A user message of image blocks only, as the API takes it (issue 16 item 5): accepted alone; an
empty or blank text block beside the image is refused, as the API refuses it, naming the block."""

from __future__ import annotations

from typing import Any

import pytest

from messages_api.validation import validate_request
from tests.messages_api.conftest import body
from tests.messages_api.test_image_validation import image, png_b64


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return body([{"role": "user", "content": list(blocks)}])


def test_a_message_of_only_an_image_is_accepted() -> None:
    assert validate_request(user(image(png_b64()))) is None
    assert validate_request(user(image(png_b64()), image(png_b64(2, 2)))) is None


@pytest.mark.parametrize(
    ("blank", "expected"),
    [
        ("", "messages.0.content.1.text: text content blocks must be non-empty"),
        (" \n", "messages.0.content.1.text: text content blocks must contain non-whitespace"),
    ],
)
def test_a_blank_text_block_beside_an_image_is_refused(blank: str, expected: str) -> None:
    problem = validate_request(user(image(png_b64()), {"type": "text", "text": blank}))
    assert problem is not None and expected in problem
