"""The provider's first call sets up the SDK client (the SDK's import, TLS) off the event loop."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from agentls.model.anthropic_provider import AnthropicProvider
from agentls.model.base import ModelRequest, TextDelta
from messages_api import MessagesAPIServer, reply, text


class SlowSetupProvider(AnthropicProvider):
    """The real provider; its client setup takes as long as a cold `import anthropic` does."""

    setup_threads: list[str]

    def client(self) -> Any:
        if self._client is None:
            self.setup_threads.append(threading.current_thread().name)
            time.sleep(0.4)
        return super().client()


async def test_the_event_loop_keeps_running_while_the_client_is_set_up(
    api: MessagesAPIServer,
) -> None:
    api.enqueue(reply(text("hello")))
    provider = SlowSetupProvider(api_key="test-key", base_url=api.url)
    provider.setup_threads = []
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    tick_task = asyncio.create_task(ticker())
    request = ModelRequest(
        model="claude-sonnet-5-5",
        system=[{"type": "text", "text": "system"}],
        messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        tools=[],
        max_tokens=100,
    )
    try:
        got = "".join([e.text async for e in provider.stream(request) if isinstance(e, TextDelta)])
    finally:
        tick_task.cancel()
        await provider.aclose()
    assert got == "hello"
    # Set up once, on another thread; meanwhile the loop went on (0.4 s at 10 ms a tick).
    assert provider.setup_threads and provider.setup_threads[0] != threading.main_thread().name
    assert len(provider.setup_threads) == 1
    assert ticks >= 10
