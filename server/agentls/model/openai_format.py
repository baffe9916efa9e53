"""A ModelRequest (Messages-API form, what the history converts to) as a Chat Completions request.

- system blocks: one `system` message;
- a tool_use block: an entry of the assistant message's `tool_calls` (`id`, `type: "function"`,
  `function.arguments` as JSON text, as the OpenAI spec shows); the message's `content` is its
  text, "" when it has none (never null: llama-cpp-python refuses that);
- a tool_result block: a `role: "tool"` message right after the assistant message that called
  it; its images go in one user message after the tool messages (a tool message holds text only);
- thinking and redacted thinking: left out (they are another provider's, or this model's own
  reasoning, which Chat Completions servers do not take back); the stored history keeps them;
- images: `image_url` parts with a data URL;
- tools: `{"type": "function", "function": {name, description, parameters}}`.
"""

from __future__ import annotations

import json
from typing import Any

TOOL_IMAGES_NOTE = "The images the tool results above refer to:"


def chat_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        function: dict[str, Any] = {
            "name": tool["name"],
            "parameters": tool.get("input_schema") or {"type": "object", "properties": {}},
        }
        if tool.get("description"):
            function["description"] = tool["description"]
        out.append({"type": "function", "function": function})
    return out


def _image_part(block: dict[str, Any]) -> dict[str, Any] | None:
    source = block.get("source")
    if not isinstance(source, dict):
        return None
    if source.get("type") == "base64":
        url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    elif source.get("type") == "url":
        url = str(source.get("url", ""))
    else:
        return None
    return {"type": "image_url", "image_url": {"url": url}}


def _text_of(content: Any, images: list[dict[str, Any]]) -> str:
    """A tool_result's content as text; its images appended to `images`."""
    if isinstance(content, str):
        return content
    pieces: list[str] = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            pieces.append(str(block.get("text", "")))
        elif block.get("type") == "image":
            part = _image_part(block)
            if part is not None:
                images.append(part)
                pieces.append("(image: see the user message after the tool results)")
    return "\n".join(pieces)


def _user_messages(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    out: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in content:
        kind = block.get("type")
        if kind == "tool_result":
            text = _text_of(block.get("content"), images)
            if block.get("is_error"):
                text = f"Error: {text}"
            out.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": text})
        elif kind == "text":
            parts.append({"type": "text", "text": block.get("text", "")})
        elif kind == "image":
            part = _image_part(block)
            if part is not None:
                parts.append(part)
    if images:
        out.append(
            {"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_NOTE}, *images]}
        )
    if parts:
        if all(p["type"] == "text" for p in parts):
            # Plain text as a string: what every OpenAI-compatible server takes.
            out.append({"role": "user", "content": "\n\n".join(p["text"] for p in parts)})
        else:
            out.append({"role": "user", "content": parts})
    return out


def _assistant_message(content: Any) -> dict[str, Any] | None:
    if isinstance(content, str):
        return {"role": "assistant", "content": content}
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in content:
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            texts.append(block["text"])
        elif kind == "tool_use":
            calls.append(
                {
                    "id": block["id"],
                    "type": "function",
                    "function": {
                        "name": block["name"],
                        "arguments": json.dumps(block.get("input") or {}, ensure_ascii=False),
                    },
                }
            )
        # thinking / redacted_thinking: not sent (see the module's doc).
    if not texts and not calls:
        return None
    # Never a null content: llama-cpp-python answers HTTP 500 to `"content": null` (its type is
    # a str, not required), and chat templates read `message.content` as text; "" suits them all.
    message: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts)}
    if calls:
        message["tool_calls"] = calls
    return message


def chat_messages(
    system: list[dict[str, Any]], messages: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    system_text = "\n\n".join(str(b.get("text", "")) for b in system if b.get("type") == "text")
    if system_text.strip():
        out.append({"role": "system", "content": system_text})
    for message in messages:
        if message["role"] == "user":
            out.extend(_user_messages(message["content"]))
        else:
            converted = _assistant_message(message["content"])
            if converted is not None:
                out.append(converted)
    return out
