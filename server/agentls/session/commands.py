"""Custom commands: `/NAME args` at the start of a prompt.

A command is a Markdown prompt template in `~/.config/agentls/commands/NAME.md` (the user's) or
`<workspace>/.agentls/commands/NAME.md` (the workspace's, read only when the workspace is trusted:
a repository's file must not put words in the user's mouth). The workspace's replaces the user's
of the same name; neither replaces a built-in (`/compact`, `/clear`, `/model`).

A template may open with a front matter (`---` lines around `key: value` lines: description,
model and agent; other keys are ignored). `agent: NAME` runs the command's turn as that agent type
of the `agents` setting (its instructions before the text, its tools, its model unless the command
names one; see turn_setup.py), in the same session and for that turn only; an unknown NAME is a
CommandError.
`$ARGUMENTS` stands for what follows the name (appended when the template does not say it).

Claude Code's commands count too: `~/.claude/commands/**/*.md` (the user's; $CLAUDE_CONFIG_DIR
for ~/.claude when set) and, in a trusted
workspace, `.claude/commands/**/*.md`, in its format (YAML front matter `description`,
`allowed-tools`, `model`, `argument-hint`; `$1`, `$2`, ... for the words after the name). A file
in a subfolder runs by its name and as `/folder:name`. By name, later wins: the user's Claude Code
commands, the user's own, the workspace's Claude Code commands, the workspace's own. A file naming
a tool agentls lacks in `allowed-tools` is listed but refused when run, saying why; otherwise the
calls its `allowed-tools` name run without asking for the command's turn (turn_setup.py). Its
`` !`cmd` `` commands run first, as bash calls of that turn, their output in the prompt
(command_shell.py). In a workspace of several folders each trusted folder's commands count, the
first folder's winning a name (command_dirs).
`@path` attaches that workspace file as prompt context, through the `read` rules: a file outside
the workspace, a secret (.env, keys: they ask) or one the rules deny is refused, and the prompt is
not sent.
"""

from __future__ import annotations

import codecs
import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from agentls.config import AgentType, Settings
from agentls.config_home import claude_home, config_home
from agentls.history import ContextPart, Usage
from agentls.model.base import Provider
from agentls.permission.rules import Rule
from agentls.session.claude_formats import resolve_model
from agentls.session.compaction import Compactor, context_tokens
from agentls.session.hooks import SessionHooks
from agentls.session.images import read_regular
from agentls.session.policy import Policy
from agentls.session.state import SessionState, TurnResult
from agentls.session.subagents import workspace_agent_types
from agentls.store import SessionRecord, Store

NAME = re.compile(r"[a-z0-9_-]+")
# "/name" (or "/folder:name") alone or followed by whitespace; "/usr/bin/x" is not a command.
INVOCATION = re.compile(r"/([a-z0-9_-]+(?::[a-z0-9_-]+)*)(?:\s+(.*))?", re.DOTALL)
# "@path": not inside a word (an e-mail address), up to the first space; trailing punctuation
# ("see @a.py.") is not part of it.
REFERENCE = re.compile(r"(?<![\w@])@([\w./~-]*[\w/-])")
MAX_COMMAND_BYTES = 64_000
MAX_ATTACHED_CHARS = 200_000
FRONT_MATTER_KEYS = ("description", "model", "agent")

Source = Literal["builtin", "user", "workspace", "mcp", "skill"]


class CommandError(ValueError):
    """A command that cannot run (unknown, a refused @path, ...); nothing was sent."""


@dataclass(frozen=True)
class Command:
    name: str
    description: str
    source: Source
    template: str = ""
    model: str | None = None
    agent: str | None = None  # an agent type's name (the `agents` setting)
    # Claude Code's format: `$1`, `$2`, ... stand for the words after the name.
    positional: bool = False
    # Why it cannot run (a Claude Code file naming a tool agentls lacks); None: it can.
    error: str | None = None
    # Claude Code's `allowed-tools` (`Bash(git add:*)`, `Read`): allowed without asking for the
    # turn it runs (turn_setup.command_parts); the file they come from.
    allowed_tools: tuple[str, ...] = ()
    file: Path | None = None


