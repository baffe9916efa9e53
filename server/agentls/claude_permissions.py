"""Claude Code's permission rules as agentls rules (`agentls permissions import`).

Claude Code keeps `permissions.allow`, `.ask` and `.deny` lists of rules `Tool` or
`Tool(specifier)` in ~/.claude/settings.json (or $CLAUDE_CONFIG_DIR) and a project's
.claude/settings.json and .claude/settings.local.json; the lists of every file add up, and deny
beats ask beats allow whatever the order (code.claude.com/docs/en/permissions). agentls's rules are
one ordered list in which the last match wins, so the imported rules go after the ones already
there in that order: allows, then asks, then denies.

Never wider than Claude Code: where agentls cannot say the same thing, an allow or ask is
narrowed or skipped, and a deny or ask widened (it then forbids or asks about more, and says so);
what cannot be translated at all is skipped with the reason. A rule already in the target that is
stricter than an imported one on the same tool (a deny, or an ask naming a pattern) is written
again after the imported rules, so the import never overrides it.

Rules from the user's own files go to the user's config; those from a workspace's files to that
workspace's .agentls/config.json, whose `permissions` replace the user's there (so the user's
rules are copied in first) and whose allow rules count only once the user confirms the file
(`agentls trust`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentls.atomic_file import replace_file
from agentls.config_files import parse_json_object, read_workspace_bytes
from agentls.config_home import claude_home, config_home
from agentls.permission.rules import Rule, parse_rules, tool_matches
from agentls.permission.types import SEVERITY
from agentls.trust import workspace_config

Level = Literal["user", "workspace"]
Kind = Literal["allow", "ask", "deny"]
KINDS: tuple[Kind, ...] = ("allow", "ask", "deny")


class ImportProblem(Exception):
    """A file that cannot be read as it should be; the message names it (and the key)."""


@dataclass(frozen=True)
class Entry:
    """One string of a Claude Code permissions list."""

    source: Path
    level: Level
    kind: Kind
    text: str


@dataclass(frozen=True)
class Translated:
    entry: Entry
    rules: tuple[Rule, ...]
    note: str | None = None  # how it differs from Claude Code's rule (narrower or broader)


@dataclass(frozen=True)
class Skipped:
    source: Path
    text: str  # "deny WebSearch", or the key ("permissions.defaultMode")
    reason: str


@dataclass
class Target:
    """A config file the import writes: its rules before and after."""

    path: Path
    level: Level
    data: dict[str, Any]  # the file's other keys, kept
    before: list[Rule]
    after: list[Rule]
    added: list[Rule] = field(default_factory=list)
    already: list[Rule] = field(default_factory=list)  # imported, but there already
    restated: list[Rule] = field(default_factory=list)  # kept stricter: written again after
    converted: bool = False  # its {tool: action} form becomes a list (same meaning)

    @property
    def changed(self) -> bool:
        return bool(self.added)


@dataclass
class ImportPlan:
    sources: list[Path]
    translated: list[Translated]
    skipped: list[Skipped]
    targets: list[Target]


# ---- finding and reading Claude Code's settings -------------------------------------------


def claude_settings_files(workspace: Path | None) -> list[tuple[Path, Level]]:
    """The settings files Claude Code reads, those that exist: the user's (in claude_home():
    settings.json, settings.local.json), then the workspace's .claude/settings.json and
    .claude/settings.local.json."""
    user_dir = claude_home()
    found: list[tuple[Path, Level]] = []
    seen: set[str] = set()
    candidates: list[tuple[Path, Level]] = [
        (user_dir / "settings.json", "user"),
        (user_dir / "settings.local.json", "user"),
    ]
    if workspace is not None:
        candidates += [
            (workspace / ".claude" / "settings.json", "workspace"),
            (workspace / ".claude" / "settings.local.json", "workspace"),
        ]
    for path, level in candidates:
        real = os.path.realpath(path)
        if real in seen or not path.is_file():
            continue
        seen.add(real)
        found.append((path, level))
    return found


def read_entries(path: Path, level: Level) -> tuple[list[Entry], list[Skipped]]:
    """The rules of one settings file, and what in its `permissions` is not a rule list entry."""
    try:
        raw = read_workspace_bytes(path)
        data = parse_json_object(path, raw if raw is not None else b"{}")
    except ValueError as exc:
        raise ImportProblem(str(exc)) from None
    permissions = data.get("permissions")
    if permissions is None:
        return [], []
    if not isinstance(permissions, dict):
        raise ImportProblem(f"{path}: permissions: expected an object with allow, ask, deny lists")
    entries: list[Entry] = []
    skipped: list[Skipped] = []
    for key, value in permissions.items():
        if key not in KINDS:
            skipped.append(
                Skipped(path, f"permissions.{key}", "agentls has no such setting; not imported")
            )
            continue
        if not isinstance(value, list):
            raise ImportProblem(f"{path}: permissions.{key}: expected a list of rules")
        for item in value:
            if not isinstance(item, str):
                skipped.append(Skipped(path, f"{key} {json.dumps(item)}", "not a rule string"))
                continue
            entries.append(Entry(path, level, key, item))
    return entries, skipped


# ---- translating one rule -------------------------------------------------------------------

_RULE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_MCP = re.compile(r"^mcp__[A-Za-z0-9_-]+(?:__(?:\*|[A-Za-z0-9_.-]+))?$")
# Claude Code's tools that take no specifier and have an agentls tool of the same use.
_PLAIN_TOOLS = {
    "Glob": ("glob",),
    "Grep": ("grep",),
    "LS": ("list",),
    "TodoWrite": ("todowrite",),
    "Task": ("task",),
    "Agent": ("task",),
}
_NO_TOOL = {
    "WebSearch": "agentls has no web search tool",
    "NotebookEdit": "agentls has no notebook tool (edit's rules cover .ipynb files as text)",
    "NotebookRead": "agentls has no notebook tool (read's rules cover .ipynb files as text)",
    "BashOutput": "agentls has no background shell tools",
    "KillShell": "agentls has no background shell tools",
    "KillBash": "agentls has no background shell tools",
    "ExitPlanMode": "agentls's plan mode asks before it ends in any case",
    "SlashCommand": "agentls's commands are not tools",
    "Skill": "agentls has no skill permissions",
}
_READ_TOOLS = ("read", "glob", "grep", "list")
# Characters a shell gives meaning to: a bash pattern holding one is not plain words.
_SHELL = re.compile(r"[\"'`$|&;<>()\\\n{}\[\]!#~]")
# Path patterns agentls's globs do not read as gitignore does.
_GITIGNORE_ONLY = re.compile(r"[\[\]\\]|^!")


def _rule(tool: str, kind: Kind, pattern: str | None = None, exact: bool = False) -> Rule:
    return Rule(tool=tool, pattern=pattern, action=kind, exact=exact)


def translate(entry: Entry) -> Translated | Skipped:
    """One Claude Code rule as agentls rules, or why it is skipped."""
    label = f"{entry.kind} {entry.text}"
    if entry.text.strip().startswith("mcp__"):
        name = entry.text.strip()
        if not _MCP.match(name):
            return Skipped(
                entry.source, label, "not an MCP tool name mcp__server or mcp__server__tool"
            )
        return Translated(entry, (_rule(name, entry.kind),))
    match = _RULE.match(entry.text)
    if match is None:
        return Skipped(entry.source, label, "not a rule of the form Tool or Tool(specifier)")
    name, spec = match.group(1), match.group(2)
    if spec is not None and spec.strip() == "*":
        spec = None  # Bash(*) is Bash
    if spec is not None and not spec.strip():
        return Skipped(entry.source, label, "an empty specifier")
    if name == "Bash":
        return _bash(entry, label, spec)
    if name in ("Read", "Edit", "MultiEdit", "Write"):
        return _file(entry, label, name, spec)
    if name == "WebFetch":
        return _webfetch(entry, label, spec)
    if name in _PLAIN_TOOLS:
        if spec is not None:
            why = (
                "agentls's sub-agent types are its own; a rule naming one is not translated"
                if name in ("Task", "Agent")
                else f"agentls's {name} rules take no specifier here; not translated"
            )
            return Skipped(entry.source, label, why)
        return Translated(entry, tuple(_rule(t, entry.kind) for t in _PLAIN_TOOLS[name]))
    if name in _NO_TOOL:
        return Skipped(entry.source, label, _NO_TOOL[name])
    return Skipped(entry.source, label, f"agentls has no tool that {name} stands for")


def _bash(entry: Entry, label: str, spec: str | None) -> Translated | Skipped:
    kind = entry.kind
    if spec is None:
        return Translated(entry, (_rule("bash", kind),))
    text = " ".join(spec.split())
    if text.endswith(":*"):  # the legacy form: `npm run test:*` is `npm run test *`
        text = text[:-2].rstrip() + " *"
    star = text.find("*")
    shell = _SHELL.search(text)
    plain = shell is None and (star == -1 or star == len(text) - 1)
    if plain:
        if star == -1:
            # Claude Code's `npm run build` is that command exactly: for allow the one line; a
            # deny or ask also takes more words after it (agentls's prefix), and says so.
            if kind == "allow":
                return Translated(
                    entry,
                    (_rule("bash", kind, text, exact=True),),
                    "exactly this line (agentls does not allow it inside a longer line)",
                )
            return Translated(
                entry, (_rule("bash", kind, text),), f"also `{text} ...` with more words"
            )
        return Translated(entry, (_rule("bash", kind, text),))
    if kind == "allow":
        why = (
            "a `*` before the end (agentls's bash rules are prefixes)"
            if shell is None
            else "shell characters in the pattern (agentls's bash rules are plain words)"
        )
        return Skipped(entry.source, label, f"{why}; not allowed, so it still asks")
    words: list[str] = []
    for word in text.split():
        if "*" in word or _SHELL.search(word):
            break
        words.append(word)
    prefix = " ".join(words)
    if not prefix:
        return Skipped(
            entry.source, label, "no plain command words before the `*` or shell characters"
        )
    return Translated(
        entry,
        (_rule("bash", kind, prefix),),
        f"broader: every `{prefix} ...` command (agentls's bash rules are prefixes)",
    )


def _path_pattern(spec: str, kind: Kind) -> tuple[str, str | None] | str:
    """A gitignore-style path of Claude Code as an agentls path glob, and a note; or why not."""
    text = spec.strip()
    if _GITIGNORE_ONLY.search(text):
        return "character classes, escapes and `!` are gitignore syntax agentls's globs lack"
    if text.startswith("//"):
        pattern = "/" + text[2:].lstrip("/")
    elif text.startswith("~/") or text == "~":
        pattern = text
    elif text.startswith("/"):
        pattern = text[1:]  # relative to the project root
    else:
        bare = text[2:] if text.startswith("./") else text
        if not bare:
            return "no path"
        if "/" not in bare.rstrip("/") and not text.startswith("./") and kind != "allow":
            # gitignore matches a name without "/" at any depth; Claude Code's table reads it
            # from the current folder: a deny or ask takes both.
            return f"**/{bare}", "at any depth (gitignore's reading of a name without `/`)"
        pattern = bare
    body = pattern[2:] if pattern.startswith("~/") else pattern
    if any(part == ".." for part in body.split("/")):
        return "a path with `..` in it"
    if not pattern.strip("/"):
        return "the whole file system: give the tool's name alone for every file"
    return pattern, None


def _file(entry: Entry, label: str, name: str, spec: str | None) -> Translated | Skipped:
    kind = entry.kind
    if name == "Read":
        # Claude Code applies Read rules to Grep and Glob too (best effort): a deny or ask here
        # covers agentls's reading tools; an allow only read (the others allow by default).
        tools: tuple[str, ...] = _READ_TOOLS if kind != "allow" else ("read",)
    elif name == "Write" and kind == "allow":
        tools = ("write",)
    else:  # Edit rules cover every tool that edits files; a Write deny covers edits as well
        tools = ("edit", "write")
    if spec is None:
        return Translated(entry, tuple(_rule(t, kind) for t in tools))
    found = _path_pattern(spec, kind)
    if isinstance(found, str):
        return Skipped(entry.source, label, found)
    pattern, note = found
    return Translated(entry, tuple(_rule(t, kind, pattern) for t in tools), note)


def _webfetch(entry: Entry, label: str, spec: str | None) -> Translated | Skipped:
    kind = entry.kind
    if spec is None:
        return Translated(entry, (_rule("webfetch", kind),))
    text = spec.strip()
    if not text.startswith("domain:"):
        return Skipped(entry.source, label, "only domain:HOST is translated for WebFetch")
    host = text[len("domain:") :].strip().lower().rstrip(".")
    if not host or not re.fullmatch(r"(\*\.)?[a-z0-9.-]+|\*", host):
        return Skipped(entry.source, label, "not a host name")
    if host == "*":
        return Translated(entry, (_rule("webfetch", kind),))
    if kind == "allow" or host.startswith("*."):
        return Translated(entry, (_rule("webfetch", kind, host),))
    return Translated(
        entry,
        (_rule("webfetch", kind, host), _rule("webfetch", kind, f"*.{host}")),
        f"also its subdomains (*.{host})",
    )


# ---- merging into agentls's rules ------------------------------------------------------------


def _overlap(a: str, b: str) -> bool:
    return tool_matches(a, b) or tool_matches(b, a)


def merge(before: list[Rule], imported: Iterable[Rule]) -> Target:
    """`before` then the imported rules not already in it (allows, asks, denies), then each
    rule of `before` that is stricter than an added one on the same tool, again (see module)."""
    target = Target(Path(), "user", {}, list(before), list(before))
    present = set(before)
    ordered = sorted(imported, key=lambda r: KINDS.index(r.action))
    for rule in ordered:
        if rule in present:
            if rule not in target.already and rule not in target.added:
                target.already.append(rule)
            continue
        present.add(rule)
        target.added.append(rule)
    if not target.added:
        return target
    for rule in before:
        stricter = rule.action == "deny" or (rule.action == "ask" and rule.pattern is not None)
        if stricter and any(
            SEVERITY[a.action] < SEVERITY[rule.action] and _overlap(a.tool, rule.tool)
            for a in target.added
        ):
            if rule in target.restated:  # once, where it last stood
                target.restated.remove(rule)
            target.restated.append(rule)
    target.after = [*before, *target.added, *target.restated]
    return target


def rule_json(rule: Rule) -> dict[str, Any]:
    out: dict[str, Any] = {"tool": rule.tool}
    if rule.pattern is not None:
        out["pattern"] = rule.pattern
    out["action"] = rule.action
    if rule.exact:
        out["exact"] = True
    return out


def describe_rule(rule: Rule) -> str:
    """A rule in a few words: `bash "npm run test" allow`, `read ".env" deny (exact)`."""
    pattern = "" if rule.pattern is None else " " + json.dumps(rule.pattern, ensure_ascii=False)
    return f"{rule.tool}{pattern} {rule.action}" + (" (exact)" if rule.exact else "")


def _read_config(path: Path, level: Level) -> dict[str, Any]:
    try:
        if level == "workspace":
            raw = read_workspace_bytes(path)
            return {} if raw is None else parse_json_object(path, raw)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        return parse_json_object(path, text)
    except (ValueError, OSError) as exc:
        raise ImportProblem(str(exc)) from None


def _rules_of(path: Path, data: dict[str, Any]) -> list[Rule]:
    try:
        return parse_rules(data.get("permissions"))
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise ImportProblem(f"{path}: permissions: {exc}") from None


def plan_import(workspace: Path | None) -> ImportPlan:
    """What `agentls permissions import` would write, read from the files as they are now."""
    files = claude_settings_files(workspace)
    translated: list[Translated] = []
    skipped: list[Skipped] = []
    for path, level in files:
        entries, odd = read_entries(path, level)
        skipped += odd
        for entry in entries:
            result = translate(entry)
            if isinstance(result, Translated):
                translated.append(result)
            else:
                skipped.append(result)
    plan = ImportPlan([p for p, _ in files], translated, skipped, [])

    def rules(levels: tuple[Level, ...]) -> list[Rule]:
        return [r for t in translated if t.entry.level in levels for r in t.rules]

    user_path = config_home() / "config.json"
    user_data = _read_config(user_path, "user")
    user_before = _rules_of(user_path, user_data)
    user = merge(user_before, rules(("user",)))
    user.path, user.level, user.data = user_path, "user", user_data
    user.converted = isinstance(user_data.get("permissions"), dict) and user.changed
    if user.changed:
        plan.targets.append(user)
    if workspace is not None and any(t.entry.level == "workspace" for t in translated):
        path = workspace_config(workspace)
        data = _read_config(path, "workspace")
        # The workspace's permissions replace the user's there: start from the user's rules
        # (with this import's) when it has none of its own.
        before = _rules_of(path, data) if "permissions" in data else list(user.after)
        ws = merge(before, rules(("user", "workspace")))
        ws.path, ws.level, ws.data = path, "workspace", data
        ws.converted = isinstance(data.get("permissions"), dict) and ws.changed
        if ws.changed:
            plan.targets.append(ws)
    return plan


def write_target(target: Target) -> None:
    """The target's file with its new rules, its other keys as they were; written whole or not at
    all (a temporary file renamed over it)."""
    data = dict(target.data)
    data["permissions"] = [rule_json(r) for r in target.after]
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    target.path.parent.mkdir(parents=True, exist_ok=True)
    mode = target.path.stat().st_mode & 0o777 if target.path.exists() else 0o600
    replace_file(target.path, text.encode("utf-8"), mode)
