"""Permission rules: (tool or "*", optional pattern) -> allow | ask | deny; the last match wins."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path
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
def _glob_body(pattern: str) -> str:
    """A path glob as a regex (without the end anchor): `**` crosses directories, `*` and `?` do
    not; a bare directory covers its tree."""
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
    return body


@lru_cache(maxsize=512)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(_glob_body(pattern) + r"\Z")


def _literal_runs(pattern: str) -> list[str]:
    """The runs of plain characters of a path glob (as _glob_body reads it): every path the glob
    matches contains each of them."""
    runs: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i) or pattern[i] in "*?":
            step = 3 if pattern.startswith("**/", i) else 2 if pattern.startswith("**", i) else 1
            if current:
                runs.append("".join(current))
                current = []
            i += step
            continue
        current.append(pattern[i])
        i += 1
    if current:
        runs.append("".join(current))
    return runs


def _rule_pattern(pattern: str) -> str:
    return os.path.expanduser(pattern).rstrip("/") or "/"


def path_matches(pattern: str, subject: str) -> bool:
    return _glob_regex(_rule_pattern(pattern)).match(subject) is not None


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
        return _decide(
            self.rules, tool, outside_workspace, lambda pattern: path_matches(pattern, subject)
        )

    def path_filter(
        self, tool: str, *, prefix: str = "", outside_workspace: bool = False
    ) -> PathFilter:
        """evaluate(tool, prefix + name, ...) == "allow" for many names at once (see PathFilter)."""
        return PathFilter(self.rules, tool, prefix=prefix, outside_workspace=outside_workspace)

    def read_filter(self, root: Path, base: Path) -> PathFilter | None:
        """Whether `read` is allowed on the files under directory `base`, by their paths relative
        to it ("pkg/a.py"), as a tool context's may_show asks for a file: on its path relative to
        the workspace `root` inside it, its absolute path outside. None when `base` holds the root
        (its files are on both sides)."""
        if base == root:
            return self.path_filter("read")
        if root in base.parents:
            return self.path_filter("read", prefix=base.relative_to(root).as_posix() + "/")
        if base not in root.parents:
            return self.path_filter(
                "read", prefix=str(base).rstrip("/") + "/", outside_workspace=True
            )
        return None

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


def _decide(
    rules: Iterable[Rule], tool: str, outside_workspace: bool, matches: Callable[[str], bool]
) -> Action:
    """The last matching rule's action (a secret rule only when it is stricter); `matches` tells
    whether a rule's pattern matches the subject."""
    result: Action | None = None
    for rule in rules:
        if rule.tool != tool and rule.tool != "*":
            continue
        if rule.pattern is None:
            if outside_workspace:
                continue
        elif not matches(rule.pattern):
            continue
        if isinstance(rule, SecretRule) and (
            result is None or _SEVERITY[rule.action] < _SEVERITY[result]
        ):
            continue
        result = rule.action
    if result is None:
        return "deny" if outside_workspace else "ask"
    return result


class PathFilter:
    """Whether `tool` is allowed on each of many paths `prefix + name`, exactly as
    PermissionRules.evaluate(tool, prefix + name, outside_workspace=...) == "allow" answers, at a
    fraction of its cost, for searches that list thousands of files.

    The rules without a pattern give one answer, `default`, decided once, for every path that no
    rule pattern matches. A pattern can only match a path that contains its longest plain run
    (".env", ".pem", "id_rsa" for the secret globs), so one substring scan of a whole listing finds
    the few paths that need the rules walked; a pattern without any plain part ("*") makes every
    path such a candidate."""

    def __init__(
        self,
        rules: Iterable[Rule],
        tool: str,
        *,
        prefix: str = "",
        outside_workspace: bool = False,
    ) -> None:
        self._rules = [r for r in rules if r.tool == tool or r.tool == "*"]
        self._tool = tool
        self._outside = outside_workspace
        self.prefix = prefix
        self.default = _decide(self._rules, tool, outside_workspace, lambda _p: False) == "allow"
        patterns = sorted({_rule_pattern(r.pattern) for r in self._rules if r.pattern is not None})
        # A superset test (matches some pattern) before the rules are walked for a path.
        self._any: re.Pattern[str] | None = None
        if patterns:
            union = "|".join(f"(?:{_glob_body(p)})" for p in patterns)
            self._any = re.compile(f"(?:{union})\\Z")
        # Each pattern's longest plain run (a needle holding another finds nothing more); None
        # when a pattern has none: then every path is a candidate.
        self._needles: tuple[str, ...] | None = None
        runs = [_literal_runs(p) for p in patterns]
        if all(runs):
            needles = {max(r, key=len) for r in runs}
            self._needles = tuple(
                sorted(n for n in needles if not any(m != n and m in n for m in needles))
            )

    def __call__(self, name: str) -> bool:
        subject = self.prefix + name
        if self._needles is not None and not any(n in subject for n in self._needles):
            return self.default
        return self._allows(subject)

    def split(self, names: Sequence[str]) -> tuple[list[str], int]:
        """The names the tool is allowed on, in their order, and how many it is not."""
        different = self._not_default(names)
        if self.default:
            if not different:
                return list(names), 0
            shown = [n for n in names if n not in different]
        else:
            shown = [n for n in names if n in different]
        return shown, len(names) - len(shown)

    def shows_all(self, listing: str) -> bool:
        """True when the tool is allowed on every name of the listing (names joined by line
        breaks): the default allows, and no path holds a needle. False: split() tells."""
        if not self.default or self._needles is None:
            return False
        if not self._needles:
            return True
        prefix = self.prefix
        text = prefix + listing.replace("\n", "\n" + prefix) if prefix else listing
        return not any(needle in text for needle in self._needles)

    def _allows(self, subject: str) -> bool:
        if self._any is None or self._any.match(subject) is None:
            return self.default
        action = _decide(
            self._rules, self._tool, self._outside, lambda pattern: path_matches(pattern, subject)
        )
        return action == "allow"

    def _candidates(self, names: Sequence[str]) -> Iterable[str]:
        """The names that may match a rule pattern: those whose path holds one of the needles."""
        if self._needles is None:
            return names
        if not self._needles or not names:
            return ()
        prefix = self.prefix
        text = prefix + ("\n" + prefix).join(names)
        if text.count("\n") != len(names) - 1:  # a name (or the prefix) holds a line break
            return names
        found: set[str] = set()
        for needle in self._needles:
            i = text.find(needle)
            while i >= 0:
                start = text.rfind("\n", 0, i) + 1
                end = text.find("\n", i)
                if end < 0:
                    end = len(text)
                found.add(text[start + len(prefix) : end])
                i = text.find(needle, max(end, i + 1))
        return found

    def _not_default(self, names: Sequence[str]) -> set[str]:
        default = self.default
        prefix = self.prefix
        return {n for n in self._candidates(names) if self._allows(prefix + n) != default}


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