BUILTINS = {
    "compact": Command(
        "compact", "Compact the session now (summarize its older history)", "builtin"
    ),
    "clear": Command("clear", "Start a new session", "builtin"),
    "model": Command("model", "Show the session's model, or use MODEL from now on", "builtin"),
}


class McpPrompts(Protocol):
    """The MCP servers' prompts, offered as `/mcp__<server>__<prompt>` (session/mcp_servers.py)."""

    def commands(self) -> dict[str, Command]: ...

    async def start(self) -> None: ...

    async def prompt(self, name: str, line: str) -> str: ...


class CommandHost(Protocol):
    """What a command uses of the Agent (agent.py; named here so that neither imports the
    other)."""

    store: Store
    root: Path
    policy: Policy
    lock_owner: str

    @property
    def mcp(self) -> McpPrompts: ...

    @property
    def settings(self) -> Settings: ...

    def list_commands(self) -> dict[str, Command]: ...

    def provider(self, model: str) -> Provider: ...

    def emit(self, event: Any) -> None: ...

    async def session(self, session_id: str) -> SessionState: ...

    async def new_session(
        self, title: str | None = None, model: str | None = None
    ) -> SessionRecord: ...

    async def set_model(self, session_id: str, model: str) -> None: ...

    async def _reload(self, state: SessionState) -> None: ...


def command_dirs(
    root: Path, home: Path, trusted: bool, others: Sequence[tuple[Path, bool]] = ()
) -> list[tuple[Source, Path, bool]]:
    """(source, folder, whether in Claude Code's format), a later one's command of a name
    winning; `home` is agentls's config home. `others`: the workspace's other folders, each with
    whether it is trusted (Policy.other_folders): a trusted one's commands count, the last
    folder's lowest, the first's (`root`) highest."""
    dirs: list[tuple[Source, Path, bool]] = [
        ("user", claude_home() / "commands", True),
        ("user", home / "commands", False),
    ]
    for folder, folder_trusted in [*reversed(others), (root, trusted)]:
        if folder_trusted:
            dirs.append(("workspace", folder / ".claude" / "commands", True))
            dirs.append(("workspace", folder / ".agentls" / "commands", False))
    return dirs


def _command_files(directory: Path, nested: bool) -> list[tuple[str, Path]]:
    """(name, file) of a folder's commands; with `nested`, those of its subfolders too, each as
    `folder:name` (`a:b:name` deeper) and by its name unless the folder's own file or an earlier
    subfolder's (in alphabetical order) has it."""
    try:
        files = sorted(directory.rglob("*.md") if nested else directory.glob("*.md"))
    except OSError:
        return []
    found: list[tuple[str, Path]] = []
    plain: set[str] = set()
    for path in sorted(files, key=lambda p: (len(p.parts), p)):
        parts = path.relative_to(directory).with_suffix("").parts
        if parts[-1] not in plain:  # the folder's own file, else the first subfolder's
            plain.add(parts[-1])
            found.append((parts[-1], path))
        if len(parts) > 1:
            found.append((":".join(parts), path))
    return found


def agent_commands(host: CommandHost) -> dict[str, Command]:
    """The commands of an Agent's workspace (all its folders) with its MCP servers' prompts."""
    trusted = host.settings.workspace_trusted
    return load_commands(host.root, config_home(), trusted, host.mcp, host.policy.other_folders)


def load_commands(
    root: Path,
    home: Path,
    trusted: bool,
    mcp: McpPrompts | None = None,
    others: Sequence[tuple[Path, bool]] = (),
) -> dict[str, Command]:
    """Every command by name, sorted: the built-ins, the user's, the workspace's (trusted only;
    its other folders' too: command_dirs), the running MCP servers' prompts
    (`mcp__<server>__<prompt>`), the skills (a command of the same name wins over a skill)."""
    found = dict(BUILTINS) | (mcp.commands() if mcp is not None else {})
    found |= {n: c for n, c in skill_commands(root, trusted).items() if n not in found}
    for source, directory, claude in command_dirs(root, home, trusted, others):
        real_dir = os.path.realpath(directory)
        for name, entry in _command_files(directory, nested=claude):
            if not all(NAME.fullmatch(part) for part in name.split(":")) or name in BUILTINS:
                continue
            # A workspace's link out of its commands directory is not followed (it could name
            # any file); the user's own may be links (dotfiles kept elsewhere).
            if source == "workspace" and not os.path.realpath(entry).startswith(real_dir + os.sep):
                continue
            text = _read_small(entry)
            if text is not None:
                if claude:
                    found[name] = parse_claude_command(name, source, text, entry)
                else:
                    found[name] = parse_command(name, source, text)
    return dict(sorted(found.items()))


