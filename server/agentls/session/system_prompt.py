"""The system prompt, generated in one place for every kind of agent: the main agent of each front
end (the editor through `serve`, the terminal through `agentls run`, an ACP editor), a sub-agent
(the task tool's), and a custom command run as an agent type.

Every line that names a tool is there only when the request offers that tool (session/offer.py
decides which): a model is never told to use what it does not have. The text depends only on its
inputs, so it stays byte for byte the same from step to step (the prompt cache). docs/model-facing.md
says what each part is for; tests/prompts/ holds the generated prompts as reviewed snapshots.
"""

from __future__ import annotations

import platform
from collections.abc import Collection
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Literal

FrontEnd = Literal["editor", "terminal", "acp"]
AgentKind = Literal["main", "subagent", "command"]

# The tools that answer from language servers (tools/symbols.py, definition.py, references.py,
# hover.py, callers.py, rename.py, outline.py, type_definition.py, implementation.py, callees.py).
LANGUAGE_TOOLS = (
    "outline",
    "symbols",
    "definition",
    "type_definition",
    "implementation",
    "references",
    "hover",
    "callers",
    "callees",
    "rename",
    "code_actions",
    "apply_code_action",
)
# A tool that changes files or runs commands: with one of these, the safety lines are sent.
CHANGING_TOOLS = ("edit", "write", "bash", "rename", "apply_code_action")


@dataclass(frozen=True)
class PromptKind:
    """Whom a prompt is for: the front end the session runs in, and the kind of agent (with its
    agent type's name and description for a sub-agent or a command's agent type)."""

    front_end: FrontEnd = "terminal"
    kind: AgentKind = "main"
    agent: str | None = None
    description: str = ""
    # Whether someone can answer a question (False: `agentls run` without a terminal), so that
    # ask_user is offered only where it can be answered.
    attended: bool = True


@dataclass(frozen=True)
class Surroundings:
    """What the prompt says of this request's circumstances (session/offer.py builds it).

    `languages`: who answers the language tools ("the editor's language servers", "pyright
    (.py), from languageServers"); None when nothing does (the language tools are not offered).
    `verify_commands`: whether `verifyCommands` are configured (they run after an edit).
    `skills`: the skills' names and descriptions (session/skills.py), when the skill tool is
    offered."""

    tools: frozenset[str]
    languages: str | None = None
    verify_commands: bool = False
    skills: str | None = None


INTRO: dict[FrontEnd, str] = {
    "editor": (
        "You are agentls, a coding agent working inside the user's editor. You help with software "
        "engineering tasks in the workspace below, using the tools you are given. Your messages "
        "appear in the editor's agent panel."
    ),
    "terminal": (
        "You are agentls, a coding agent the user runs from a terminal (`agentls run`). You help "
        "with software engineering tasks in the workspace below, using the tools you are given. "
        "Your final message is printed for the user."
    ),
    "acp": (
        "You are agentls, a coding agent working inside the user's editor, which talks to you "
        "through the Agent Client Protocol. You help with software engineering tasks in the "
        "workspace below, using the tools you are given. Your messages appear in its agent panel."
    ),
}
# Where edits land, said only to an agent that can edit.
EDITS: dict[FrontEnd, str] = {
    "editor": "Your edits apply to the editor's buffers, where the user sees them.",
    "terminal": "Your edits are written to the files on disk.",
    "acp": "Your edits go through the editor.",
}

SAFETY = """Safety and scope:
- Do what was asked, no more: no unrequested refactors, features, dependencies or config changes. When the request is unclear, ask.
- Commit, push, tag or open pull requests only when the user asks. Never rewrite history (amend, rebase, reset of commits) or force-push unless the user explicitly asks for exactly that, and never skip hooks (--no-verify).
- Commands that destroy work or data (rm -rf, git clean, git reset --hard, git checkout or restore over uncommitted changes, dropping a database, killing processes you did not start) need the user's explicit request.
- When the sandbox or a permission rule blocks something, do not work around it with another command, a script or another path: say what was blocked and why you need it, and ask the user.
- Never copy secrets (keys, tokens, .env values) into files, commands or your answers."""


def _names(tools: Collection[str], wanted: Collection[str]) -> list[str]:
    return [name for name in wanted if name in tools]


