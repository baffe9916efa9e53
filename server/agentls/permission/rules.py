"""Permission rules: (tool or "*", optional pattern) -> allow | ask | deny; the last match wins."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

Action = Literal["allow", "ask", "deny"]
FILE_TOOLS = frozenset({"read", "write", "edit", "glob", "grep", "list"})
READ_TOOLS = ("read", "glob", "grep", "list")


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    pattern: str | None = None
    action: Action


class SecretRule(Rule):
    """A secret glob's "ask": it makes a matching file stricter, never looser. In particular it
    never opens a path outside the workspace, which stays refused (e.g. ~/.ssh/id_rsa)."""


_SEVERITY = {"allow": 0, "ask": 1, "deny": 2}


# Files that usually hold secrets: reading them asks, and grep/glob leave them out of their results,
# unless a rule with a pattern naming them allows it.
SECRET_PATTERNS: tuple[str, ...] = (
    "**/.env",
    "**/.env.*",
    "**/*.pem",
    "**/*.key",
    "**/id_rsa*",
    "**/id_dsa*",
    "**/id_ecdsa*",
    "**/id_ed25519*",
)


def secret_globs(extra: Iterable[str] | None = None) -> tuple[str, ...]:
    """SECRET_PATTERNS plus configured globs; one without a "/" matches at any depth, like
    SECRET_PATTERNS' own ("*.secret" -> "**/*.secret")."""
    more = []
    for raw in extra or ():
        pattern = raw.strip()
        if not pattern:
            continue
        if "/" not in pattern:
            pattern = "**/" + pattern
        more.append(pattern)
    return (*SECRET_PATTERNS, *more)


DEFAULT_RULES: tuple[Rule, ...] = (
    Rule(tool="*", action="ask"),
    *(Rule(tool=t, action="allow") for t in READ_TOOLS),
    Rule(tool="edit", action="ask"),
    Rule(tool="write", action="ask"),
    Rule(tool="bash", action="ask"),
)


@lru_cache(maxsize=512)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A path glob: `**` crosses directories, `*` and `?` do not; a bare directory covers its tree."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(c))
        i += 1
    body = "".join(out)
    if not any(ch in pattern for ch in "*?"):
        # "src" or "/opt/data": the path itself and everything under it.
        body += "(?:/.*)?"
    return re.compile(body + r"\Z")


def path_matches(pattern: str, subject: str) -> bool:
    pattern = os.path.expanduser(pattern).rstrip("/") or "/"
    return _glob_regex(pattern).match(subject) is not None


_SEPARATORS = ("&&", "||", ";", "|", "&", "\n")


def split_commands(command: str) -> list[str]:
    """Split a shell command into its simple commands: `;`, `&&`, `||`, `|`, `&`, newlines, and
    the insides of `$( )` and backticks. Quotes are respected."""
    parts: list[str] = []
    current: list[str] = []
    i = 0
    quote: str | None = None
    n = len(command)
    while i < n:
        c = command[i]
        if quote:
            if c == "\\" and quote == '"' and i + 1 < n:
                current.append(command[i : i + 2])
                i += 2
                continue
            if c == quote:
                quote = None
            elif quote == '"' and (command.startswith("$(", i) or c == "`"):
                inner, end = _substitution(command, i)
                parts.extend(split_commands(inner))
                current.append(command[i:end])
                i = end
                continue
            current.append(c)
            i += 1
            continue
        if c in ("'", '"'):
            quote = c
            current.append(c)
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            current.append(command[i : i + 2])
            i += 2
            continue
        if command.startswith("$(", i) or c == "`":
            inner, end = _substitution(command, i)
            parts.extend(split_commands(inner))
            current.append(command[i:end])
            i = end
            continue
        sep = next((s for s in _SEPARATORS if command.startswith(s, i)), None)
        if sep:
            parts.append("".join(current))
            current = []
            i += len(sep)
            continue
        current.append(c)
        i += 1
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip() and p.strip() not in ("(", ")", "{", "}")]


