"""Where hooks come from and what they are: `{"hooks": {"PreToolUse": [{"matcher": "Bash|Edit",
"hooks": [{"type": "command", "command": "...", "timeout": 60}]}]}}`, in Claude Code's user
settings (~/.claude/settings.json, or $CLAUDE_CONFIG_DIR/settings.json), agentls's user config
(config.json's "hooks" key), and, only when the workspace is trusted, the workspace's
.claude/settings.json, .claude/settings.local.json and .agentls/config.json. A workspace file's
hooks when it is not trusted are never run: a notice says they were ignored."""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentls.config import Settings
from agentls.config_files import parse_json_object, read_workspace_bytes
from agentls.config_home import claude_home, config_home

EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
)
# Events whose matcher is not used (Claude Code ignores it there).
UNMATCHED = frozenset({"UserPromptSubmit", "Stop", "SubagentStop"})
DEFAULT_TIMEOUT_S = 60.0

Scope = Literal["user", "workspace"]


class _Command(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: str
    command: str | None = None
    timeout: float | None = Field(default=None, gt=0)


class _Group(BaseModel):
    model_config = ConfigDict(extra="ignore")

    matcher: str | None = None
    hooks: list[_Command]


@dataclass(frozen=True)
class Hook:
    """One command hook: run at `event` when `matcher` matches (a regular expression matched
    against the whole tool name, or what the event matches on; empty or "*": always)."""

    event: str
    matcher: str
    command: str
    timeout_s: float
    source: Path

    def matches(self, value: str | None) -> bool:
        if self.event in UNMATCHED or self.matcher in ("", "*") or value is None:
            return True
        try:
            return re.fullmatch(self.matcher, value) is not None
        except re.error:
            return False


@dataclass
class HookSet:
    hooks: list[Hook] = field(default_factory=list)
    # Lines for the user: a workspace file's hooks ignored (untrusted), a file that is not valid.
    notices: list[str] = field(default_factory=list)

    def for_event(self, event: str, value: str | None = None) -> list[Hook]:
        """The hooks to run, each command once (the same command from two files runs once)."""
        seen: set[str] = set()
        out: list[Hook] = []
        for hook in self.hooks:
            if hook.event == event and hook.matches(value) and hook.command not in seen:
                seen.add(hook.command)
                out.append(hook)
        return out


def sources(root: Path | None) -> list[tuple[Path, Scope]]:
    """The files hooks are read from, in the order they run."""
    files: list[tuple[Path, Scope]] = [
        (claude_home() / "settings.json", "user"),
        (config_home() / "config.json", "user"),
    ]
    if root is not None:
        real = Path(os.path.realpath(root))
        files += [
            (real / ".claude" / "settings.json", "workspace"),
            (real / ".claude" / "settings.local.json", "workspace"),
            (real / ".agentls" / "config.json", "workspace"),
        ]
    return files


def parse_hooks(path: Path, value: Any, skipped: list[str] | None = None) -> list[Hook]:
    """The hooks of one file's "hooks" value; ValueError naming the file and the field. Hooks
    agentls does not run (an event it has not, a hook type other than "command", both written
    for newer Claude Code) are left out, each said in `skipped`, the file's others kept."""
    if value is None:
        return []
    if not isinstance(value, dict):
        raise ValueError(f"{path}: hooks: expected an object of events")
    hooks: list[Hook] = []
    for event, groups in value.items():
        if not isinstance(groups, list):
            raise ValueError(f"{path}: hooks.{event}: expected a list of matchers")
        for i, raw in enumerate(groups):
            try:
                group = _Group.model_validate(raw)
            except ValidationError as exc:
                error = exc.errors()[0]
                where = ".".join(str(p) for p in error["loc"])
                raise ValueError(f"{path}: hooks.{event}.{i}.{where}: {error['msg']}") from exc
            matcher = group.matcher or ""
            if matcher not in ("", "*"):
                try:
                    re.compile(matcher)
                except re.error as exc:
                    raise ValueError(
                        f"{path}: hooks.{event}.{i}.matcher: not a regular expression ({exc})"
                    ) from exc
            for j, command in enumerate(group.hooks):
                where = f"{path}: hooks.{event}.{i}.hooks.{j}"
                if command.type == "command" and not (command.command or "").strip():
                    raise ValueError(f"{where}.command: missing")
                if event not in EVENTS:
                    if skipped is not None:
                        skipped.append(
                            f"{path}: hooks.{event}: not an event agentls runs hooks at "
                            f"(it runs {', '.join(EVENTS)})"
                        )
                    break
                if command.type != "command":
                    if skipped is not None:
                        skipped.append(
                            f'{where}.type: agentls runs only "command" hooks, not {command.type!r}'
                        )
                    continue
                assert command.command is not None
                hooks.append(
                    Hook(
                        event=event,
                        matcher=matcher,
                        command=command.command,
                        timeout_s=command.timeout or DEFAULT_TIMEOUT_S,
                        source=path,
                    )
                )
    return hooks


def _read(path: Path, scope: Scope) -> tuple[bytes, dict[str, Any]] | None:
    if scope == "workspace":
        data = read_workspace_bytes(path)
    else:
        try:
            data = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise ValueError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    return None if data is None else (data, parse_json_object(path, data))


def claude_workspace_files(root: Path) -> list[Path]:
    """The workspace's Claude Code settings files (they may hold hooks): trusted by content,
    as `agentls trust` confirms them."""
    real = Path(os.path.realpath(root)) / ".claude"
    return [real / "settings.json", real / "settings.local.json"]


def load_hooks(settings: Settings, root: Path | None) -> HookSet:
    """The hooks in force for a workspace root with these settings (read at each call: a file
    changed counts from the next turn). A workspace file counts only when the workspace is
    trusted (settings.workspace_trusted), and its .agentls/config.json only in the content the
    user confirmed; a file that is not valid is left out with a notice naming the field."""
    from agentls.trust import TrustStore

    out = HookSet()
    pending = {p.file for p in settings.pending_configs}
    store: TrustStore | None = None
    for path, scope in sources(root):
        try:
            read = _read(path, scope)
            if read is None or not read[1].get("hooks"):
                continue
            data, layer = read
            claude = scope == "workspace" and path.name != "config.json"
            where = shlex.quote(str(path.parent.parent))
            untrusted = not settings.workspace_trusted or (not claude and path in pending)
            if scope == "workspace" and untrusted:
                if claude:  # agentls's own file: the settings' notice says it
                    out.notices.append(
                        f"agentls: ignored the hooks of {path}: the workspace is not trusted "
                        f"(run `agentls trust {where}` to trust it)"
                    )
                continue
            if claude:  # a program the repository names: only in the content confirmed
                store = store or TrustStore()
                state = store.state(path, data)
                if state != "trusted":
                    why = "changed since" if state == "changed" else "new since"
                    out.notices.append(
                        f"agentls: ignored the hooks of {path}: the file is {why} you trusted "
                        f"this workspace (confirm it when asked, or run `agentls trust {where}`)"
                    )
                    continue
            skipped: list[str] = []
            out.hooks += parse_hooks(path, layer.get("hooks"), skipped)
            out.notices += [f"agentls: hook left out: {why}" for why in dict.fromkeys(skipped)]
        except ValueError as exc:
            out.notices.append(f"agentls: hooks not loaded: {exc}")
    return out