def skill_commands(root: Path, trusted: bool) -> dict[str, Command]:
    """Each skill (session/skills.py) as "/NAME args": a turn that loads it with the skill tool,
    then does what the arguments say, as Claude Code runs a skill by its name."""
    from agentls.session.skills import available_skills

    return {
        name: Command(
            name,
            f"Skill: {skill.description}",
            "skill",
            f'Use the skill "{name}" for this: load it with the skill tool first, then follow '
            "it.\n\n$ARGUMENTS",
        )
        for name, skill in available_skills(root, trusted)[0].items()
    }


def parse_claude_command(name: str, source: Source, text: str, file: Path | None = None) -> Command:
    """A command in Claude Code's format (YAML front matter; `$1`...); one naming a tool agentls
    lacks in `allowed-tools`, or with broken YAML, is kept with its error, refused when run."""
    from agentls.session.agent_files import session_tools
    from agentls.session.claude_formats import (
        FormatError,
        entries,
        front_matter,
        model_alias,
        raw_value,
        tools_of,
    )

    try:
        meta, body = front_matter(text)
        allowed = entries(meta.get("allowed-tools"))
        tools_of(allowed, session_tools())
    except FormatError as exc:
        return Command(name, f"(cannot run: {exc})", source, error=str(exc))
    body = body.strip("\n")
    description = " ".join(str(meta.get("description") or _first_line(body)).split())
    hint = " ".join(raw_value(text, "argument-hint").split())
    if hint:
        description = f"{description} (arguments: {hint})"
    model = model_alias(meta.get("model"))
    return Command(
        name,
        description,
        source,
        body,
        model=model,
        positional=True,
        allowed_tools=tuple(allowed),
        file=file,
    )


def _read_small(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_COMMAND_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def parse_command(name: str, source: Source, text: str) -> Command:
    """The template and its front matter (only `key: value` lines of the known keys)."""
    meta: dict[str, str] = {}
    body = text
    lines = text.splitlines(keepends=True)
    if lines and lines[0].strip() == "---":
        for index, line in enumerate(lines[1:], start=1):
            if line.strip() == "---":
                body = "".join(lines[index + 1 :])
                for item in lines[1:index]:
                    key, colon, value = item.partition(":")
                    if colon and key.strip() in FRONT_MATTER_KEYS:
                        meta[key.strip()] = value.strip().strip("'\"")
                break
    body = body.strip("\n")
    description = meta.get("description") or _first_line(body)
    return Command(
        name=name,
        description=description,
        source=source,
        template=body,
        model=meta.get("model") or None,
        agent=meta.get("agent") or None,
    )


def _first_line(body: str) -> str:
    for line in body.splitlines():
        if line.strip():
            return line.strip()[:80]
    return ""


def parse_invocation(text: str) -> tuple[str, str] | None:
    """("name", "args") for a prompt that starts with /name, else None."""
    match = INVOCATION.fullmatch(text.strip())
    if match is None:
        return None
    return match.group(1), (match.group(2) or "").strip()


def fill(template: str, args: str, positional: bool = False, append: bool | None = None) -> str:
    """The template with `$ARGUMENTS` (and, `positional`, `$1`, `$2`, ...: the words of `args`,
    quotes grouping, none past the last) filled; `args` appended when it says neither (or as
    `append` says)."""
    numbered = positional and re.search(r"\$[1-9]", template) is not None
    if numbered:
        try:
            words = shlex.split(args)
        except ValueError:  # an unclosed quote: plain words
            words = args.split()
        template = re.sub(
            r"\$([1-9][0-9]*)",
            lambda m: words[int(m.group(1)) - 1] if int(m.group(1)) <= len(words) else "",
            template,
        )
    if "$ARGUMENTS" in template:
        return template.replace("$ARGUMENTS", args)
    if append is None:
        append = not numbered
    return f"{template}\n\n{args}" if args and append else template


def unknown(name: str, commands: dict[str, Command]) -> CommandError:
    known = ", ".join(f"/{n}" for n in commands)
    return CommandError(f"unknown command /{name}; the commands are: {known}")


def attachments(text: str, root: Path, policy: Policy, state: SessionState) -> list[ContextPart]:
    """The files the prompt's @paths name, read through the `read` rules; CommandError for one
    refused. An @word that names no file is left as it is."""
    rules = policy.rules_with(state.grants)
    parts: list[ContextPart] = []
    seen: set[Path] = set()
    for raw in REFERENCE.findall(text):
        candidate = Path(os.path.expanduser(raw))
        path = Path(os.path.realpath(candidate if candidate.is_absolute() else root / candidate))
        if not os.path.lexists(path) or path.is_dir() or path in seen:
            continue
        if path == root or root not in path.parents:
            raise CommandError(f"@{raw} is outside the workspace ({root}); it is not attached")
        rel = path.relative_to(root).as_posix()
        action = rules.evaluate("read", rel, root=root)
        if action == "deny":
            raise CommandError(f"@{raw}: reading {rel} is denied by the permission rules")
        if action != "allow":
            raise CommandError(
                f"@{raw}: {rel} is not read without asking (a secret, or a rule that asks); "
                "it is not attached. Ask the agent to read it instead."
            )
        try:
            # At most 4 bytes a character: no more is read than can be attached.
            data = read_regular(path, 4 * MAX_ATTACHED_CHARS + 1)
            content = codecs.getincrementaldecoder("utf-8")().decode(data)
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"@{raw}: cannot read {rel} ({exc})") from None
        if len(content) > MAX_ATTACHED_CHARS:
            content = content[:MAX_ATTACHED_CHARS] + "\n... (cut)"
        seen.add(path)
        parts.append(ContextPart(uri=path.as_uri(), text=content))
    return parts


