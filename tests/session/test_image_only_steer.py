"""A steer of images only (issue 16 item 5): it joins the running turn as a user message of the
tool results and the image block, with no text block (the local Messages API refuses a blank one,
as the API does)."""

from __future__ import annotations

import asyncio
import base64
import io

from PIL import Image

from agentls.session.images import pasted_image
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory


def png_b64() -> str:
    out = io.BytesIO()
    Image.new("RGB", (5, 5), (200, 0, 0)).save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()


async def test_a_steer_of_only_an_image_joins_the_turn_without_a_text_block(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(reply(tool_use("bash", {"command": "echo one"})), reply(text("a red square")))
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "run it"))
    asked = await h.wait_for("permission-request")
    picture = pasted_image(png_b64())
    steer = asyncio.create_task(h.agent.prompt(session.id, " ", [picture], mode="steer"))
    state = await h.agent.session(session.id)

    async def steer_waits() -> None:  # for the turn's next step
        while not state.steers:
            await asyncio.sleep(0)

    await asyncio.wait_for(steer_waits(), 10)
    h.agent.approve(session.id, asked.request_id, "once")
    result = await asyncio.wait_for(turn, 10)
    assert await asyncio.wait_for(steer, 10) == result
    last = h.accepted_requests()[1]["messages"][-1]
    assert [b["type"] for b in last["content"]] == ["tool_result", "image"]
    assert last["content"][1]["source"]["data"] == picture.data
    messages = await h.store.load_messages(session.id)
    assert [p.type for p in messages[2].parts] == ["image"]
