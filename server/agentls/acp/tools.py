"""A tool call in ACP's words: its kind, the files it touches (locations), and its content (an
edit's diff, a command, the output), for live calls, stored ones (session/load) and questions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolCallStatus,
    ToolKind,
)

from agentls.history import ToolPart

ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

KINDS: dict[str, ToolKind] = {
    "read": "read",
    "write": "edit",
    "edit": "edit",
    "rename": "edit",
    "apply_code_action": "edit",
    "code_actions": "search",
    "glob": "search",
    "grep": "search",
    "list": "search",
    "symbols": "search",
    "definition": "search",
    "references": "search",
    "hover": "search",
    "callers": "search",
    "outline": "search",
    "type_definition": "search",
    "implementation": "search",
    "callees": "search",
    "bash": "execute",
    "fetch": "fetch",
    "webfetch": "fetch",
    "todowrite": "think",
    "exit_plan": "switch_mode",
}


def kind_of(tool: str) -> ToolKind:
    return KINDS.get(tool, "other")


def status_of(part_status: str) -> ToolCallStatus:
    """A stored call's status (history.ToolStatus) as ACP's."""
    if part_status == "completed":
        return "completed"
    if part_status in ("pending", "running"):
        return "in_progress" if part_status == "running" else "pending"
    return "failed"


def _absolute(root: Path, value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    path = Path(value)
    return str(path if path.is_absolute() else root / path)


def locations_of(root: Path, tool: str, data: dict[str, Any]) -> list[ToolCallLocation]:
    """The file a call works on, with its line where the input names one (1-based, as given)."""
    path = _absolute(root, data.get("path"))
    if path is None:
        return []
    line = data.get("line", data.get("offset"))
    if isinstance(line, bool) or not isinstance(line, int) or line < 0:
        line = None
    return [ToolCallLocation(path=path, line=line)]


def text_content(text: str) -> ContentToolCallContent:
    return ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))


def input_content(root: Path, tool: str, data: dict[str, Any]) -> list[ToolContent]:
    """What a call shows before it runs: an edit's diff (the replaced text and its replacement),
    a new file's text, the command line."""
    path = _absolute(root, data.get("path"))
    if tool == "edit" and path is not None and isinstance(data.get("new_string"), str):
        old = data.get("old_string")
        return [
            FileEditToolCallContent(
                type="diff",
                path=path,
                old_text=old if isinstance(old, str) else None,
                new_text=data["new_string"],
            )
        ]
    if tool == "write" and path is not None and isinstance(data.get("content"), str):
        return [FileEditToolCallContent(type="diff", path=path, new_text=data["content"])]
    if tool == "bash" and isinstance(data.get("command"), str):
        return [text_content(f"```sh\n{data['command']}\n```")]
    if tool == "exit_plan" and isinstance(data.get("plan"), str):
        return [text_content(data["plan"])]
    if tool == "ask_user" and isinstance(data.get("question"), str):  # the question, in full
        return [text_content(data["question"])]
    return []


def output_content(
    root: Path, tool: str, data: dict[str, Any], output: str | None
) -> list[ToolContent]:
    """What a finished call shows: its diff (edits), then its output as text (a command's in a
    code block)."""
    shown: list[ToolContent] = [c for c in input_content(root, tool, data) if c.type == "diff"]
    if output:
        shown.append(text_content(f"```\n{output}\n```" if tool == "bash" else output))
    return shown


def stored_call(root: Path, part: ToolPart) -> dict[str, Any]:
    """The fields of a tool_call update for a call in the history (session/load)."""
    return {
        "tool_call_id": part.call_id,
        "title": part.title or part.tool,
        "kind": kind_of(part.tool),
        "status": status_of(part.status),
        "locations": locations_of(root, part.tool, part.input),
        "content": output_content(root, part.tool, part.input, part.output),
        "raw_input": part.input,
    }