@dataclass
class Expansion:
    """A custom command made into a prompt: its text, the files it attached, its model, the
    agent type its turn runs as."""

    text: str
    context: list[ContextPart]
    model: str | None
    agent: AgentType | None = None
    # What the command's `allowed-tools` allow for its turn (Claude Code's rules translated).
    allowed: list[Rule] = field(default_factory=list)
    # Claude Code's `!` commands, run before the prompt is sent (session/command_shell.py), and
    # the prefix of the markers standing for their outputs in `text`.
    shell: list[str] = field(default_factory=list)
    shell_prefix: str = ""

    @property
    def steers(self) -> bool:
        """Whether it may join a running turn (mode "steer"): not as an agent type, nor with
        commands to run first."""
        return self.agent is None and not self.shell


def expand(
    command: Command,
    args: str,
    root: Path,
    policy: Policy,
    state: SessionState,
    agents: dict[str, AgentType] | None = None,
) -> Expansion:
    """The prompt a custom command sends; `agents`: the agent types by name (agent_types)."""
    kind = None
    if command.agent is not None:
        types = agents or {}
        kind = types.get(command.agent)
        if kind is None:
            raise CommandError(
                f"/{command.name} names the agent {command.agent!r}, which is not an agent type "
                f"of the `agents` setting; the agents are: {', '.join(sorted(types))}"
            )
    if command.error is not None:
        raise CommandError(f"/{command.name} cannot run: {command.error}")
    text, shell, prefix = _filled(command, args)
    if not text.strip():
        raise CommandError(f"/{command.name} is empty")
    context = attachments(text, root, policy, state)  # the command's @paths, not the type's
    # `sonnet`, `opus`, `haiku` (Claude Code's aliases) name a model of the session's family.
    model = command.model or (kind.model if kind is not None else None)
    model = resolve_model(model, state.record.model) if model is not None else None
    allowed = allowed_rules(command)
    if kind is not None and kind.prompt.strip():
        text = f"{kind.prompt.strip()}\n\n{text}"
    return Expansion(text, context, model, kind, allowed, shell, prefix)


