"""Permission rules: (tool or "*", optional pattern) -> allow | ask | deny (| sandboxed for bash).

The last matching rule wins, in the order the rules are listed: defaults, then configuration, then
the session's "always" grants. Secret globs only ever make a file stricter (see _decide)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agentls.permission.protected import (
    PROTECTED_NAMES,
    SANDBOXED_GIT_EXACT,
    SANDBOXED_GIT_READS,
)
from agentls.permission.types import Action as Action
from agentls.permission.types import Decision as Decision
from agentls.permission.types import Rule as Rule

if TYPE_CHECKING:
    from agentls.permission.bash_decision import BashDecision

FILE_TOOLS = frozenset({"read", "write", "edit", "glob", "grep", "list"})
READ_TOOLS = ("read", "glob", "grep", "list")


class SecretRule(Rule):
    """A secret glob's "ask": it makes a matching file stricter, never looser, and only when the
    deciding rule has no pattern (a rule whose pattern names the file opens it). It never opens a
    path outside the workspace, which stays refused (e.g. ~/.ssh/id_rsa). Matched without regard
    to case; `exclude` (a glob) names paths it leaves alone (an SSH key's `.pub`)."""

    exclude: str | None = None


SEVERITY: dict[str, int] = {"allow": 0, "sandboxed": 0, "ask": 1, "deny": 2}


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
)


# A path glob as tokens: ("c", ch) a plain character, ("?",) one character but "/", and the star
# runs "*" ([^/]*), "**" (.*) and "**/" ((?:.*/)?), read left to right exactly as the
# translation always has ("***/" is "**" then "*/").
_Token = tuple[str, str]
_S1, _SA, _SD = "*", "**", "**/"
_STARS = frozenset({_S1, _SA, _SD})


@lru_cache(maxsize=512)
def _glob_tokens(pattern: str) -> tuple[_Token, ...]:
    out: list[_Token] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            tok, i = (_SD, ""), i + 3
        elif pattern.startswith("**", i):
            tok, i = (_SA, ""), i + 2
        elif pattern[i] == "*":
            tok, i = (_S1, ""), i + 1
        elif pattern[i] == "?":
            tok, i = ("?", ""), i + 1
        else:
            tok, i = ("c", pattern[i]), i + 1
        if out and tok[0] in _STARS and out[-1][0] in _STARS:
            # Adjacent stars as one (same strings): with "**" it is "**"; "**/" twice is "**/";
            # "**/" then "*" is "**" (a prefix up to the last "/", then the rest).
            merged = _merge_stars(out[-1][0], tok[0])
            if merged is not None:
                out[-1] = (merged, "")
                continue
        out.append(tok)
    return tuple(out)


def _merge_stars(a: str, b: str) -> str | None:
    if _SA in (a, b) or (a == _SD and b == _S1):
        return _SA
    if a == b == _SD:
        return _SD
    return None  # "*" then "**/" (the reading above never makes it): kept apart


_STAR_REGEX = {_S1: "[^/]*", _SA: ".*", _SD: "(?:.*/)?"}
_LAZY_STAR_REGEX = {_S1: "[^/]*?", _SA: ".*?", _SD: "(?:.*?/)??"}


def _glob_parts(tokens: Sequence[_Token]) -> tuple[str, list[tuple[str, str]]]:
    """The fixed head (before the first star) and each star with the fixed chunk after it (both as
    regex text)."""
    head: list[str] = []
    parts: list[tuple[str, list[str]]] = []
    for kind, ch in tokens:
        if kind in _STARS:
            parts.append((kind, []))
            continue
        piece = "[^/]" if kind == "?" else re.escape(ch)
        (parts[-1][1] if parts else head).append(piece)
    return "".join(head), [(star, "".join(chunk)) for star, chunk in parts]