def _quoted(names: list[str]) -> str:
    quoted = [f"`{n}`" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def language_line(s: Surroundings) -> str | None:
    """How to use the language tools offered (None: none is); with `outline` and `read`, a second
    line: outline a long file, then read the ranges needed."""
    names = _names(s.tools, LANGUAGE_TOOLS)
    if not names or s.languages is None:
        return None
    lines = []
    finders = [n for n in names if n not in ("outline", "code_actions", "apply_code_action")]
    if finders:
        lines.append(
            f"- To find where code is defined or used{', or to rename it' if 'rename' in names else ''}, "
            f"use {_quoted(finders)} (answered by {s.languages}): they are exact where grep guesses. "
            "Fall back to grep when they have no answer."
        )
    if "outline" in names and "read" in s.tools:
        lines.append(
            "- Before reading a long file, take its `outline` (its classes and functions with "
            "their line ranges), then `read` only the ranges you need (offset, limit) instead of "
            "the whole file; read a file whole only when it is short or you need all of it."
        )
    if {"code_actions", "apply_code_action"} <= set(names):
        lines.append(
            "- For a fix of a diagnostic, organizing imports or a refactoring the language server "
            "knows, list the `code_actions` at those lines and apply one with "
            "`apply_code_action` rather than editing by hand."
        )
    return "\n".join(lines) or None


def working_lines(s: Surroundings) -> list[str]:
    """How the main agent works with the tools it has (one line a habit, each only with its tools)."""
    tools = s.tools
    lines: list[str] = []
    if "read" in tools and ({"edit", "write"} & tools):
        lines.append("- Read a file before you edit or overwrite it.")
    if {"edit", "write"} <= tools:
        lines.append(
            "- Prefer `edit` for changes to existing files (old_string must match exactly once) "
            "and `write` for new files."
        )
    lines.append(language_line(s) or "")
    if "grep" in tools or "read" in tools:
        lines.append(
            "- Independent reads and searches can be requested together in one message; they run "
            "concurrently."
        )
    if "task" in tools:
        lines.append(
            "- For a broad search or investigation that would fill this conversation, start a "
            "sub-agent with `task`: it sees none of this conversation, so its prompt must say "
            "everything it needs; its report is for you to use and relay."
        )
    if "todowrite" in tools:
        lines.append(
            "- For multi-step work (three steps or more, or several files), keep a todo list with "
            "`todowrite`: write the steps first, mark one in_progress as you start it and "
            "completed as soon as it is done. Skip it for a single, simple step."
        )
    if "ask_user" in tools:
        lines.append(
            "- When only the user can decide (a choice between approaches, a fact you cannot find "
            "out), ask with `ask_user` rather than guess; do not ask what you can look up."
        )
    lines.append(
        "- If the user rejects a tool call, do not retry the same call: follow their feedback, "
        "or ask what they want instead."
    )
    return [line for line in lines if line]


def verification(prompt: PromptKind, s: Surroundings) -> str | None:
    """What checking an edit gets in this front end, and what is left for the model to run."""
    if not ({"edit", "write", "rename"} & s.tools):
        return None
    tests = (
        " Run the project's tests, type checker or linter with `bash` before you say a change "
        "works."
        if "bash" in s.tools
        else " Say which checks you could not run."
    )
    if prompt.front_end == "editor":
        return (
            "Verification: after an edit the tool result gives the diagnostics of the editor's "
            "language servers for the file (names, types, lint: whatever this editor checks), or "
            "says none arrived. Fix what your edit broke. Diagnostics are not tests." + tests
        )
    text = (
        "Verification: after an edit the tool result gives agentls's built-in check, a syntax "
        "check of Python and JSON files only: it does not see undefined names, types or failing "
        "tests."
    )
    if s.verify_commands:
        text += " The configured verify commands' output follows it for the files they match."
    if s.languages is not None:
        text += (
            f" Where a language server ({s.languages}) answers for the file, its diagnostics "
            "(names, types, lint, as far as it checks) come first; the language servers also "
            "check the other files that use what an edit changed."
        )
    return text + tests


def main_prompt(prompt: PromptKind, s: Surroundings) -> str:
    intro = INTRO[prompt.front_end]
    if {"edit", "write", "rename"} & s.tools:
        intro += " " + EDITS[prompt.front_end]
    parts = [intro, "\n".join(working_lines(s))]
    check = verification(prompt, s)
    if check:
        parts.append(check)
    if _names(s.tools, CHANGING_TOOLS):
        parts.append(SAFETY)
        parts.append(
            "Be concise. When you are done, say what you changed and how you verified it (or "
            "that you could not)."
        )
    else:
        parts.append("Be concise: answer with what you found, with file paths and lines.")
    if s.skills and "skill" in s.tools:
        parts.append(s.skills)
    if prompt.kind == "command":
        what = f": {prompt.description.strip().rstrip('.')}" if prompt.description.strip() else ""
        parts.append(
            "This turn runs a custom command as an agent type"
            + what
            + ". You have that type's tools for it; its instructions come with the request."
        )
    return "\n\n".join(parts)


def subagent_prompt(prompt: PromptKind, s: Surroundings) -> str:
    changes = _names(s.tools, CHANGING_TOOLS)
    name = prompt.agent or "general"
    described = f" ({prompt.description.strip().rstrip('.')})" if prompt.description.strip() else ""
    lines = [
        f"You are a sub-agent of agentls, of the agent type {name}{described}. Another agent, "
        "the caller, started you for the one task in the first message; it sees none of your "
        "work but your final message.",
        "",
        "- You work alone: you cannot ask the caller or the user anything. When something is "
        "unclear, make the most reasonable reading, and say so in your report.",
    ]
    if changes:
        lines.append(
            f"- You may change things with {_quoted(changes)}, but only what the task asks for."
        )
    else:
        lines.append("- Your tools are read-only: you investigate and report; you change nothing.")
    language = language_line(s)
    if language:
        lines.append(language)
    if "grep" in s.tools or "read" in s.tools:
        lines.append(
            "- Request independent reads and searches together in one message; stop searching "
            "once you can answer."
        )
    lines.append(
        "- Your final message is the report the caller relays: concise, facts first, "
        "each with its file path and line (src/app.py:42), quoting only the lines that matter. "
        "Say what you could not find or check. No greeting, no offer of more help."
    )
    parts = ["\n".join(lines)]
    check = verification(prompt, s) if changes else None
    if check:
        parts.append(check)
    if changes:
        parts.append(SAFETY)
    return "\n\n".join(parts)


def git_branch(root: Path) -> str | None:
    """The checked-out branch, read from .git/HEAD (no subprocess: this runs at every turn)."""
    for directory in (root, *root.parents):
        head = directory / ".git"
        if head.is_file():
            # A worktree or submodule: ".git" holds "gitdir: <path>".
            try:
                target = head.read_text(encoding="utf-8").strip().removeprefix("gitdir:").strip()
            except OSError:
                return None
            head = (directory / target).resolve()
        if head.is_dir():
            try:
                ref = (head / "HEAD").read_text(encoding="utf-8").strip()
            except OSError:
                return None
            if ref.startswith("ref: refs/heads/"):
                return ref.removeprefix("ref: refs/heads/")
            return f"(detached at {ref[:12]})"
    return None


def environment_block(root: Path, s: Surroundings | None = None, today: date | None = None) -> str:
    lines = [
        "<env>",
        f"Workspace root: {root}",
        f"Platform: {platform.system().lower()} ({platform.machine()})",
        f"Today's date: {(today or date.today()).isoformat()}",
    ]
    branch = git_branch(root)
    if branch:
        lines.append(f"Git branch: {branch}")
    else:
        lines.append("Git repository: no")
    if s is not None:
        if s.languages is not None:
            lines.append(f"Language servers: {s.languages}")
        else:
            lines.append(
                "Language servers: none here, so no language tools (symbols, definition, "
                "references, ...); search with grep and read."
            )
    lines.append("</env>")
    return "\n".join(lines)


def plan_prompt(s: Surroundings) -> str:
    readers: list[str] = [n for n in ("read", "glob", "grep", "list") if n in s.tools]
    if s.languages is not None and _names(s.tools, LANGUAGE_TOOLS):
        readers.append("the language tools")
    if "bash" in s.tools:
        readers.append("read-only bash such as `ls`, `cat`, `git log`")
    with_tools = f" ({', '.join(readers)})" if readers else ""
    text = (
        "<mode>plan</mode>\nYou are in plan mode: you are planning, not changing anything. "
        f"Investigate with the read-only tools{with_tools}; edits, writes, renames and commands "
        "that change anything are refused."
    )
    if "exit_plan" in s.tools:
        text += (
            " When the plan is complete (the steps, the files each changes, how to verify), call "
            "`exit_plan` with it: the user approves it (you are then in build mode and carry it "
            "out) or gives feedback to plan further."
        )
    return text


def build_system(
    root: Path,
    mode: str = "build",
    extra: str | None = None,
    *,
    prompt: PromptKind | None = None,
    surroundings: Surroundings | None = None,
    today: date | None = None,
) -> list[dict[str, object]]:
    """The system prompt blocks of one request (the user's AGENTS.md follows as its own block,
    instructions.py)."""
    prompt = prompt or PromptKind()
    s = surroundings or Surroundings(tools=frozenset())
    body = subagent_prompt(prompt, s) if prompt.kind == "subagent" else main_prompt(prompt, s)
    text = body + "\n\n" + environment_block(root, s, today)
    if mode == "plan":
        text += "\n\n" + plan_prompt(s)
    if extra:
        text += "\n\n" + extra
    return [{"type": "text", "text": text}]