def _substitution(command: str, start: int) -> tuple[str, int]:
    """The text inside `$( ... )` or backticks starting at `start`, and the index after it."""
    if command[start] == "`":
        end = command.find("`", start + 1)
        end = len(command) if end < 0 else end
        return command[start + 1 : end], end + 1
    depth = 0
    i = start + 1
    while i < len(command):
        if command[i] == "(":
            depth += 1
        elif command[i] == ")":
            depth -= 1
            if depth == 0:
                return command[start + 2 : i], i + 1
        i += 1
    return command[start + 2 :], len(command)


def command_matches(prefix: str, command: str) -> bool:
    prefix = prefix.strip()
    if prefix.endswith("*"):
        return command.startswith(prefix[:-1])
    return command == prefix or command.startswith(prefix + " ")


def bash_prefix(command: str, words: int = 2) -> str:
    return " ".join(command.split()[:words])


class PermissionRules:
    """An ordered rule list. Defaults first, then configuration, then the session's "always" grants."""

    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        self.rules: list[Rule] = list(rules)

    @classmethod
    def from_config(
        cls,
        value: Any,
        *,
        with_defaults: bool = True,
        secret_patterns: Iterable[str] = SECRET_PATTERNS,
    ) -> PermissionRules:
        configured = parse_rules(value)
        rules: list[Rule] = list(DEFAULT_RULES) if with_defaults else []
        rules.extend(configured)
        # Secrets ask even after a blanket {"read": "allow"} or {"*": "allow"}; only a configured
        # rule whose pattern names them (kept in its order, after these) opens them.
        rules.extend(SecretRule(tool="read", pattern=p, action="ask") for p in secret_patterns)
        rules.extend(r for r in configured if r.pattern is not None)
        return cls(rules)

    def extended(self, more: Iterable[Rule]) -> PermissionRules:
        return PermissionRules([*self.rules, *more])

    def evaluate(self, tool: str, subject: str, *, outside_workspace: bool = False) -> Action:
        """The action for this call. Outside the workspace only rules with a pattern count; with
        none matching, the answer is deny."""
        if tool == "bash":
            pieces = split_commands(subject) or [subject]
            return self._evaluate_bash(pieces)
        result: Action | None = None
        for rule in self.rules:
            if rule.tool != tool and rule.tool != "*":
                continue
            if rule.pattern is None:
                if outside_workspace:
                    continue
            elif not path_matches(rule.pattern, subject):
                continue
            if isinstance(rule, SecretRule) and (
                result is None or _SEVERITY[rule.action] < _SEVERITY[result]
            ):
                continue
            result = rule.action
        if result is None:
            return "deny" if outside_workspace else "ask"
        return result

    def _evaluate_bash(self, pieces: list[str]) -> Action:
        """Each simple command is judged on its own (last matching rule); the strictest wins, so a
        rule allows a compound command only if it allows every part of it."""
        severity = {"allow": 0, "ask": 1, "deny": 2}
        overall: Action = "allow"
        for piece in pieces:
            action: Action = "ask"
            for rule in self.rules:
                if rule.tool not in ("bash", "*"):
                    continue
                if rule.pattern is not None and not command_matches(rule.pattern, piece):
                    continue
                action = rule.action
            if severity[action] > severity[overall]:
                overall = action
        return overall

    def opens_outside(self, tool: str, absolute_path: str) -> bool:
        """Whether some rule with a pattern names this outside path for this tool (not deny)."""
        return self.evaluate(tool, absolute_path, outside_workspace=True) != "deny"


def parse_rules(value: Any) -> list[Rule]:
    """Configuration to rules. The short form {tool: action} puts "*" first so a tool's own entry
    wins; the long form is a list of {tool, pattern?, action} in order."""
    if value is None:
        return []
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: kv[0] != "*")
        rules = []
        for tool, action in items:
            if isinstance(action, dict):
                # {"bash": {"git status": "allow", "*": "ask"}}: per-pattern actions for one tool.
                for pattern, sub_action in sorted(action.items(), key=lambda kv: kv[0] != "*"):
                    rules.append(
                        Rule(
                            tool=tool,
                            pattern=None if pattern == "*" else pattern,
                            action=sub_action,
                        )
                    )
            else:
                rules.append(Rule(tool=tool, action=action))
        return rules
    if isinstance(value, list):
        return [Rule.model_validate(item) for item in value]
    raise ValueError(
        "permissions must be a mapping {tool: action} or a list of {tool, pattern?, action} rules"
    )
