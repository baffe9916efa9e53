"""An ACP prompt of image blocks only (issue 16 item 5): the model gets the image block alone (no
text block), session/load replays only the image, the session is titled "Image"; a prompt of
neither text nor an image is Invalid params naming prompt, and nothing is sent."""

from __future__ import annotations

import asyncio

import pytest
from acp import RequestError
from acp.schema import ImageContentBlock, TextContentBlock

from messages_api import reply, text
from tests.acp.conftest import TURN_S, AcpEnv, ScriptedClient, connect
from tests.acp.test_images import png_b64


async def test_a_prompt_of_only_an_image(acp_env: AcpEnv) -> None:
    client = ScriptedClient(files={})
    async with connect(acp_env, client) as acp:
        data = png_b64()
        sid = (await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[])).session_id
        acp_env.api.enqueue(reply(text("a yellow square")))
        blocks = [ImageContentBlock(type="image", mime_type="image/png", data=data)]
        result = await asyncio.wait_for(acp.conn.prompt(session_id=sid, prompt=blocks), TURN_S)
        assert result.stop_reason == "end_turn"
        content = acp_env.api.requests[-1].body["messages"][0]["content"]
        assert [b["type"] for b in content] == ["image"]
        assert content[0]["source"] == {"type": "base64", "media_type": "image/png", "data": data}
        listed = await acp.conn.list_sessions(cwd=str(acp.root))
        assert [s.title for s in listed.sessions if s.session_id == sid] == ["Image"]

        client.updates.clear()
        await acp.conn.load_session(cwd=str(acp.root), session_id=sid, mcp_servers=[])
        shown = [u.content for u in client.of("user_message_chunk", sid)]
        assert [c.type for c in shown] == ["image"]

        sent = len(acp_env.api.all_requests)
        for empty in ([], [TextContentBlock(type="text", text=" \n")]):
            with pytest.raises(RequestError) as refused:
                await acp.conn.prompt(session_id=sid, prompt=empty)
            assert refused.value.code == -32602
            assert "'field': 'prompt'" in str(refused.value.data)
            assert "needs text, or an image" in str(refused.value.data)
        assert len(acp_env.api.all_requests) == sent