def _first_chunk_safe(star: str, following: str) -> bool:
    """Whether the first place a star's chunk can match is as good as any later one, given the star
    after that chunk: "**" takes up whatever is skipped; "*" after "*" too (the skipped stretch has
    no "/", or the chunk holds a "/" and has only one place)."""
    return following == _SA or (star == _S1 and following == _S1)


def _linear_body(tokens: Sequence[_Token], exact: bool) -> str | None:
    """The regex (before the end anchor) in fnmatch's linear form: every star but the last takes
    its chunk's first match atomically, the last star's chunk is anchored by the end. None when a
    first match could be the wrong one and `exact` is asked; otherwise (not exact) a superset:
    every star as "**"."""
    head, parts = _glob_parts(tokens)
    stars = [s for s, _ in parts]
    if not exact:
        stars = [_SA] * len(stars)
    out = [head]
    # A first "**/" followed only by "*"s may stay as it is: it can only stop after a "/", and the
    # rest, from there, keeps to the few directories its chunks' "/"s name ("**/.env*").
    plain_first = exact and stars[:1] == [_SD] and all(s == _S1 for s in stars[1:])
    for k, (_, chunk) in enumerate(parts):
        star = stars[k]
        if k == len(parts) - 1 or (k == 0 and plain_first):
            out.append(_STAR_REGEX[star] + chunk)
        elif not chunk or not _first_chunk_safe(star, stars[k + 1]):
            return None
        else:
            out.append(f"(?>{_LAZY_STAR_REGEX[star]}{chunk})")
    return "".join(out)


@lru_cache(maxsize=512)
def _glob_body(pattern: str) -> str:
    """A path glob as a regex (without the end anchor) that matches in linear time: `**` crosses
    directories, `*` and `?` do not; a bare directory covers its tree. Exact when _glob_regex can
    use it (see _linear_body); otherwise a superset (every star as `**`), for PathFilter's test."""
    if not any(ch in pattern for ch in "*?"):
        # "src" or "/opt/data": the path itself and everything under it.
        return re.escape(pattern) + "(?:/.*)?"
    tokens = _glob_tokens(pattern)
    body = _linear_body(tokens, exact=True)
    if body is None:
        body = _linear_body(tokens, exact=False)
    assert body is not None
    return body


class _Matcher(Protocol):
    def match(self, subject: str, /) -> object | None: ...


class _GlobAutomaton:
    """A path glob matched by simulating its automaton (a set of states as an int's bits): linear in
    the path's length, for the globs whose regex would need to backtrack (see _linear_body)."""

    def __init__(self, tokens: Sequence[_Token], ignore_case: bool) -> None:
        # State s consumes one character: `advance` (a character test) to s + 1, `loop` stays; a
        # star's state also moves on without a character (`skip`).
        self._advance: list[Callable[[str], bool] | None] = []
        self._loop: list[Callable[[str], bool] | None] = []
        skips: dict[int, int] = {}
        flags = re.IGNORECASE if ignore_case else 0

        def add(advance: Callable[[str], bool] | None, loop: Callable[[str], bool] | None) -> int:
            self._advance.append(advance)
            self._loop.append(loop)
            return len(self._advance) - 1

        def not_slash(c: str) -> bool:
            return c != "/"

        def anything(_c: str) -> bool:
            return True

        def slash(c: str) -> bool:
            return c == "/"

        for kind, ch in tokens:
            if kind == "c":
                add(re.compile(re.escape(ch), flags | re.DOTALL).fullmatch, None)  # type: ignore[arg-type]
            elif kind == "?":
                add(not_slash, None)
            elif kind == _S1 or kind == _SA:
                s = add(None, not_slash if kind == _S1 else anything)
                skips[s] = 1 << (s + 1)
            else:  # "**/": nothing, or anything then "/"
                s = add(None, None)
                add(slash, anything)
                skips[s] = (1 << (s + 1)) | (1 << (s + 2))
        self._final = 1 << len(self._advance)
        self._skips = sorted(skips.items())
        self._steps: dict[str, tuple[int, int]] = {}

    def _closure(self, states: int) -> int:
        for s, targets in self._skips:  # skips only lead forward: one pass in order
            if states >> s & 1:
                states |= targets
        return states

    def _step(self, c: str) -> tuple[int, int]:
        step = self._steps.get(c)
        if step is None:
            advance = sum(1 << s for s, f in enumerate(self._advance) if f is not None and f(c))
            loop = sum(1 << s for s, f in enumerate(self._loop) if f is not None and f(c))
            step = (advance, loop)
            if len(self._steps) < 4096:
                self._steps[c] = step
        return step

    def match(self, subject: str, /) -> bool | None:
        states = self._closure(1)
        for c in subject:
            advance, loop = self._step(c)
            states = self._closure(((states & advance) << 1) | (states & loop))
            if not states:
                return None
        return True if states & self._final else None


