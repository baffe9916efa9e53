"""The API's request rules (messages_api.validation): each invalid request is refused with the real
API's 400 message and consumes no reply."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from messages_api import MessagesAPIServer
from messages_api.validation import BLOCK_RULES, RULES, validate_request
from tests.messages_api.conftest import MODEL, USER, body, sclient

TOOL = {"name": "read", "input_schema": {"type": "object"}}
TU = {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}
TR = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}


def asst(*blocks: dict[str, Any]) -> Any:
    return {"role": "assistant", "content": list(blocks)}


def user(*blocks: dict[str, Any]) -> Any:
    return {"role": "user", "content": list(blocks)}


def cc(block: dict[str, Any]) -> dict[str, Any]:
    return {**block, "cache_control": {"type": "ephemeral"}}


TXT = {"type": "text", "text": "x"}

INVALID: list[tuple[str, dict[str, Any], str]] = [
    ("no model", {"max_tokens": 5, "messages": [USER]}, "model: Field required"),
    ("no max_tokens", {"model": MODEL, "messages": [USER]}, "max_tokens: Field required"),
    ("no messages", {"model": MODEL, "max_tokens": 5}, "messages: Field required"),
    ("empty messages", body([]), "at least one message"),
    ("extra key", body([USER], temperatur=1), "temperatur: Extra inputs are not permitted"),
    ("first not user", body([asst(TXT), USER]), 'first message must use the "user" role'),
    ("bad role", body([USER, {"role": "system", "content": "x"}]), "messages.1.role"),
    ("empty string", body([{"role": "user", "content": ""}]), "must have non-empty content"),
    ("empty list", body([USER, asst(), USER]), "messages.1: all messages must have non-empty"),
    (
        "empty text",
        body([user({"type": "text", "text": ""})]),
        "text content blocks must be non-empty",
    ),
    ("blank text", body([user({"type": "text", "text": "  "})]), "non-whitespace text"),
    ("trailing ws", body([USER, {"role": "assistant", "content": "a "}]), "trailing whitespace"),
    (
        "unanswered tool_use",
        body([USER, asst(TU), USER]),
        "without `tool_result` blocks immediately after: toolu_1",
    ),
    ("tool_use at end", body([USER, asst(TU)]), "toolu_1"),
    (
        "unexpected id",
        body([USER, asst(TU), user(TR, {**TR, "tool_use_id": "toolu_2"})]),
        "unexpected `tool_use_id` found in `tool_result` blocks: toolu_2",
    ),
    (
        "result not after use",
        body([USER, asst(TU), user(TR), asst(TXT), user(TR)]),
        "unexpected `tool_use_id`",
    ),
    ("result not first", body([USER, asst(TU), user(TXT, TR)]), "must come first"),
    (
        "result first across merged user turn",
        body([USER, asst(TU), user(TXT), user(TR)]),
        "must come first",
    ),
    (
        "duplicate tool_use ids",
        body([USER, asst(TU), user(TR), asst(TU), user(TR)]),
        "ids must be unique",
    ),
    (
        "bad tool_use id",
        body([USER, asst({**TU, "id": "bad id"}), user({**TR, "tool_use_id": "bad id"})]),
        "String should match pattern",
    ),
    ("tool_result in assistant", body([USER, asst(TR)]), "only allowed in user messages"),
    ("bad tool name", body([USER], tools=[{**TOOL, "name": "a.b"}]), "tools.0.custom.name"),
    ("dup tool names", body([USER], tools=[TOOL, TOOL]), "Tool names must be unique"),
    ("no input_schema", body([USER], tools=[{"name": "x"}]), "input_schema: Field required"),
    (
        "schema not object",
        body([USER], tools=[{"name": "x", "input_schema": {"type": "string"}}]),
        "input_schema.type: Input should be 'object'",
    ),
    (
        "too many cache_control",
        body([user(cc(TXT), cc(TXT))], system=[cc(TXT), cc(TXT)], tools=[cc(TOOL)]),
        "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    ),
    (
        "thinking without signature",
        body([USER, asst({"type": "thinking", "thinking": "t"}, TXT), USER]),
        "thinking.signature: Field required",
    ),
    (
        "empty text in tool_result",
        body([USER, asst(TU), user({**TR, "content": [{"type": "text", "text": ""}]})]),
        "must be non-empty",
    ),
    ("tool_choice without tools", body([USER], tool_choice={"type": "any"}), "tool_choice"),
    (
        "thinking budget",
        body([USER], thinking={"type": "enabled", "budget_tokens": 2048}),
        "max_tokens must be greater than thinking.budget_tokens",
    ),
    (
        "unknown effort",
        body([USER], output_config={"effort": "extreme"}),
        "output_config.effort: Input should be",
    ),
]

VALID: list[tuple[str, dict[str, Any]]] = [
    ("merged consecutive roles", body([USER, USER, asst(TXT), asst(TU), user(TR, TXT), user(TXT)])),
    ("final assistant empty", body([USER, {"role": "assistant", "content": ""}])),
    (
        "thinking with signature",
        body(
            [USER, asst({"type": "thinking", "thinking": "t", "signature": "s"}, TU), user(TR)],
            thinking={"type": "enabled", "budget_tokens": 1024},
            max_tokens=2048,
        ),
    ),
    ("four cache_control", body([user(cc(TXT), cc(TXT))], system=[cc(TXT)], tools=[cc(TOOL)])),
    ("server tool", body([USER], tools=[{"type": "web_search_20250305", "name": "web_search"}])),
    (
        "adaptive with effort",
        body([USER], thinking={"type": "adaptive"}, output_config={"effort": "max"}),
    ),
]


@pytest.mark.parametrize(
    ("req", "expected"), [(b, e) for _, b, e in INVALID], ids=[c for c, _, _ in INVALID]
)
def test_validation_rejects(srv: MessagesAPIServer, req: dict[str, Any], expected: str) -> None:
    srv.enqueue("must not be consumed")
    with pytest.raises(anthropic.BadRequestError) as info:
        sclient(srv).post("/v1/messages", cast_to=object, body=req)
    exc = info.value
    assert exc.type == "invalid_request_error"
    assert exc.api_message is not None and expected in exc.api_message, exc.api_message
    assert srv.pending == 1
    assert srv.requests[-1].rejected and srv.requests[-1].status == 400


@pytest.mark.parametrize("req", [b for _, b in VALID], ids=[c for c, _ in VALID])
def test_validation_accepts(srv: MessagesAPIServer, req: dict[str, Any]) -> None:
    res = sclient(srv).post("/v1/messages", cast_to=object, body=req)
    assert isinstance(res, dict) and res["type"] == "message"


def test_validation_rules_each_name_their_rule() -> None:
    rules = [*RULES, *BLOCK_RULES.values()]
    assert len({rule.__name__ for rule in rules}) == len(rules)
    for rule in rules:
        assert rule.__doc__ and rule.__doc__.strip(), f"{rule.__name__} says no rule"
    assert validate_request(body([USER])) is None
    for _, req, expected in INVALID:
        problem = validate_request(req)
        assert problem is not None and expected in problem, (req, problem)
    # count_tokens takes no max_tokens and checks no max_tokens against a thinking budget.
    assert validate_request({"model": MODEL, "messages": [USER]}, count_tokens=True) is None


def test_validation_via_sdk_create(srv: MessagesAPIServer) -> None:
    client = sclient(srv)
    with pytest.raises(anthropic.BadRequestError, match="toolu_9"):
        client.messages.create(
            model=MODEL, max_tokens=64, messages=[USER, asst({**TU, "id": "toolu_9"}), USER]
        )
