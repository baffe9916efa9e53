"""agentls's tools as Claude Code's hooks see them: the tool's name (bash -> Bash, an MCP tool
keeps mcp__server__tool) and its input with Claude Code's key names (file_path, absolute, for
path; subagent_type for agent; ...), so a hook written for Claude Code reads what it expects."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

CLAUDE_NAMES = {
    "bash": "Bash",
    "read": "Read",
    "edit": "Edit",
    "write": "Write",
    "grep": "Grep",
    "glob": "Glob",
    "list": "LS",
    "webfetch": "WebFetch",
    "task": "Task",
    "todowrite": "TodoWrite",
}
# Input keys renamed per tool (agentls's -> Claude Code's).
_KEYS: dict[str, dict[str, str]] = {
    "bash": {"timeout_ms": "timeout"},
    "grep": {"include": "glob"},
    "task": {"agent": "subagent_type"},
}
# The tools whose `path` is Claude Code's absolute `file_path`.
_FILE_TOOLS = frozenset({"read", "edit", "write"})


def claude_name(tool: str) -> str:
    """Claude Code's name of an agentls tool; a tool Claude Code lacks keeps its own name."""
    return CLAUDE_NAMES.get(tool, tool)


def _absolute(root: Path, raw: str) -> str:
    path = Path(os.path.expanduser(raw))
    return str(path if path.is_absolute() else root / path)


def claude_input(tool: str, params: dict[str, Any], root: Path) -> dict[str, Any]:
    """The call's input with Claude Code's key names (file paths absolute, as it sends them)."""
    renames = _KEYS.get(tool, {})
    out: dict[str, Any] = {}
    for key, value in params.items():
        if key == "path" and tool in _FILE_TOOLS and isinstance(value, str):
            out["file_path"] = _absolute(root, value)
        elif key == "path" and isinstance(value, str) and tool in ("grep", "glob", "list"):
            out["path"] = _absolute(root, value)
        else:
            out[renames.get(key, key)] = value
    return out


def agentls_input(tool: str, claude: dict[str, Any]) -> dict[str, Any]:
    """A hook's updatedInput (Claude Code's keys) as the tool's own input: file_path is path,
    and the renamed keys back; the tool then checks it as any input."""
    back = {theirs: ours for ours, theirs in _KEYS.get(tool, {}).items()}
    if tool in _FILE_TOOLS:
        back["file_path"] = "path"
    return {back.get(key, key): value for key, value in claude.items()}


def claude_response(
    tool: str, params: dict[str, Any], output: str, root: Path, is_error: bool
) -> dict[str, Any]:
    """PostToolUse's tool_response: the output, whether it succeeded, and the file (filePath)
    for the file tools, as Claude Code's Write and Edit responses name it."""
    response: dict[str, Any] = {"success": not is_error, "output": output}
    path = params.get("path")
    if tool in _FILE_TOOLS and isinstance(path, str):
        response["filePath"] = _absolute(root, path)
    return response