@lru_cache(maxsize=512)
def _glob_regex(pattern: str, ignore_case: bool = False) -> _Matcher:
    """A path glob's exact matcher, linear in the path's length: its regex (_glob_body) when that
    is exact, else its automaton."""
    flags = re.DOTALL | (re.IGNORECASE if ignore_case else 0)
    if not any(ch in pattern for ch in "*?"):
        return re.compile(_glob_body(pattern) + r"\Z", flags)
    tokens = _glob_tokens(pattern)
    body = _linear_body(tokens, exact=True)
    if body is None:
        return _GlobAutomaton(tokens, ignore_case)
    return re.compile(body + r"\Z", flags)


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


def rule_matches_path(rule: Rule, subject: str) -> bool:
    """Whether a rule's pattern (not None) matches a path subject."""
    assert rule.pattern is not None
    if rule.exact:
        return subject == rule.pattern
    if isinstance(rule, SecretRule):
        if _glob_regex(_rule_pattern(rule.pattern), True).match(subject) is None:
            return False
        return rule.exclude is None or not _glob_regex(rule.exclude, True).match(subject)
    return path_matches(rule.pattern, subject)


def _rule_body(rule: Rule) -> str:
    """A regex matching (at least) every subject the rule's pattern matches."""
    assert rule.pattern is not None
    if rule.exact:
        return re.escape(rule.pattern)
    body = _glob_body(_rule_pattern(rule.pattern))
    return f"(?i:{body})" if isinstance(rule, SecretRule) else body


def _rule_runs(rule: Rule) -> list[str]:
    assert rule.pattern is not None
    if rule.exact:
        return [rule.pattern] if rule.pattern else []
    return _literal_runs(_rule_pattern(rule.pattern))


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
        return _decide(
            self.rules, tool, outside_workspace, lambda rule: rule_matches_path(rule, subject)
        )

    def decide_bash(
        self, command: str, *, root: Path | None, sandboxed: bool = False
    ) -> BashDecision:
        """Every command the line can run judged on its own (last matching rule), its redirections
        as writes; the strictest answer wins. Unknowns ask, or deny where a deny rule could match."""
        # Imported here: the bash parser (tree-sitter) loads only once a bash call is judged.
        from agentls.permission.bash_decision import decide_bash

        def write_action(subject: str, outside: bool) -> Decision:
            return self.evaluate("write", subject, outside_workspace=outside)

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
        if rule.tool != tool and rule.tool != "*":
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
        self._rules = [r for r in rules if r.tool == tool or r.tool == "*"]
        self._tool = tool
        self._outside = outside_workspace
        self.prefix = prefix
        self.default = _decide(self._rules, tool, outside_workspace, lambda _r: False) == "allow"
        patterned = [r for r in self._rules if r.pattern is not None]
        # A superset test (matches some pattern) before the rules are walked for a path.
        self._any: re.Pattern[str] | None = None
        if patterned:
            bodies = sorted({_rule_body(r) for r in patterned})
            # Each body matches in linear time (atomic groups, see _glob_body), so does the union.
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
