"""A bash command line against the rules: every command it can run (bash.analyze) judged by the last
matching rule, every file it writes by the `write` rules of that path; the strictest answer wins.
What the analysis cannot be sure of asks, or denies when some deny rule could match."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentls.permission.bash import (
    BashAnalysis,
    Command,
    analyze,
    argument_names,
    normalise_line,
)
from agentls.permission.protected import (
    SANDBOXED_GIT_EXACT,
    SANDBOXED_GIT_READS,
    is_protected_path,
)
from agentls.permission.types import SEVERITY, Action, Decision, Rule

# The write rules' answer for a path a command writes: (subject, outside the workspace?).
WriteAction = Callable[[str, bool], Decision]

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
        if (words or partial) and risky_option(command) is not None:
            return False  # `git log --output=f`, `rg --pre bash`: more than the rule names
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


def _denied_argument(rules: Sequence[Rule], command: Command) -> str | None:
    """The pattern of a deny rule whose words appear in a row among the command's argument words
    (a program the analysis does not know may run them); None when none does."""
    names: list[str] | None = None
    for rule in rules:
        if rule.action != "deny" or rule.pattern is None or rule.exact:
            continue
        words, partial = _words(rule.pattern.strip())
        if not words:
            continue
        if names is None:
            names = argument_names(command)
        for k in range(len(names) - len(words) + 1):
            if names[k : k + len(words)] != words:
                continue
            after = names[k + len(words)] if k + len(words) < len(names) else None
            if (
                partial is None
                or partial == ""
                or (after is not None and after.startswith(partial))
            ):
                return rule.pattern
    return None


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
        if SEVERITY[action] > 0:
            reasons.append(reason)
        if SEVERITY[action] > SEVERITY[overall]:
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
            risk = risky_option(command)
            text = _short(command.text)
            worse("ask", f"{risk} in `{text}`" if risk else f"no rule allows `{text}`")

    for command in analysis.commands:  # with a deny rule, a denied name as an argument denies
        named = _denied_argument(bash_rules, command)
        if named is not None:
            worse("deny", f"`{_short(command.text)}` names `{named}`, which a rule forbids")

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


def changes_protected(line: str, root: Path | None) -> bool:
    """Whether the line changes what the sandbox keeps read-only (rules.PROTECTED_NAMES: `.git`,
    `.agentls`, ...): a git command that writes the repository, or a write to a protected path.
    Such a line cannot work inside the sandbox, so it runs outside it, after its question (which
    says so): its rules are judged as for any command outside the sandbox."""
    analysis = analyze(line)
    for command in analysis.commands:
        if command.name != "git":
            continue
        reads = len(command.argv) >= 2 and f"git {command.argv[1]}" in SANDBOXED_GIT_READS
        if not reads and command.text not in SANDBOXED_GIT_EXACT:
            return True
    for target in analysis.writes:
        resolved = resolve_write(target, root) if target is not None else None
        if resolved is not None and not resolved[1] and is_protected_path(resolved[0], root):
            return True
    return False


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
    if action == "ask" and not outside and is_protected_path(subject, root):
        # Sandboxed or not: a change there can run programs or widen permissions later.
        worse("ask", f"it writes {_short(subject)}, a protected path (git, editor or agent config)")
        return
    if action == "ask" and sandbox and not outside:
        return  # the sandbox lets it write inside the workspace
    where = " (outside the workspace)" if outside else ""
    if action == "deny":
        worse("deny", f"it writes {_short(subject)}{where}, which the write rules forbid")
    else:
        worse("ask", f"it writes {_short(subject)}{where}, which no rule allows")


# ---- options that run a program or write a file ---------------------------------------------
# A prefix allow rule (`git log`, `rg`) names a program, not what its options make it do: a command
# using one of these options asks even under such a rule (deny rules are unaffected; an exact-line
# rule or grant, which showed the options, still allows). Long options match as `--name`,
# `--name=...` and any unambiguous abbreviation `--na` (getopt and git accept those); short options
# match anywhere in a bundle (`-nO'cmd'`), so a value that looks like a bundle may ask too.


@dataclass(frozen=True)
class RiskyOptions:
    long: frozenset[str] = frozenset()
    short: str = ""
    words: frozenset[str] = frozenset()  # arguments (not options) that run something
    value_short: str = ""  # short options whose value follows in the same word (`-XPOST`)
    single_dash_long: bool = False  # `-exec` is a long option (go)


def _risky(
    long: str = "", short: str = "", words: str = "", value: str = "", single: bool = False
) -> RiskyOptions:
    return RiskyOptions(frozenset(long.split()), short, frozenset(words.split()), value, single)


# Per program, options anywhere after the name.
RISKY_OPTIONS: dict[str, RiskyOptions] = {
    "git": _risky(
        "output output-directory open-files-in-pager ext-diff exec upload-pack receive-pack"
        " textconv template config config-env exec-path git-dir extcmd tool"
    ),
    "rg": _risky("pre pre-glob hostname-bin"),
    "find": _risky(words="-delete -fprint -fprint0 -fprintf -fls"),
    "sort": _risky("output compress-program", "o"),
    "sed": _risky("in-place file", "if"),
    "awk": _risky("file exec include load in-place", "fEil", value="Fv"),
    "gawk": _risky("file exec include load in-place", "fEil", value="Fv"),
    "mawk": _risky("file exec", "fE", value="Fv"),
    "nawk": _risky("file", "f", value="Fv"),
    "tar": _risky(
        "to-command use-compress-program checkpoint-action info-script new-volume-script"
        " rsh-command rmt-command",
        "IF",
    ),
    "zip": _risky("unzip-command", "TT"),
    "curl": _risky(
        "output remote-name remote-name-all output-dir dump-header cookie-jar trace"
        " trace-ascii libcurl config etag-save hsts alt-svc stderr",
        "oODcK",
        value="HXduAebEFmrTwxyzYCQU",
    ),
    "wget": _risky(
        "output-document output-file append-output directory-prefix execute config use-askpass",
        "OoaPe",
    ),
    "man": _risky("pager html", "PH"),
    "less": _risky("log-file LOG-FILE", "oO"),
    "go": _risky("exec toolexec", single=True),
    "cargo": _risky("config"),
    "npm": _risky("script-shell"),
    "pnpm": _risky("script-shell"),
    "yarn": _risky("script-shell"),
}
# Git's global options before the subcommand (`git -c core.pager=... log`).
_GIT_GLOBAL_SHORT = "c"
# Git's short options by subcommand (elsewhere the same letters are harmless: `git log -u`).
_GIT_SHORT = {
    "grep": "O",
    "format-patch": "o",
    "archive": "o",
    "fetch": "u",
    "pull": "u",
    "clone": "uc",
    "ls-remote": "u",
    "rebase": "x",
    "difftool": "xt",
    "bisect": "",
    "submodule": "",
}
_GIT_WORDS = {"bisect": frozenset({"run"}), "submodule": frozenset({"foreach"})}
# gawk's @include and @load run another file's program (a repository's) or a shared library.
_AWK_CODE = re.compile(r"system\s*\(|[|>]|\bgetline\b|@\s*(?:include|load)\b")
_AWK_VALUE_OPTIONS = frozenset({"-F", "-v", "--field-separator", "--assign"})


def _long_hits(word: str, names: frozenset[str]) -> str | None:
    name = word[2:].split("=", 1)[0]
    if not name:
        return None
    for risky in names:
        if risky == name or (len(name) >= 3 and risky.startswith(name)):
            return "--" + risky
    return None


def _option_hit(word: str, options: RiskyOptions, short: str) -> str | None:
    if word in options.words:
        return word
    if word.startswith("--"):
        return _long_hits(word, options.long)
    if options.single_dash_long and word.startswith("-"):
        return _long_hits("-" + word, options.long)
    if word.startswith("-") and len(word) > 1:
        for letter in word[1:]:
            if letter in short:
                return "-" + letter
            if letter in options.value_short:
                break
    return None


def _sed_script_runs(script: str) -> bool:
    """Whether a sed script may run a command or write a file (`e`, `w`, `W`, `s///e`, `s///w`);
    True when it cannot be read."""
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;{}!":
            i += 1
            continue
        # addresses: numbers, $, /re/, \cREc, ranges, steps
        if c.isdigit() or c in "$,~+":
            i += 1
            continue
        if c == "/" or c == "\\":
            delim = "/" if c == "/" else (script[i + 1] if i + 1 < n else "")
            i += 1 if c == "/" else 2
            while i < n and script[i] != delim:
                i += 2 if script[i] == "\\" else 1
            i += 1
            while i < n and script[i] in "IM":
                i += 1
            continue
        if c in "ewW":  # run a command, write a file
            return True
        if c in "rR":  # read a file named to the end of the line
            while i < n and script[i] != "\n":
                i += 1
            continue
        if c in "aic":  # text to the end of the line
            while i < n and script[i] != "\n":
                i += 1
            continue
        if c in "bt:T":  # a label to the end of the command
            while i < n and script[i] not in ";\n":
                i += 1
            continue
        if c in "sy":
            if i + 1 >= n:
                return True
            delim = script[i + 1]
            i += 2
            for _ in range(2):
                while i < n and script[i] != delim:
                    i += 2 if script[i] == "\\" else 1
                i += 1
            if c == "y":
                continue
            while i < n and script[i] not in ";\n}":
                if script[i] in "ewW":
                    return True
                i += 1
            continue
        if c in "=dDgGhHlLnNpPqQxzvF#":
            if c == "#":
                while i < n and script[i] != "\n":
                    i += 1
            elif c in "qQlL":
                i += 1
                while i < n and script[i].isdigit():
                    i += 1
                continue
            i += 1
            continue
        return True  # not a command this reader knows
    return False


def _sed_risk(argv: tuple[str, ...]) -> str | None:
    scripts: list[str] = []
    positional: list[str] = []
    i = 1
    while i < len(argv):
        word = argv[i]
        if word in ("-e", "--expression") and i + 1 < len(argv):
            scripts.append(argv[i + 1])
            i += 2
            continue
        if word.startswith("--expression="):
            scripts.append(word.split("=", 1)[1])
        elif word.startswith("-e") and not word.startswith("--"):
            scripts.append(word[2:])
        elif word == "--":
            positional += argv[i + 1 :]
            break
        elif not word.startswith("-") or word == "-":
            positional.append(word)
        i += 1
    if not scripts and positional:
        scripts.append(positional[0])
    if any(_sed_script_runs(s) for s in scripts):
        return "a sed script that runs a command or writes a file (`e`, `w`)"
    return None


def _awk_risk(argv: tuple[str, ...]) -> str | None:
    skip = False
    for word in argv[1:]:
        if skip:
            skip = False
            continue
        if word in _AWK_VALUE_OPTIONS:
            skip = True
            continue
        if word.startswith(("-F", "-v", "--field-separator=", "--assign=")):
            continue
        if _AWK_CODE.search(word):
            return (
                "an awk program that runs a command or writes a file (`system(`, `|`, `>`, "
                "`@include`, `@load`)"
            )
    return None


def _git_risk(argv: tuple[str, ...]) -> str | None:
    i = 1
    while i < len(argv) and argv[i].startswith("-"):  # global options, before the subcommand
        word = argv[i]
        if word == "-c" or (word.startswith("-c") and not word.startswith("--")):
            return f"`{_short(word, 30)}` sets git configuration, which can run programs"
        hit = _long_hits(word, RISKY_OPTIONS["git"].long) if word.startswith("--") else None
        if hit:
            return f"`{hit}` (git) can run a program or write a file"
        i += 2 if word == "-C" else 1
    sub = argv[i] if i < len(argv) else ""
    short = _GIT_SHORT.get(sub, "")
    options = RiskyOptions(RISKY_OPTIONS["git"].long, short, _GIT_WORDS.get(sub, frozenset()))
    for word in argv[i + 1 :]:
        if word == "--":
            break
        hit = _option_hit(word, options, short)
        if hit:
            return f"`{hit}` (git {sub}) can run a program or write a file"
    return None


# Options whose value is usually a quoted glob (`find -name '*.py'`, `rg -g '*.py'`): not asked
# about, though an unquoted glob there expanding to several names could still yield an option.
_GLOB_VALUES = frozenset(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname"
    " -g --glob --iglob -e --regexp -t -T --type --type-not --include --exclude".split()
)


def _computed_argument(word: str) -> bool:
    """An argument that is an expansion (`$x`, a substitution, a glob) bash may turn into an
    option; Command keeps such words' source text, so a quoted `'$x'` asks too."""
    if word.startswith("{"):  # a brace expansion has no blank (else it was quoted: awk code)
        return ("," in word or ".." in word) and not any(c.isspace() for c in word)
    return word[:1] in ("$", "`", "*", "?", "[") or word.startswith(('"$', '"`'))


