"""Permission rules: (tool or "*", optional pattern) -> allow | ask | deny (| sandboxed for bash).

The last matching rule wins, in the order the rules are listed: defaults, then configuration, then
the session's "always" grants. Secret globs only ever make a file stricter (see _decide)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentls.permission.globs import (
    glob_body,
    glob_regex,
    literal_runs,
    path_matches,
    rule_pattern,
)
from agentls.permission.protected import (
    PROTECTED_NAMES,
    SANDBOXED_GIT_EXACT,
    SANDBOXED_GIT_READS,
    hooks_dirs,
)
from agentls.permission.types import SEVERITY
from agentls.permission.types import Action as Action
from agentls.permission.types import Decision as Decision
from agentls.permission.types import Rule as Rule

if TYPE_CHECKING:
    from agentls.permission.bash_decision import BashDecision

# webfetch's subject is a URL's host, its rules' patterns host globs (see decide_host).
WEBFETCH = "webfetch"
FILE_TOOLS = frozenset({"read", "write", "edit", "glob", "grep", "list"})
READ_TOOLS = ("read", "glob", "grep", "list")
# Tools judged by another tool's rules: the language tools read what they show (symbols,
# definition, references, hover, callers) or edit every file they change (rename).
RULES_OF: dict[str, str] = {
    "symbols": "read",
    "definition": "read",
    "references": "read",
    "hover": "read",
    "callers": "read",
    "outline": "read",
    "type_definition": "read",
    "implementation": "read",
    "callees": "read",
    "rename": "edit",
    "code_actions": "read",
    "apply_code_action": "edit",
}


def rules_tool(tool: str) -> str:
    """The tool whose rules decide a call of `tool` (itself, unless RULES_OF names another)."""
    return RULES_OF.get(tool, tool)


class SecretRule(Rule):
    """A secret glob's "ask": it makes a matching file stricter, never looser, and only when the
    deciding rule has no pattern (a rule whose pattern names the file opens it). It never opens a
    path outside the workspace, which stays refused (e.g. ~/.ssh/id_rsa). Matched without regard
    to case; `exclude` (a glob) names paths it leaves alone (an SSH key's `.pub`)."""

    exclude: str | None = None


# Files that usually hold secrets: reading them asks, and grep/glob leave them out of their results,
# unless a rule with a pattern naming them allows it. Matched case-insensitively.
SECRET_PATTERNS: tuple[str, ...] = (
    "**/.env*",
    "**/.envrc",
    "**/.npmrc",
    "**/.pypirc",
    "**/.netrc",
    "**/.pgpass",
    "**/.git-credentials",
    "**/.aws/credentials",
    "**/.docker/config.json",
    "**/.kube/config",
    "**/*.pem",
    "**/*.key",
    "**/*.p12",
    "**/*.pfx",
    "**/id_rsa*",
    "**/id_dsa*",
    "**/id_ecdsa*",
    "**/id_ed25519*",
    "**/credentials.json",
    "**/service-account*.json",
)
# SSH public keys are not secrets: the key globs leave `*.pub` alone.
_SSH_KEY_PATTERNS = frozenset(p for p in SECRET_PATTERNS if p.startswith("**/id_"))
_PUBLIC_KEY = "**/*.pub"


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


def secret_rules(patterns: Iterable[str]) -> list[SecretRule]:
    return [
        SecretRule(
            tool="read",
            pattern=p,
            action="ask",
            exclude=_PUBLIC_KEY if p in _SSH_KEY_PATTERNS else None,
        )
        for p in patterns
    ]


class ProtectedRule(SecretRule):
    """A protected path's "ask" for `write` and `edit`: like a SecretRule (stricter only, without
    regard to case, opened only by a rule whose pattern names the path)."""


PROTECTED_PATTERNS: tuple[str, ...] = tuple(
    p for name in PROTECTED_NAMES for p in (f"**/{name}", f"**/{name}/**")
)
PROTECTED_TOOLS = ("write", "edit")


def protected_rules() -> list[ProtectedRule]:
    return [
        ProtectedRule(tool=tool, pattern=p, action="ask")
        for tool in PROTECTED_TOOLS
        for p in PROTECTED_PATTERNS
    ]


def hooks_rules(root: Path) -> list[ProtectedRule]:
    """The protected rules for the folder git's core.hooksPath names in this workspace (read
    again when git's config changes: see protected.hooks_dirs)."""
    return [
        ProtectedRule(tool=tool, pattern=p, action="ask")
        for tool in PROTECTED_TOOLS
        for d in hooks_dirs(root)
        for p in (d, f"{d}/**")
    ]


def _covers_all_git(pattern: str | None) -> bool:
    """Whether a bash rule's pattern reaches git commands beyond one subcommand: none, `*`, `git`,
    `git *`, `g*`, `gi*`, `git*`."""
    if pattern is None:
        return True
    text = pattern.strip()
    if text.endswith("*"):
        body = text[:-1].rstrip()
        return "git".startswith(body) or body == "git"
    return text == "git"


def _git_subcommand(pattern: str) -> str | None:
    words = pattern.split()
    return words[1] if len(words) >= 2 and words[0] == "git" else None


def _sandboxed_git(rules: list[Rule]) -> list[Rule]:
    """Each "sandboxed" bash rule that reaches git commands followed by rules making those that
    write the repository ask (the read-only ones stay sandboxed); later rules still win."""
    out: list[Rule] = []
    for rule in rules:
        out.append(rule)
        if rule.tool != "bash" or rule.action != "sandboxed":
            continue
        if rule.exact:
            continue  # one literal line the user named
        if _covers_all_git(rule.pattern):
            out.append(Rule(tool="bash", pattern="git", action="ask"))
            out += [Rule(tool="bash", pattern=p, action="sandboxed") for p in SANDBOXED_GIT_READS]
            out += [
                Rule(tool="bash", pattern=p, action="sandboxed", exact=True)
                for p in SANDBOXED_GIT_EXACT
            ]
        elif rule.pattern is not None:
            sub = _git_subcommand(rule.pattern)
            if sub is not None and f"git {sub}" not in SANDBOXED_GIT_READS:
                out.append(Rule(tool="bash", pattern=rule.pattern, action="ask"))
    return out


DEFAULT_RULES: tuple[Rule, ...] = (
    Rule(tool="*", action="ask"),
    *(Rule(tool=t, action="allow") for t in READ_TOOLS),
    Rule(tool="edit", action="ask"),
    Rule(tool="write", action="ask"),
    Rule(tool="bash", action="ask"),
    Rule(tool="webfetch", action="ask"),
)


def rule_matches_path(rule: Rule, subject: str) -> bool:
    """Whether a rule's pattern (not None) matches a path subject."""
    assert rule.pattern is not None
    if rule.exact:
        return subject == rule.pattern
    if isinstance(rule, SecretRule):
        if glob_regex(rule_pattern(rule.pattern), True).match(subject) is None:
            return False
        return rule.exclude is None or not glob_regex(rule.exclude, True).match(subject)
    return path_matches(rule.pattern, subject)


def _rule_body(rule: Rule) -> str:
    """A regex matching (at least) every subject the rule's pattern matches."""
    assert rule.pattern is not None
    if rule.exact:
        return re.escape(rule.pattern)
    body = glob_body(rule_pattern(rule.pattern))
    return f"(?i:{body})" if isinstance(rule, SecretRule) else body


def _rule_runs(rule: Rule) -> list[str]:
    assert rule.pattern is not None
    if rule.exact:
        return [rule.pattern] if rule.pattern else []
    return literal_runs(rule_pattern(rule.pattern))


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
        rules: list[Rule] = list(DEFAULT_RULES) if with_defaults else []
        # A "sandboxed" rule does not reach git commands that write the repository: they ask.
        rules.extend(_sandboxed_git(parse_rules(value)))
        # Secrets ask even after a blanket {"read": "allow"} or {"*": "allow"}; only a rule whose
        # pattern names them, deciding as the last match, opens them (see _decide). Writing a
        # protected path (PROTECTED_NAMES) asks in the same way.
        rules.extend(secret_rules(secret_patterns))
        rules.extend(protected_rules())
        return cls(rules)

    def extended(self, more: Iterable[Rule]) -> PermissionRules:
        return PermissionRules([*self.rules, *more])

    def evaluate(
        self,
        tool: str,
        subject: str,
        *,
        outside_workspace: bool = False,
        root: Path | None = None,
        sandboxed: bool = False,
    ) -> Decision:
        """The action for this call. Outside the workspace only rules with a pattern count; with
        none matching, the answer is deny. For bash, `subject` is the command line and `root` the
        workspace root it runs in (see decide_bash)."""
        if tool == "bash":
            return self.decide_bash(subject, root=root, sandboxed=sandboxed).action
        if tool == WEBFETCH:
            return self.decide_host(subject, private=outside_workspace)
        rules = self.rules
        if root is not None and not outside_workspace and rules_tool(tool) in PROTECTED_TOOLS:
            rules = [*rules, *hooks_rules(root)]
        return _decide(
            rules,
            rules_tool(tool),
            outside_workspace,
            lambda rule: rule_matches_path(rule, subject),
        )

    def decide_host(self, host: str, *, private: bool) -> Decision:
        """webfetch on `host` (an origin "https://host:443", or a bare lower-case host): the last
        matching rule, patterns as globs ("*.example.com"; see host_matches). A `private` host (it resolves to a loopback, link-local, private or
        reserved address) is denied unless the answer is not deny and a configured rule names it
        literally (not "*", not a glob, not an "always" grant): see host_named."""
        action = _decide(self.rules, WEBFETCH, False, lambda rule: host_matches(rule, host))
        if private and action != "deny" and not self.host_named(host):
            return "deny"
        return action

    def host_named(self, subject: str) -> bool:
        """Whether a configured webfetch rule (not deny) names this subject's host literally."""
        host = split_origin(subject)[1]
        return any(
            rule.tool == WEBFETCH
            and rule.action != "deny"
            and not rule.exact
            and rule.pattern is not None
            and split_origin(rule.pattern)[1] == host
            and host_matches(rule, subject)
            for rule in self.rules
        )

    def decide_bash(
        self, command: str, *, root: Path | None, sandboxed: bool = False
    ) -> BashDecision:
        """Every command the line can run judged on its own (last matching rule), its redirections
        as writes; the strictest answer wins. Unknowns ask, or deny where a deny rule could match."""
        # Imported here: the bash parser (tree-sitter) loads only once a bash call is judged.
        from agentls.permission.bash_decision import decide_bash

        def write_action(subject: str, outside: bool) -> Decision:
            return self.evaluate("write", subject, outside_workspace=outside, root=root)

        return decide_bash(
            self.rules, command, root=root, sandboxed=sandboxed, write_action=write_action
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

    def opens_outside(self, tool: str, absolute_path: str) -> bool:
        """Whether some rule with a pattern names this outside path for this tool (not deny)."""
        return self.evaluate(tool, absolute_path, outside_workspace=True) != "deny"


def host_pattern(pattern: str) -> str:
    """A webfetch rule's pattern as hosts are compared: lower-case, no trailing dot, an IPv6
    address without its brackets ("[::1]" -> "::1")."""
    return pattern.strip().strip("[]").rstrip(".").lower()


DEFAULT_PORTS = {"http": 80, "https": 443}


def split_origin(subject: str) -> tuple[str | None, str, int | None]:
    """webfetch's subject or a rule's pattern as (scheme, host, port): an origin
    ("https://example.com:443", what webfetch asks about and "always" grants) or a bare host
    ("docs.python.org", "*.example.com": a configured rule, an older grant), whose scheme and
    port are None."""
    if "://" not in subject:
        return None, host_pattern(subject), None
    scheme, _, rest = subject.strip().partition("://")
    rest = rest.rstrip("/")
    if rest.startswith("["):
        host, _, after = rest[1:].partition("]")
        port = after[1:] if after.startswith(":") else ""
    elif ":" in rest:
        host, _, port = rest.rpartition(":")
    else:
        host, port = rest, ""
    return scheme.lower(), host_pattern(host), int(port) if port.isdigit() else None


def host_matches(rule: Rule, subject: str) -> bool:
    """Whether a webfetch rule matches a subject (an origin, or a bare host): no pattern matches
    every one; an exact rule (an "always" grant) only its own scheme, host and port (an older
    grant naming a host alone: that host on its scheme's default port); a pattern as a glob on
    the host without regard to case ("*.example.com" matches "docs.example.com", not
    "example.com"), and on the scheme and port too when it names them ("http://localhost:8000")."""
    if rule.pattern is None:
        return True
    s_scheme, s_host, s_port = split_origin(subject)
    r_scheme, r_host, r_port = split_origin(rule.pattern)
    if rule.exact:
        if r_host != s_host:
            return False
        if r_scheme is None:
            return s_scheme is None or s_port == DEFAULT_PORTS.get(s_scheme)
        return (r_scheme, r_port) == (s_scheme, s_port)
    if glob_regex(r_host, True).match(s_host) is None:
        return False
    if r_scheme is not None and s_scheme is not None and r_scheme != s_scheme:
        return False
    return r_port is None or s_port is None or r_port == s_port


def tool_matches(rule_tool: str, tool: str) -> bool:
    """Whether a rule's tool names `tool`: the tool itself, "*", and for a tool of an MCP server
    (mcp__<server>__<name>) also `mcp__<server>` and `mcp__<server>__*`, every tool of it."""
    if rule_tool == tool or rule_tool == "*":
        return True
    if not (tool.startswith("mcp__") and rule_tool.startswith("mcp__")):
        return False
    if rule_tool.endswith("__*"):
        return tool.startswith(rule_tool[:-1])
    return "__" not in rule_tool[5:] and tool.startswith(rule_tool + "__")


def _decide(
    rules: Iterable[Rule], tool: str, outside_workspace: bool, matches: Callable[[Rule], bool]
) -> Decision:
    """The last matching rule's action; `matches` tells whether a rule's pattern matches the
    subject. Outside the workspace a rule without a pattern does not count, and no match is deny.
    A matching secret rule makes the answer at least its own when the deciding rule has no
    pattern (a default, a blanket allow), never when a rule naming the path decided."""
    result: Action | None = None
    by_pattern = False
    secret: Action | None = None
    for rule in rules:
        if not tool_matches(rule.tool, tool):
            continue
        if isinstance(rule, SecretRule):
            if matches(rule) and (secret is None or SEVERITY[rule.action] > SEVERITY[secret]):
                secret = rule.action
            continue
        if rule.pattern is None:
            if outside_workspace:
                continue
        elif not matches(rule):
            continue
        result = rule.action
        by_pattern = rule.pattern is not None
    if result is None:
        result = "deny" if outside_workspace else "ask"
        by_pattern = outside_workspace
    if secret is not None and not by_pattern and SEVERITY[secret] > SEVERITY[result]:
        result = secret
    if result == "sandboxed":
        return "ask"
    return result


class PathFilter:
    """Whether `tool` is allowed on each of many paths `prefix + name`, exactly as
    PermissionRules.evaluate(tool, prefix + name, outside_workspace=...) == "allow" answers, at a
    fraction of its cost, for searches that list thousands of files.

    The rules without a pattern give one answer, `default`, decided once, for every path that no
    rule pattern matches. A pattern can only match a path that contains its longest plain run
    (".env", ".pem", "id_rsa" for the secret globs), so one substring scan of a whole listing
    (lower-cased: secret globs ignore case) finds the few paths that need the rules walked; a
    pattern without any plain part ("*") makes every path such a candidate."""

    def __init__(
        self,
        rules: Iterable[Rule],
        tool: str,
        *,
        prefix: str = "",
        outside_workspace: bool = False,
    ) -> None:
        self._rules = [r for r in rules if tool_matches(r.tool, tool)]
        self._tool = tool
        self._outside = outside_workspace
        self.prefix = prefix
        self.default = _decide(self._rules, tool, outside_workspace, lambda _r: False) == "allow"
        patterned = [r for r in self._rules if r.pattern is not None]
        # A superset test (matches some pattern) before the rules are walked for a path.
        self._any: re.Pattern[str] | None = None
        if patterned:
            bodies = sorted({_rule_body(r) for r in patterned})
            # Each body matches in linear time (atomic groups, see glob_body), so does the union.
            union = "|".join(f"(?:{b})\\Z" for b in bodies)
            self._any = re.compile(union, re.DOTALL)
        # Each pattern's longest plain run, lower-cased (a needle holding another finds nothing
        # more); None when a pattern has none, or one holds a line break: every path a candidate.
        self._needles: tuple[str, ...] | None = None
        runs = [_rule_runs(r) for r in patterned]
        if all(runs):
            needles = {max(r, key=len).lower() for r in runs}
            if not any("\n" in n for n in needles):
                self._needles = tuple(
                    sorted(n for n in needles if not any(m != n and m in n for m in needles))
                )

    def __call__(self, name: str) -> bool:
        subject = self.prefix + name
        if self._needles is not None:
            lowered = subject.lower()
            if not any(n in lowered for n in self._needles):
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
        text = text.lower()
        return not any(needle in text for needle in self._needles)

    def _allows(self, subject: str) -> bool:
        if self._any is None or self._any.match(subject) is None:
            return self.default
        action = _decide(
            self._rules, self._tool, self._outside, lambda rule: rule_matches_path(rule, subject)
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
        lowered = text.lower()
        if len(lowered) != len(text):  # lower-casing moved the offsets (rare letters)
            return names
        found: set[str] = set()
        for needle in self._needles:
            i = lowered.find(needle)
            while i >= 0:
                start = lowered.rfind("\n", 0, i) + 1
                end = lowered.find("\n", i)
                if end < 0:
                    end = len(lowered)
                found.add(text[start + len(prefix) : end])
                i = lowered.find(needle, max(end, i + 1))
        return found

    def _not_default(self, names: Sequence[str]) -> set[str]:
        default = self.default
        prefix = self.prefix
        return {n for n in self._candidates(names) if self._allows(prefix + n) != default}


def parse_rules(value: Any) -> list[Rule]:
    """Configuration to rules. The short form {tool: action} puts "*" first so a tool's own entry
    wins (and within {"bash": {pattern: action}} a pattern's entry beats its "*"); the long form is
    a list of {tool, pattern?, action} in order (the last match wins)."""
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