def _filled(command: Command, args: str) -> tuple[str, list[str], str]:
    """The command's text with its arguments, and, in Claude Code's format, its `!` commands
    (masked out first: the arguments fill them but never add one) with their markers' prefix."""
    from agentls.session.command_shell import SHELL, mask

    if not command.positional or SHELL.search(command.template) is None:
        return fill(command.template, args, command.positional), [], ""
    masked, shell, prefix = mask(command.template)
    says = re.search(r"\$ARGUMENTS|\$[1-9]", command.template) is not None
    text = fill(masked, args, positional=True, append=not says)
    return text, [fill(c, args, positional=True, append=False) for c in shell], prefix


def allowed_rules(command: Command) -> list[Rule]:
    """The allow rules of a command's `allowed-tools`, translated as `agentls permissions import`
    translates Claude Code's (never wider; an entry it cannot translate allows nothing)."""
    from agentls.claude_permissions import Entry, Translated, translate

    if not command.allowed_tools or command.source not in ("user", "workspace"):
        return []
    where = command.file or Path(command.name)
    rules: list[Rule] = []
    for text in command.allowed_tools:
        result = translate(Entry(where, command.source, "allow", text))
        if isinstance(result, Translated):
            rules += result.rules
    return rules


def result(session_id: str, text: str) -> TurnResult:
    """What a built-in answers: no model turn, its outcome as the text."""
    return TurnResult(session_id, None, "end_turn", text, Usage())


async def run_command(
    agent: CommandHost, session_id: str, name: str, args: str
) -> TurnResult | Expansion:
    """A built-in's outcome, or a custom command as the prompt to send; CommandError when it
    cannot run (KeyError for an unknown session)."""
    commands = agent.list_commands()
    command = commands.get(name)
    if command is None and name.startswith("mcp__"):  # a server's prompt: its server started
        await agent.mcp.start()
        commands = agent.list_commands()
        command = commands.get(name)
    if command is None:
        raise unknown(name, commands)
    if command.source == "mcp":
        return Expansion(await agent.mcp.prompt(name, args), [], None)
    state = await agent.session(session_id)
    if name == "clear":
        record = await agent.new_session(model=state.record.model)
        return result(record.id, f"Started a new session ({record.id}).")
    if name == "model":
        if not args:
            return result(session_id, f"The model is {state.record.model}.")
        if len(args.split()) != 1:
            raise CommandError("/model takes one model id, e.g. /model anthropic/claude-sonnet-4-5")
        await agent.set_model(session_id, args)
        return result(session_id, f"The model is now {args}.")
    if name == "compact":
        return await compact_now(agent, state)
    types = workspace_agent_types(agent.settings, agent.root, agent.policy.other_folders)
    return expand(command, args, agent.root, agent.policy, state, types)


async def compact_now(agent: CommandHost, state: SessionState) -> TurnResult:
    """/compact: summarize all but the newest message now, under the session's locks (a turn
    running meanwhile is waited for)."""
    session_id = state.record.id
    usage = Usage()

    def add_usage(more: Usage) -> Usage:
        nonlocal usage
        usage = usage.add(more)
        return usage

    async with state.lock:
        last = await agent.store.lock_session(session_id, agent.lock_owner)
        try:
            if last != (state.messages[-1].id if state.messages else None):
                await agent._reload(state)  # another process ran a turn since it was loaded
            model = state.record.model
            settings = agent.settings.model_copy(update={"compact_keep_recent_tokens": 0})
            compactor = Compactor(
                state=state,
                model=model,
                provider=agent.provider(model),
                store=agent.store,
                policy=Policy(settings, str(agent.root)),
                emit=agent.emit,
                add_usage=add_usage,
            )
            await SessionHooks(
                agent.policy, agent.root, state, agent.store, agent.emit
            ).pre_compact("manual")
            done = await compactor.compact(context_tokens(state.messages) or 0)
            if done:  # the history a revert could redo into is summarized now
                await agent.store.clear_revert(session_id)
        finally:
            await agent.store.unlock_session(session_id, agent.lock_owner)
    if done:
        return result(session_id, "Compacted: the session now starts from a summary.")
    if compactor.failed:
        return TurnResult(session_id, None, "error", "", usage, "the compaction failed")
    return result(session_id, "Nothing to compact yet.")
