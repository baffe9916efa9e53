"""What Claude Code's (and opencode's) agent and command files say, in agentls's terms: their YAML
front matter, their tool names (`Bash`, `Read`, `mcp__server__tool`, ... mapped to agentls's; a
name agentls lacks is an error naming it), and their model aliases (`inherit`, `sonnet`, `opus`,
`haiku`: the session's model, or the newest of that family)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from agentls.model.table import MODELS

# Claude Code's tool names and the agentls tools that do their work.
CLAUDE_TOOLS: dict[str, tuple[str, ...]] = {
    "Bash": ("bash",),
    "Read": ("read",),
    "Edit": ("edit",),
    "MultiEdit": ("edit",),
    "Write": ("write",),
    "Grep": ("grep",),
    "Glob": ("glob",),
    "LS": ("list",),
    "WebFetch": ("webfetch",),
    "Task": ("task",),
    "Agent": ("task",),
    "TodoWrite": ("todowrite",),
}
# opencode's tool names that are not agentls's own (its others, bash, read, ..., are the same).
OPENCODE_TOOLS: dict[str, tuple[str, ...]] = {"patch": ("edit",), "todoread": ("todowrite",)}
FAMILIES = ("opus", "sonnet", "haiku")
# `Bash(git add:*)`: a tool and its specifier (the specifier is a permission matter).
_ENTRY = re.compile(r"\s*([A-Za-z][\w.-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_MCP = re.compile(r"^mcp__[A-Za-z0-9_-]+__[A-Za-z0-9_.*-]+$")


class FormatError(ValueError):
    """A file agentls cannot use as written; the message says what and why (not which file)."""


def front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The front matter between `---` lines at the very top, and the body after it. YAML where it
    parses; otherwise read as Claude Code reads it, `key: value` lines (a line that starts no key
    continues the value before: `description: Use when ... Examples: <example>...`)."""
    import yaml

    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        return {}, text
    for end in range(1, len(lines)):
        if lines[end].rstrip() == "---":
            break
    else:
        return {}, text
    head, body = "".join(lines[1:end]), "".join(lines[end + 1 :])
    try:
        meta = yaml.safe_load(head) or {}
    except yaml.YAMLError:
        meta = _key_lines(head)
        if not meta and head.strip():
            raise FormatError("its front matter is neither YAML nor `key: value` lines") from None
    if not isinstance(meta, dict):
        raise FormatError("its front matter is not a mapping of keys to values")
    return meta, body


_KEY = re.compile(r"^([A-Za-z][\w-]*):(?:\s+(.*))?$")


def _key_lines(head: str) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    key = None
    for line in head.splitlines():
        match = _KEY.match(line)
        if match is not None:
            key = match.group(1)
            meta[key] = (match.group(2) or "").strip()
        elif key is not None and line.strip():
            meta[key] = f"{meta[key]}\n{line.strip()}".strip()
    return meta


def raw_value(text: str, key: str) -> str:
    """A front matter key's text as written (`argument-hint: [name] [props]`, which YAML would
    read as lists), or ""."""
    lines = text.splitlines()
    if not lines or lines[0].rstrip() != "---":
        return ""
    for line in lines[1:]:
        if line.rstrip() == "---":
            break
        match = _KEY.match(line)
        if match is not None and match.group(1) == key:
            return (match.group(2) or "").strip().strip("'\"")
    return ""


def entries(value: Any) -> list[str]:
    """A `tools:` or `allowed-tools:` value as a list of entries: a YAML list, or one string of
    entries separated by commas (a specifier's own commas and spaces kept: `Bash(git add:*)`)."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    found: list[str] = []
    for item in items:
        text, depth, start = str(item), 0, 0
        for i, char in enumerate(text):
            depth += {"(": 1, ")": -1}.get(char, 0)
            if char == "," and depth == 0:
                found.append(text[start:i])
                start = i + 1
        found.append(text[start:])
    return [e.strip() for e in found if e.strip()]


def tool_of(entry: str, known: Iterable[str], extra: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The agentls tools one entry names (`Read`, `Bash(npm test:*)`, `mcp__github__get_issue`, or
    agentls's own name); FormatError for a tool agentls lacks."""
    names = set(known)
    name = entry.strip()
    if name.startswith("mcp__"):
        if not _MCP.match(name):
            raise FormatError(f"{name!r} is not an MCP tool name (mcp__server__tool)")
        return (name,)
    match = _ENTRY.match(name)
    if match is None:
        raise FormatError(f"{name!r} is not a tool name")
    tool = match.group(1)
    mapped = CLAUDE_TOOLS.get(tool) or extra.get(tool) or ((tool,) if tool in names else None)
    if mapped is None or not set(mapped) <= names:
        raise FormatError(
            f"it names the tool {tool}, which agentls lacks (agentls's tools: "
            f"{', '.join(sorted(names))}; Claude Code's names {', '.join(CLAUDE_TOOLS)} are mapped "
            "to them)"
        )
    return mapped


def tools_of(
    value: Any, known: Iterable[str], extra: dict[str, tuple[str, ...]] | None = None
) -> list[str]:
    """The agentls tools a `tools:` list names, in order, each once; FormatError for a tool agentls
    lacks."""
    known = list(known)
    out: list[str] = []
    for entry in entries(value):
        for tool in tool_of(entry, known, extra or {}):
            if tool not in out:
                out.append(tool)
    return out


def model_alias(value: Any) -> str | None:
    """A `model:` value as stored: None for none or `inherit` (the session's), else the text."""
    if value is None:
        return None
    text = str(value).strip()
    return None if not text or text.lower() == "inherit" else text


def resolve_model(model: str | None, session_model: str) -> str:
    """The model a sub-agent or command runs on: the session's for none; for a family alias
    (`sonnet`, `opus`, `haiku`) the session's when it is of that family, else the newest Claude
    model of the family agentls knows (on Bedrock or Vertex when the session's model is); any
    other value as it is."""
    if model is None:
        return session_model
    family = model.strip().lower()
    if family not in FAMILIES:
        return model
    if re.search(rf"(?<![a-z]){family}(?![a-z])", session_model.lower()):
        return session_model
    newest = next((m for m in MODELS if f"-{family}-" in f"{m}-"), None)
    if newest is None:
        return session_model
    cloud = session_model.split("/", 1)[0] if "/" in session_model else ""
    return f"{cloud}/{newest}" if cloud in ("bedrock", "vertex") else newest
