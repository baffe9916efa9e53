"""ACP image prompts: initialize advertises them, an image content block reaches the model as an
image block (before the text) and a session/load replays it; one that is no image is refused
with Invalid params naming the block."""

from __future__ import annotations

import asyncio
import base64
import io

import pytest
from acp import RequestError
from acp.schema import ImageContentBlock, TextContentBlock
from PIL import Image

from messages_api import reply, text
from tests.acp.conftest import TURN_S, AcpEnv, ScriptedClient, connect


def png_b64() -> str:
    out = io.BytesIO()
    Image.new("RGB", (6, 6), (250, 200, 0)).save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()


async def test_an_image_prompt_is_sent_and_replayed(acp_env: AcpEnv) -> None:
    client = ScriptedClient(files={})
    async with connect(acp_env, client) as acp:
        assert acp.init.agent_capabilities.prompt_capabilities.image is True
        data = png_b64()
        sid = (await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[])).session_id
        acp_env.api.enqueue(reply(text("a yellow square")))
        blocks = [
            ImageContentBlock(type="image", mime_type="image/png", data=data),
            TextContentBlock(type="text", text="what is it?"),
        ]
        result = await asyncio.wait_for(acp.conn.prompt(session_id=sid, prompt=blocks), TURN_S)
        assert result.stop_reason == "end_turn"
        content = acp_env.api.requests[-1].body["messages"][0]["content"]
        assert [b["type"] for b in content] == ["image", "text"]
        assert content[0]["source"] == {"type": "base64", "media_type": "image/png", "data": data}

        client.updates.clear()
        await acp.conn.load_session(cwd=str(acp.root), session_id=sid, mcp_servers=[])
        shown = [u.content for u in client.of("user_message_chunk", sid)]
        assert [c.type for c in shown] == ["image", "text"]
        assert shown[0].data == data and shown[0].mime_type == "image/png"

        sent = len(acp_env.api.all_requests)
        with pytest.raises(RequestError) as refused:
            bad = ImageContentBlock(type="image", mime_type="image/png", data="bm90IGFuIGltYWdl")
            await acp.conn.prompt(session_id=sid, prompt=[bad])
        assert refused.value.code == -32602 and "prompt[0]" in str(refused.value.data)
        assert "not an image" in str(refused.value.data)
        assert len(acp_env.api.all_requests) == sent
