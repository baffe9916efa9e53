"""ask_user in an ACP editor: session/request_permission with a choice an option (the user's
own words in `_meta.feedback`), or elicitation/create's form when the client offers it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import pytest_asyncio
from acp.schema import AcceptElicitationResponse, DeclineElicitationResponse, TextContentBlock

from messages_api import reply, text, tool_use
from tests.acp.conftest import TURN_S, AcpEnv, Connection, ScriptedClient, connect

pytestmark = pytest.mark.asyncio(loop_scope="module")

CALL = {"question": "Which database?", "choices": ["SQLite", "Postgres"]}


@dataclass
class FormClient(ScriptedClient):
    """A client that shows elicitation forms, answering them from `forms` in order."""

    forms: list[Any] = field(default_factory=list)
    asked: list[tuple[str, Any]] = field(default_factory=list)

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        self.asked.append((message, mode))
        return self.forms.pop(0)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def acp(acp_env: AcpEnv) -> AsyncIterator[Connection]:
    async with connect(acp_env, ScriptedClient(files={})) as connection:
        yield connection


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def acp_forms(acp_env: AcpEnv) -> AsyncIterator[Connection]:
    async with connect(acp_env, FormClient(files={}), elicitation=True) as connection:
        yield connection


async def answer_of(acp: Connection, acp_env: AcpEnv, call: dict[str, Any]) -> dict[str, Any]:
    acp_env.api.enqueue(reply(tool_use("ask_user", call)), reply(text("ok")))
    sid = (await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[])).session_id
    prompt = [TextContentBlock(type="text", text="set it up")]
    await asyncio.wait_for(acp.conn.prompt(session_id=sid, prompt=prompt), TURN_S)
    content = acp_env.api.requests[-1].body["messages"][-1]["content"]
    return next(b for b in content if b.get("type") == "tool_result")  # type: ignore[no-any-return]


async def test_the_choices_are_the_permission_options(acp: Connection, acp_env: AcpEnv) -> None:
    acp.client.questions.clear()
    acp.client.answers[:] = ["choice_1"]
    result = await answer_of(acp, acp_env, CALL)
    ((call, options),) = acp.client.questions
    assert options == ["choice_0", "choice_1", "reject_once"]
    assert call.title == "Which database?"
    assert [c.content.text for c in call.content or []] == ["Which database?"]
    assert result["content"] == "The user answered: Postgres"


async def test_own_words_in_the_meta_feedback_are_the_answer(
    acp: Connection, acp_env: AcpEnv
) -> None:
    acp.client.answers[:] = [("choice_0", "SQLite, in memory")]
    result = await answer_of(acp, acp_env, CALL)
    assert result["content"] == "The user answered: SQLite, in memory"


async def test_skip_declines(acp: Connection, acp_env: AcpEnv) -> None:
    acp.client.answers[:] = ["reject_once"]
    result = await answer_of(acp, acp_env, CALL)
    assert result["is_error"] and "chose not to answer" in result["content"]


async def test_a_client_with_forms_is_asked_with_elicitation(
    acp_forms: Connection, acp_env: AcpEnv
) -> None:
    client = acp_forms.client
    assert isinstance(client, FormClient)
    client.forms[:] = [
        AcceptElicitationResponse(action="accept", content={"choice": "SQLite", "answer": ""}),
        AcceptElicitationResponse(action="accept", content={"answer": "Postgres 16"}),
        DeclineElicitationResponse(action="decline"),
    ]
    first = await answer_of(acp_forms, acp_env, CALL)
    assert first["content"] == "The user answered: SQLite"
    message, form = client.asked[0]
    assert message == "Which database?"
    properties = form.requested_schema.properties
    assert properties["choice"].enum == ["SQLite", "Postgres"] and "answer" in properties
    second = await answer_of(acp_forms, acp_env, {"question": "Which version?"})
    assert second["content"] == "The user answered: Postgres 16"
    assert "choice" not in client.asked[1][1].requested_schema.properties
    third = await answer_of(acp_forms, acp_env, CALL)
    assert third["is_error"] and "chose not to answer" in third["content"]
    assert client.questions == []  # never through session/request_permission
