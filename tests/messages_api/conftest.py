"""The Messages-API server's tests: a server per test, SDK clients closed after it, a request body."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anthropic
import pytest
from anthropic.types import MessageParam

from messages_api import MessagesAPIServer

MODEL = "claude-test"
USER: MessageParam = {"role": "user", "content": "hi"}


@pytest.fixture
def srv() -> Iterator[MessagesAPIServer]:
    with MessagesAPIServer() as server:
        yield server


_SSL = ssl.create_default_context()  # building one per client costs ~50 ms
_OPEN: list[anthropic.Anthropic | anthropic.AsyncAnthropic] = []  # closed after each test


def aclient(srv: MessagesAPIServer | str, api_key: str = "test") -> anthropic.AsyncAnthropic:
    url = srv if isinstance(srv, str) else srv.url
    http = anthropic.DefaultAsyncHttpxClient(verify=_SSL)
    client = anthropic.AsyncAnthropic(
        base_url=url, api_key=api_key, max_retries=0, http_client=http
    )
    _OPEN.append(client)
    return client


def sclient(srv: MessagesAPIServer | str, api_key: str = "test") -> anthropic.Anthropic:
    url = srv if isinstance(srv, str) else srv.url
    http = anthropic.DefaultHttpxClient(verify=_SSL)
    client = anthropic.Anthropic(base_url=url, api_key=api_key, max_retries=0, http_client=http)
    _OPEN.append(client)
    return client


@pytest.fixture(autouse=True)
async def _close_clients() -> AsyncIterator[None]:
    yield
    while _OPEN:
        client = _OPEN.pop()
        if isinstance(client, anthropic.AsyncAnthropic):
            await client.close()
        else:
            client.close()


def body(messages: list[Any], **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 64, "messages": messages, **extra}
