"""The request rules of Chat Completions that an agent can break, one function each, with the
messages the real APIs answer (400 invalid_request_error)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

ROLES = {"system", "developer", "user", "assistant", "tool"}


def _top_level(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "Request body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "you must provide a model parameter"
    if not isinstance(body.get("messages"), list) or not body["messages"]:
        return "'messages' must contain at least one message"
    if "stream_options" in body and body.get("stream") is not True:
        return "The 'stream_options' parameter is only allowed when 'stream' is enabled."
    return None


def _roles(body: dict[str, Any]) -> str | None:
    for i, message in enumerate(body["messages"]):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            return f"Invalid value for 'messages[{i}].role'"
    return None


def _content(body: dict[str, Any]) -> str | None:
    for i, message in enumerate(body["messages"]):
        content = message.get("content")
        if message["role"] == "assistant" and content is None:
            if not message.get("tool_calls"):
                return f"messages[{i}]: an assistant message needs content or tool_calls"
            continue
        if isinstance(content, str):
            continue
        if not isinstance(content, list) or not content:
            return f"Invalid type for 'messages[{i}].content': expected a string or parts"
        for j, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            allowed = {"text", "image_url"} if message["role"] == "user" else {"text"}
            if kind not in allowed:
                return f"Invalid value for 'messages[{i}].content[{j}].type': {kind!r}"
            if kind == "image_url" and not str(part.get("image_url", {}).get("url", "")):
                return f"messages[{i}].content[{j}].image_url.url is required"
    return None


def _tool_calls_answered(body: dict[str, Any]) -> str | None:
    """A tool message must answer a call of the assistant message before it; every call must be
    answered before the next other message."""
    waiting: list[str] = []
    open_ids: set[str] = set()
    for i, message in enumerate(body["messages"]):
        role = message["role"]
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_ids:
                return (
                    f"Invalid parameter: messages[{i}]: messages with role 'tool' must be a "
                    "response to a preceeding message with 'tool_calls'."
                )
            if call_id in waiting:
                waiting.remove(call_id)
            continue
        if waiting:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(waiting)}"
            )
        open_ids = set()
        if role == "assistant":
            for j, call in enumerate(message.get("tool_calls") or []):
                fn = call.get("function") if isinstance(call, dict) else None
                if not isinstance(fn, dict) or not isinstance(fn.get("arguments"), str):
                    return f"messages[{i}].tool_calls[{j}].function.arguments must be a string"
                waiting.append(call["id"])
                open_ids.add(call["id"])
    if waiting:
        return (
            "An assistant message with 'tool_calls' must be followed by tool messages responding "
            f"to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
            f"{', '.join(waiting)}"
        )
    return None


def _tools(body: dict[str, Any]) -> str | None:
    for i, tool in enumerate(body.get("tools") or []):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if tool.get("type") != "function" or not isinstance(fn, dict) or not fn.get("name"):
            return f"Invalid value for 'tools[{i}]': a function tool with a name is required"
    return None


RULES: list[Callable[[dict[str, Any]], str | None]] = [
    _roles,
    _content,
    _tool_calls_answered,
    _tools,
]


def validate_request(body: Any) -> str | None:
    """What is wrong with the request, as the API would say it; None when it is valid."""
    problem = _top_level(body)
    if problem is not None:
        return problem
    for rule in RULES:
        problem = rule(body)
        if problem is not None:
            return problem
    return None


# ---- strict mode: what llama-cpp-python's request types refuse ---------------------------------
# Its server types messages as TypedDicts (llama_cpp/llama_types.py): an assistant message's
# `content` is `NotRequired[str]` (absent or a string, never null), a tool call is
# `{id: str, type: "function", function: {name: str, arguments: str}}`. A request that breaks
# them is answered HTTP 500 with pydantic's validation error as the message.


def _strict_errors(body: dict[str, Any]) -> list[tuple[str, str, str, Any]]:
    """(location, message, pydantic type, input) of every part llama-cpp-python would refuse."""
    found: list[tuple[str, str, str, Any]] = []
    for i, message in enumerate(body["messages"]):
        role = message.get("role")
        where = f"body.messages.{i}.typed-dict"
        if role == "assistant":
            if "content" in message and not isinstance(message["content"], str):
                value = message["content"]
                found.append((f"{where}.content", "Input should be a valid string",
                              "string_type", value))  # fmt: skip
            for j, call in enumerate(message.get("tool_calls") or []):
                call = call if isinstance(call, dict) else {}
                fn: dict[str, Any] = call.get("function") or {}
                fn = fn if isinstance(fn, dict) else {}
                at = f"{where}.tool_calls.{j}"
                if not isinstance(call.get("id"), str):
                    found.append((f"{at}.id", "Field required", "missing", call))
                if call.get("type") != "function":
                    found.append((f"{at}.type", "Input should be 'function'", "literal_error",
                                  call.get("type")))  # fmt: skip
                for key in ("name", "arguments"):
                    if not isinstance(fn.get(key), str):
                        found.append((f"{at}.function.{key}", "Input should be a valid string",
                                      "string_type", fn.get(key)))  # fmt: skip
        elif role == "tool":
            if not isinstance(message.get("tool_call_id"), str):
                found.append((f"{where}.tool_call_id", "Field required", "missing", message))
            if not isinstance(message.get("content"), str | None):
                found.append((f"{where}.content", "Input should be a valid string",
                              "string_type", message.get("content")))  # fmt: skip
    return found


def strict_problem(body: dict[str, Any]) -> str | None:
    """pydantic's text for what llama-cpp-python refuses in `body` (None: it takes it)."""
    found = _strict_errors(body)
    if not found:
        return None
    plural = "s" if len(found) > 1 else ""
    lines = [f"{len(found)} validation error{plural} for CreateChatCompletionRequest"]
    for where, message, kind, value in found:
        lines.append(where)
        shown = repr(value)[:60]
        lines.append(f"  {message} [type={kind}, input_value={shown}, "
                     f"input_type={type(value).__name__}]")  # fmt: skip
        lines.append(f"    For further information visit https://errors.pydantic.dev/2.9/v/{kind}")
    return "\n".join(lines)
