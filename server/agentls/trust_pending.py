"""Workspace config the user has not confirmed: what it is, the change to show, and the answer.

Every load of the settings (agentls.config.load_settings: a server's start, a configuration
change, a new ACP session, `agentls run`) compares each workspace config file (.agentls/
config.json, .mcp.json) with the content the user last confirmed (agentls.trust.TrustStore). A
file that is new or changed since is a PendingConfig: it does not apply (the last confirmed
content does, or none), and each front end shows `diff()` and asks once: the VS Code panel
(agent/confirmWorkspaceConfig), `agentls run` at a terminal, ACP's session/request_permission.
"Apply" is `confirm()`: it records the exact content that was shown, never a later one.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentls.trust import TrustStore, digest, enabled_by

# "hooks": a workspace's Claude Code settings (.claude/settings*.json) holding hooks (programs).
ConfigKind = Literal["config", "mcp", "hooks"]
Change = Literal["new", "changed", "deleted"]
# The sha256 a deletion is known by (no content has it).
DELETED = "deleted"

# The longest diff a question shows in full; a longer one ends with how many lines were left out
# (`agentls trust --show DIR` is not needed: the file itself is there to read).
MAX_DIFF_LINES = 400


@dataclass(frozen=True)
class PendingConfig:
    file: Path
    kind: ConfigKind
    # "new": never confirmed; "changed": differs from what was confirmed; "deleted": gone, while
    # a content confirmed before is kept (it applies until the user accepts the deletion)
    change: Change
    sha256: str  # of `new_text`'s bytes (DELETED for a deletion): what "Apply" confirms
    old_text: str | None  # the last confirmed content (what applies now), None if none is kept
    new_text: str
    declined: bool  # the user chose "Keep ignoring" for this content: not asked again

    @property
    def key(self) -> tuple[str, str]:
        return (str(self.file), self.sha256)

    def title(self) -> str:
        what = {
            "mcp": "MCP servers file",
            "hooks": "Claude Code settings (their hooks run programs)",
            "config": "agentls config",
        }[self.kind]
        if self.change == "new":
            return f"Apply the workspace's new {what} {self.file}?"
        if self.change == "deleted":
            return f"The workspace's {what} {self.file} was deleted: stop applying it?"
        return f"Apply the changed {what} {self.file}?"

    def diff(self) -> str:
        """A unified diff from the confirmed content (or nothing) to the file's."""
        old = (self.old_text or "").splitlines(keepends=True)
        new = self.new_text.splitlines(keepends=True)
        before = f"{self.file} (confirmed)" if self.old_text is not None else "/dev/null"
        after = "/dev/null" if self.change == "deleted" else f"{self.file} (now)"
        lines = [
            line if line.endswith("\n") else line + "\n"
            for line in difflib.unified_diff(old, new, before, after)
        ]
        if len(lines) > MAX_DIFF_LINES:
            left = len(lines) - MAX_DIFF_LINES
            lines = [*lines[:MAX_DIFF_LINES], f"... {left} more lines: read {self.file}\n"]
        return "".join(lines)

    def enables(self) -> list[str]:
        """What applying it would enable, one line each (allow rules, commands, MCP servers)."""
        from agentls.config_files import parse_json_object

        if self.change == "deleted":
            return []
        try:
            layer = parse_json_object(self.file, self.new_text)
        except ValueError as exc:
            return [str(exc)]
        if self.kind == "mcp":
            servers = layer.get("mcpServers")
            if not isinstance(servers, dict):
                return []
            return [
                f"MCP server {name}: {describe_server(entry)}" for name, entry in servers.items()
            ]
        if self.kind == "hooks":
            return hook_lines(layer.get("hooks"))
        return enabled_by(layer)

    def message(self) -> str:
        """The whole question in words: title, what it enables, the diff."""
        parts = [self.title()]
        if self.old_text is None and self.change == "changed":
            parts.append("(The content you confirmed before is not kept; nothing of it applies.)")
        enables = self.enables()
        if enables:
            parts.append("It enables:\n" + "\n".join(f"  {line}" for line in enables))
        parts.append(self.diff().rstrip("\n"))
        parts.append(self.until())
        return "\n\n".join(parts)

    def until(self) -> str:
        """What applies until the user says "Apply"."""
        if self.change == "deleted":
            return "Until you apply the deletion, agentls keeps applying the content you confirmed."
        if self.old_text is not None:
            return "Until you apply it, agentls ignores it and keeps the content you confirmed."
        return "Until you apply it, agentls ignores it."


