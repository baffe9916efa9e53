"""Images through the loop against the local Messages API (which validates image blocks as the
API does): a prompt's image stored and sent, read of an image file, one too large downscaled, a
corrupt one a clear error, the history still valid after a reload."""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from agentls.history import ImagePart
from agentls.images import ImageError, prepare
from agentls.store import Store
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory


def png(width: int, height: int, color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), color).save(out, format="PNG")
    return out.getvalue()


def noisy_png(width: int, height: int) -> bytes:
    """A PNG that does not compress (random pixels): large in bytes."""
    out = io.BytesIO()
    Image.frombytes("RGB", (width, height), os.urandom(width * height * 3)).save(out, "PNG")
    return out.getvalue()


def size_of(block: dict[str, Any]) -> tuple[int, int]:
    raw = base64.b64decode(block["source"]["data"])
    with Image.open(io.BytesIO(raw)) as image:
        return image.size


def images_in(content: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(content, list):
        for block in content:
            if block.get("type") == "image":
                found.append(block)
            found += images_in(block.get("content"))
    return found


async def test_a_prompt_image_is_stored_sent_and_sent_again_after_a_reload(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path
) -> None:
    h = await make_harness()
    image = prepare(png(40, 20))
    api.enqueue(reply(text("a red box")), reply(text("still red")))
    session = await h.agent.new_session()
    part = ImagePart(media_type=image.media_type, data=image.data, uri="file:///tmp/box.png")
    result = await h.agent.prompt(session.id, "what is this?", [part])
    assert result.finish_reason == "end_turn"
    [first] = h.accepted_requests()
    content = first["messages"][0]["content"]
    assert [b["type"] for b in content] == ["image", "text"]
    assert content[0]["source"] == {"type": "base64", "media_type": "image/png", "data": image.data}
    # Stored with the message: another store (a restart) reads it back, and a new agent sends
    # it again with the next prompt (the history as the API validates it).
    other = await Store.open(h.store.path)
    try:
        [user, _] = await other.load_messages(session.id)
        [stored] = [p for p in user.parts if isinstance(p, ImagePart)]
        assert stored.data == image.data and stored.uri == "file:///tmp/box.png"
    finally:
        await other.close()
    await h.agent.aclose()
    h2 = await make_harness()
    again = await h2.agent.prompt(session.id, "and now?")
    assert again.finish_reason == "end_turn"
    second = h2.accepted_requests()[-1]
    assert images_in(second["messages"][0]["content"])[0]["source"]["data"] == image.data


async def test_read_of_a_png_is_an_image_block(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    (h.root / "shot.png").write_bytes(png(30, 30))
    api.enqueue(reply(tool_use("read", {"path": "shot.png"})), reply(text("a square")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "look at shot.png")
    body = h.accepted_requests()[1]
    [res] = [b for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert not res.get("is_error")
    [block] = images_in([res])
    assert block["source"]["media_type"] == "image/png" and size_of(block) == (30, 30)
    assert "shot.png: image/png, 30x30" in res["content"][0]["text"]


async def test_an_image_past_the_limits_is_downscaled(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    (h.root / "wide.png").write_bytes(png(9000, 300))  # over 8000 px: the API refuses it
    api.enqueue(reply(tool_use("read", {"path": "wide.png"})), reply(text("wide")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "look")
    body = h.accepted_requests()[1]
    [res] = [b for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]
    [block] = images_in([res])
    assert size_of(block) == (1568, 52)
    assert "downscaled from 9000x300" in res["content"][0]["text"]


def test_a_large_file_is_downscaled_below_5_mb() -> None:
    raw = noisy_png(2000, 1500)  # ~9 MB: past 5 MB of base64
    assert len(raw) > 5 * 1024 * 1024
    image = prepare(raw)
    assert len(image.data) <= 5 * 1024 * 1024
    assert max(image.width, image.height) == 1568 and image.scaled_from == (2000, 1500)


async def test_a_corrupt_image_is_a_clear_error(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    (h.root / "broken.png").write_bytes(png(30, 30)[:60])
    (h.root / "fake.jpg").write_text("not an image at all\n")
    api.enqueue(
        reply(
            tool_use("read", {"path": "broken.png"}, id="toolu_a"),
            tool_use("read", {"path": "fake.jpg"}, id="toolu_b"),
        ),  # fmt: skip
        reply(text("both broken")),
    )
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "look")
    body = h.accepted_requests()[1]
    results = [b for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert [r.get("is_error") for r in results] == [True, True]
    assert "Cannot show broken.png as an image: it is corrupt or truncated" in results[0]["content"]
    assert "Cannot show fake.jpg as an image: it is not an image" in results[1]["content"]
    assert not images_in(results)


def test_prepare_refuses_other_formats() -> None:
    out = io.BytesIO()
    Image.new("RGB", (4, 4)).save(out, format="BMP")
    with pytest.raises(ImageError, match="not one of PNG, JPEG, GIF, WebP"):
        prepare(out.getvalue())


def test_a_huge_canvas_is_refused_before_it_is_decoded() -> None:
    out = io.BytesIO()
    Image.new("1", (10_000, 6_000)).save(out, format="PNG")  # small file, 60 million pixels
    with pytest.raises(ImageError, match="10000x6000 pixels, too many to decode"):
        prepare(out.getvalue())


@pytest.mark.parametrize("blank", ["", "  \n"])
async def test_the_agent_refuses_a_prompt_of_nothing(
    make_harness: HarnessFactory, api: MessagesAPIServer, blank: str
) -> None:
    from agentls.session import CommandError

    h = await make_harness()
    session = (await h.agent.new_session()).id
    with pytest.raises(CommandError, match="needs text, or an image"):
        await h.agent.prompt(session, blank)
    assert api.requests == [] and (await h.agent.session(session)).messages == []