def risky_option(command: Command) -> str | None:
    """Why this command asks even under a prefix allow rule: an option (or a script) that makes
    the program run another program or write a file; None when it has none."""
    argv = command.argv
    name = command.name
    if name not in RISKY_OPTIONS:
        return None
    if name == "git":
        found = _git_risk(argv)
    else:
        options = RISKY_OPTIONS[name]
        found = None
        for word in argv[1:]:
            if word == "--":
                break
            hit = _option_hit(word, options, options.short)
            if hit:
                found = f"`{hit}` ({name}) can run a program or write a file"
                break
        if found is None and name == "sed":
            found = _sed_risk(argv)
        if found is None and name in ("awk", "gawk", "mawk", "nawk"):
            found = _awk_risk(argv)
        if found is None and name == "tar" and len(argv) > 1 and not argv[1].startswith("-"):
            if any(c in argv[1] for c in "IF"):  # `tar xIf prog a.tar`: old-style bundle
                found = f"`{argv[1]}` (tar) can run a program"
    words = argv[1 : argv.index("--")] if "--" in argv else argv[1:]
    computed = (
        w for before, w in zip(("",) + words, words, strict=False) if before not in _GLOB_VALUES
    )
    if found is None and any(_computed_argument(w) for w in computed):
        found = f"an argument of `{name}` is computed by bash and could be such an option"
    return found
