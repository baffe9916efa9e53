"""A bash command line against the rules: every command it can run (bash.analyze) judged by the last
matching rule, every file it writes by the `write` rules of that path; the strictest answer wins.
What the analysis cannot be sure of asks, or denies when some deny rule could match."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentls.permission.bash import BashAnalysis, Command, analyze, normalise_line
from agentls.permission.types import Action, Decision, Rule

# The write rules' answer for a path a command writes: (subject, outside the workspace?).
WriteAction = Callable[[str, bool], Decision]

_SEVERITY = {"allow": 0, "ask": 1, "deny": 2}
# Where a command named by its path is still the program the rules name: `/usr/bin/ls` is ls,
# `./ls` (a file of the workspace) is not, so an allow rule does not cover it.
SYSTEM_DIRS = frozenset(
    {"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"}
)


@dataclass
class BashDecision:
    action: Decision
    reasons: list[str] = field(default_factory=list)  # why it asks or denies, for a person
    analysis: BashAnalysis | None = None
    sandboxed: bool = False  # a "sandboxed" rule allowed it (and the call runs in the sandbox)


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _words(pattern: str) -> tuple[list[str], str | None]:
    """A prefix rule as whole words plus, for `git st*`, a partial last word (None: none)."""
    if pattern.endswith("*"):
        body = pattern[:-1]
        words = body.split()
        if body and not body[-1].isspace() and words:
            return words[:-1], words[-1]
        return words, ""
    return pattern.split(), None


def command_matches(pattern: str, command: Command, *, strict: bool) -> bool:
    """Whether a bash prefix rule names this command: `git status` matches `git status` and
    `git status ...`; a trailing `*` is a plain prefix (`npm *`, `git st*`). Strict (for allow):
    word by word, and a command named by a path outside the system directories never matches.
    Otherwise (deny, ask) the joined text's prefix matches too."""
    pattern = pattern.strip()
    words, partial = _words(pattern)
    argv = command.argv
    by_words = list(argv[: len(words)]) == words and (
        partial is None
        or (partial == "" and len(argv) >= len(words))
        or (len(argv) > len(words) and argv[len(words)].startswith(partial))
    )
    if not words and partial == "":
        by_words = True
    if strict:
        if command.path is not None and os.path.dirname(command.path) not in SYSTEM_DIRS:
            return False
        return by_words and command.literal
    if by_words:
        return True
    text = command.text
    if pattern.endswith("*"):
        return text.startswith(pattern[:-1])
    return text == pattern or text.startswith(pattern + " ")


def _rule_matches(rule: Rule, command: Command, exact_line: bool) -> bool:
    if rule.pattern is None:
        return True
    if rule.exact:
        return exact_line
    return command_matches(rule.pattern, command, strict=rule.action in ("allow", "sandboxed"))


def _command_action(rules: Sequence[Rule], command: Command, exact_line: str) -> Action:
    action: Action = "ask"
    for rule in rules:
        if _rule_matches(rule, command, rule.exact and rule.pattern == exact_line):
            action = rule.action
    return action


def decide_bash(
    rules: Sequence[Rule],
    line: str,
    *,
    root: Path | None,
    write_action: WriteAction,
    sandboxed: bool = False,
) -> BashDecision:
    """The line judged by the bash rules among `rules` (every command it runs, the last matching
    rule each), and each file it writes by `write_action` (the write rules); the strictest wins."""
    analysis = analyze(line)
    bash_rules = [r for r in rules if r.tool in ("bash", "*")]
    exact_line = normalise_line(line)
    overall = "allow"
    reasons: list[str] = []
    by_sandbox = False

    def worse(action: str, reason: str) -> None:
        nonlocal overall
        if _SEVERITY[action] > 0:
            reasons.append(reason)
        if _SEVERITY[action] > _SEVERITY[overall]:
            overall = action

    seen: set[Command] = set()
    for command in analysis.commands:
        if command in seen or not command.literal:
            continue
        seen.add(command)
        action = _command_action(bash_rules, command, exact_line)
        if action == "sandboxed":
            if sandboxed:
                by_sandbox = True
                continue
            worse("ask", f"`{_short(command.text)}` may run only in the sandbox, which is off")
        elif action == "deny":
            worse("deny", f"a rule forbids `{_short(command.text)}`")
        elif action == "ask":
            worse("ask", f"no rule allows `{_short(command.text)}`")

    unknown = [*analysis.problems]
    unknown += [
        f"the command `{_short(c.text)}` is not a plain name"
        for c in analysis.commands
        if not c.literal
    ]
    if unknown:
        strict = "deny" if any(r.action == "deny" for r in bash_rules) else "ask"
        for problem in dict.fromkeys(unknown):
            worse(strict, problem)

    for target in analysis.writes:
        _judge_write(write_action, target, root, sandboxed and by_sandbox, worse)

    return BashDecision(
        action=overall,  # type: ignore[arg-type]
        reasons=list(dict.fromkeys(reasons)),
        analysis=analysis,
        sandboxed=by_sandbox and overall == "allow",
    )


def resolve_write(target: str, root: Path | None) -> tuple[str, bool] | None:
    """A redirection target as a write subject: (path relative to root inside it, absolute
    outside; outside?). Symlinks are followed. None when it cannot be resolved (no root)."""
    if not target.startswith("/") and root is None:
        return None
    base = os.path.realpath(root) if root is not None else "/"
    resolved = os.path.realpath(os.path.join(base, target))
    if root is not None and (resolved == base or resolved.startswith(base.rstrip("/") + "/")):
        rel = os.path.relpath(resolved, base)
        return Path(rel).as_posix(), False
    return resolved, True


def _judge_write(
    write_action: WriteAction,
    target: str | None,
    root: Path | None,
    sandbox: bool,
    worse: Callable[[str, str], None],
) -> None:
    if target is None:
        worse("ask", "it writes to a file whose name bash computes")
        return
    resolved = resolve_write(target, root)
    if resolved is None:
        worse("ask", f"it writes {_short(target)}, which cannot be placed without a workspace root")
        return
    subject, outside = resolved
    action = write_action(subject, outside)
    if action == "allow":
        return
    if action == "ask" and sandbox and not outside:
        return  # the sandbox lets it write inside the workspace
    where = " (outside the workspace)" if outside else ""
    if action == "deny":
        worse("deny", f"it writes {_short(subject)}{where}, which the write rules forbid")
    else:
        worse("ask", f"it writes {_short(subject)}{where}, which no rule allows")