def hook_lines(hooks: object) -> list[str]:
    """Each command hook of a Claude Code settings file, one line: "hook Stop: make test"."""
    lines: list[str] = []
    for event, groups in (hooks if isinstance(hooks, dict) else {}).items():
        for group in groups if isinstance(groups, list) else []:
            if not isinstance(group, dict):
                continue
            matcher = f" [{group['matcher']}]" if group.get("matcher") else ""
            for hook in group.get("hooks") or []:
                if isinstance(hook, dict) and hook.get("command"):
                    lines.append(f"hook {event}{matcher}: {hook['command']}")
    return lines


def pending_hooks(store: TrustStore, root: Path) -> list[PendingConfig]:
    """The workspace's Claude Code settings files holding hooks whose content the user has not
    confirmed (agentls.hooks runs them only in a confirmed content): asked about as any
    workspace config, in a trusted workspace."""
    import os

    from agentls.config_files import parse_json_object, read_workspace_bytes

    out: list[PendingConfig] = []
    folder = Path(os.path.realpath(root)) / ".claude"
    for file in (folder / "settings.json", folder / "settings.local.json"):
        try:
            data = read_workspace_bytes(file)
            if data is None or not parse_json_object(file, data).get("hooks"):
                continue
        except ValueError:
            continue  # said when the hooks are loaded (agentls.hooks.config)
        waiting = pending_config(store, file, "hooks", data)
        if waiting is not None:
            out.append(waiting)
    return out


def describe_server(entry: object) -> str:
    if not isinstance(entry, dict):
        return "?"
    if entry.get("url"):
        return str(entry["url"])
    return " ".join([str(entry.get("command", "?")), *map(str, entry.get("args") or [])])


def pending_config(
    store: TrustStore, file: Path, kind: ConfigKind, data: bytes
) -> PendingConfig | None:
    """The PendingConfig of `file` whose content is `data`; None when it is confirmed."""
    state = store.state(file, data)
    if state == "trusted":
        return None
    old = store.confirmed(file)
    sha = digest(data)
    return PendingConfig(
        file=file,
        kind=kind,
        change="changed" if state == "changed" else "new",
        sha256=sha,
        old_text=None if old is None else old.decode("utf-8", "replace"),
        new_text=data.decode("utf-8", "replace"),
        declined=store.declined().get(str(file)) == sha,
    )


def pending_deletion(store: TrustStore, file: Path, kind: ConfigKind) -> PendingConfig | None:
    """The PendingConfig of a deleted `file` whose confirmed content is kept (it still applies:
    a deletion may loosen, a deny rule or `"sandbox": "required"` gone); None when there is
    nothing confirmed to keep applying."""
    old = store.confirmed(file)
    if old is None:
        return None
    return PendingConfig(
        file=file,
        kind=kind,
        change="deleted",
        sha256=DELETED,
        old_text=old.decode("utf-8", "replace"),
        new_text="",
        declined=store.declined().get(str(file)) == DELETED,
    )


def confirm(pending: PendingConfig, store: TrustStore | None = None) -> bool:
    """The user said "Apply": trust the content that was shown (for a deletion: forget the
    confirmed content). False (nothing recorded) when the file changed again since, or is gone:
    the next load asks about the new content."""
    from agentls.config_files import read_workspace_bytes

    try:
        data = read_workspace_bytes(pending.file)
    except ValueError:
        return False
    if pending.change == "deleted":
        if data is not None:
            return False
        (store or TrustStore()).revoke(pending.file)
        return True
    if data is None or digest(data) != pending.sha256:
        return False
    (store or TrustStore()).trust(pending.file, data)
    return True


def keep_ignoring(pending: PendingConfig, store: TrustStore | None = None) -> None:
    """The user said "Keep ignoring": not asked again about this content."""
    (store or TrustStore()).decline(pending.file, pending.sha256)
