"""An MCP server's prompts as slash commands, `/mcp__<server>__<prompt> args` (session/commands.py
runs them): the arguments are `name=value` words, or words in the prompt's argument order (the
last one takes the rest of the line); the prompt's messages become the text sent."""

from __future__ import annotations

import re

import mcp_types as types

from agentls.mcp.results import resource_contents

# A slash command's name (session/commands.py NAME).
_NAME = re.compile(r"[a-z0-9_-]+")
_CLEAN = re.compile(r"[^a-z0-9_-]+")


def command_name(server: str, prompt: str) -> str | None:
    """`mcp__<server>__<prompt>` in a command's letters (lower case; others become "-"); None
    when nothing of the prompt's name is left."""
    part = _CLEAN.sub("-", prompt.lower()).strip("-")
    where = _CLEAN.sub("-", server.lower()).strip("-")
    if not part or not where:
        return None
    name = f"mcp__{where}__{part}"
    return name if _NAME.fullmatch(name) else None


def describe(server: str, prompt: types.Prompt) -> str:
    about = (prompt.description or prompt.title or prompt.name).strip().splitlines()
    names = [f"{a.name}{'' if a.required else '?'}" for a in (prompt.arguments or [])]
    takes = f" (arguments: {' '.join(names)})" if names else ""
    return f"{about[0][:200] if about else prompt.name}{takes} [MCP server {server}]"


def arguments(prompt: types.Prompt, line: str) -> dict[str, str]:
    """The prompt's arguments from what follows the command; ValueError names a missing
    required one or an unknown name."""
    declared = [a.name for a in (prompt.arguments or [])]
    given: dict[str, str] = {}
    words = line.split()
    positional: list[str] = []
    for word in words:
        key, eq, value = word.partition("=")
        if eq and key in declared:
            given[key] = value
        elif eq and key and not positional and re.fullmatch(r"[A-Za-z_][\w-]*", key):
            raise ValueError(
                f"the prompt {prompt.name!r} has no argument {key!r}; its arguments are: "
                f"{', '.join(declared) or 'none'}"
            )
        else:
            positional.append(word)
    free = [name for name in declared if name not in given]
    for index, name in enumerate(free):
        if not positional:
            break
        if index == len(free) - 1:
            given[name] = " ".join(positional)
            positional = []
        else:
            given[name] = positional.pop(0)
    missing = [a.name for a in (prompt.arguments or []) if a.required and a.name not in given]
    if missing:
        raise ValueError(
            f"the prompt {prompt.name!r} needs {', '.join(missing)} (as name=value, or in order)"
        )
    return given


def prompt_text(result: types.GetPromptResult) -> str:
    """The messages of prompts/get as one prompt: their text, embedded resources with their uri,
    what cannot be sent described; an assistant's message marked as such."""
    pieces: list[str] = []
    for message in result.messages:
        content = message.content
        if isinstance(content, types.TextContent):
            text = content.text
        elif isinstance(content, types.EmbeddedResource):
            text = resource_contents([content.resource]).text
        elif isinstance(content, types.ResourceLink):
            text = f"[resource link {content.uri}: {content.name}]"
        else:
            text = f"[{content.type} content of the prompt, not included]"
        pieces.append(f"(assistant) {text}" if message.role == "assistant" else text)
    return "\n\n".join(pieces)
