"""Sub-agent types from Markdown files, where users keep them for Claude Code and opencode.

Claude Code's: `~/.claude/agents/*.md` (the user's; `$CLAUDE_CONFIG_DIR/agents` when that is
set) and `.claude/agents/*.md` (the workspace's),
front matter `name`, `description`, `tools` (Claude Code's names, mapped: `Read, Grep, Bash`;
none: the session's tools), `disallowedTools`, `model` (`inherit`, `sonnet`, `opus`, `haiku` or a
model id); the body is the agent's prompt. opencode's: `~/.config/opencode/agent/*.md` and
`.opencode/agent/*.md`, named by the file, front matter `description`, `mode` (a `primary` agent
is no sub-agent: skipped), `tools` ({name: false} takes a tool away), `model`, `disable`.

A workspace's files count only when the workspace is trusted (Settings.workspace_trusted), as its
`.agentls/commands` do; a file linking out of its folder is not followed. In a workspace of
several folders each folder's count when that folder is trusted (its own settings: Policy.
other_folders). By name, later wins: the built-in `general`, the user's files (opencode's, then
Claude Code's), the workspace's folders' from the last to the first (the same order in each),
then the `agents` setting. A file agentls cannot use as written (a tool it lacks,
broken YAML) gives no agent type; its problem is said when the type is asked for."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentls.config import AgentType, Settings
from agentls.config_home import claude_home
from agentls.session.claude_formats import (
    OPENCODE_TOOLS,
    FormatError,
    front_matter,
    model_alias,
    tool_of,
    tools_of,
)

Flavour = Literal["claude", "opencode"]
MAX_AGENT_BYTES = 256 * 1024
MAX_AGENT_FILES = 200
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
# Every tool of the session (a Claude Code agent without `tools`).
ALL_TOOLS = "*"


@dataclass
class FileAgents:
    """The agent types the files define, by name; the problem of each file refused, by the name
    it would have had; the file each type came from."""

    types: dict[str, AgentType] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)


def agent_dirs(
    root: Path | None, trusted: bool, others: Sequence[tuple[Path, bool]] = ()
) -> list[tuple[bool, Flavour, Path]]:
    """(from the workspace, format, folder), in order: a later one's type of a name wins. The
    workspace's folders (`others`: each other workspace folder and whether it is trusted) each
    count when trusted: the last folder lowest, the first (`root`) highest."""
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    dirs: list[tuple[bool, Flavour, Path]] = [
        (False, "opencode", Path(xdg) / "opencode" / "agent"),
        (False, "claude", claude_home() / "agents"),
    ]
    folders = [*reversed(others), *([(root, trusted)] if root is not None else [])]
    for folder, folder_trusted in folders:
        if folder_trusted:
            dirs += [
                (True, "opencode", folder / ".opencode" / "agent"),
                (True, "claude", folder / ".claude" / "agents"),
            ]
    return dirs


def session_tools() -> list[str]:
    from agentls.tools.registry import default_tools

    return [tool.name for tool in default_tools()]


def file_agents(
    root: Path | None, trusted: bool, others: Sequence[tuple[Path, bool]] = ()
) -> FileAgents:
    """The agent types of every agent file (see the module's docstring)."""
    found = FileAgents()
    known = session_tools()
    for from_workspace, flavour, folder in agent_dirs(root, trusted, others):
        try:
            paths = sorted(p for p in folder.iterdir() if p.suffix == ".md")[:MAX_AGENT_FILES]
        except OSError:
            continue
        real = os.path.realpath(folder)
        for path in paths:
            if from_workspace and os.path.dirname(os.path.realpath(path)) != real:
                continue  # a repository's link out of its folder could name any file
            text = _read_small(path)
            if text is None:
                continue
            try:
                parsed = parse_agent(path, flavour, text, known)
            except FormatError as exc:
                found.problems[path.stem] = f"{path}: {exc}; it is not used"
                continue
            if parsed is not None:
                name, kind = parsed
                found.types[name] = kind
                found.files[name] = path
                found.problems.pop(name, None)
    return found


def _read_small(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_AGENT_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def parse_agent(
    path: Path, flavour: Flavour, text: str, known: list[str]
) -> tuple[str, AgentType] | None:
    """(name, type) of one file; None for an opencode agent that is no sub-agent (mode primary,
    or disabled); FormatError for one agentls cannot use as written."""
    meta, body = front_matter(text)
    if flavour == "opencode":
        return _opencode(path, meta, body, known)
    name = str(meta.get("name") or path.stem).strip()
    if not NAME.fullmatch(name):
        raise FormatError(f"its name {name!r} is not a name (letters, digits, - and _)")
    tools = [ALL_TOOLS] if meta.get("tools") is None else tools_of(meta["tools"], known)
    denied = tools_of(meta.get("disallowedTools"), known)
    if denied:
        tools = [t for t in (known if tools == [ALL_TOOLS] else tools) if t not in denied]
    return name, _type(meta, body, tools)


def _opencode(
    path: Path, meta: dict[str, Any], body: str, known: list[str]
) -> tuple[str, AgentType] | None:
    if str(meta.get("mode") or "all").strip() == "primary" or meta.get("disable") is True:
        return None
    tools = [ALL_TOOLS]
    switches = meta.get("tools")
    if switches is not None and not isinstance(switches, dict):
        raise FormatError("its `tools` is not a mapping of tool names to true or false")
    off: list[str] = []
    for key, on in (switches or {}).items():
        try:
            names = tool_of(str(key), known, OPENCODE_TOOLS)
        except FormatError:
            if on is False or "*" in str(key):
                continue  # taking away a tool agentls lacks changes nothing
            raise
        if on is False:
            off += names
    if off:
        tools = [t for t in known if t not in off]
    return path.stem, _type(meta, body, tools)


def _type(meta: dict[str, Any], body: str, tools: list[str]) -> AgentType:
    description = meta.get("description")
    return AgentType(
        description=" ".join(str(description).split()) if description is not None else "",
        prompt=body.strip(),
        tools=tools,
        model=model_alias(meta.get("model")),
    )


def available_agents(
    settings: Settings, root: Path | str | None, others: Sequence[tuple[Path, bool]] = ()
) -> FileAgents:
    """The agent files' types for a workspace root with these settings (its trust), and its
    other folders (Policy.other_folders)."""
    where = Path(root) if root is not None else None
    return file_agents(where, settings.workspace_trusted, others)
