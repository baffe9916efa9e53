"""A skill loaded by the skill tool (session/skills.py): its body for the model, and its
`allowed-tools` as allow rules for the rest of the turn that loaded it (with exact read rules for
the skill's own files), kept on the session's state with the turn's task so that they lapse by
themselves when the turn ends."""

from __future__ import annotations

import os
from pathlib import Path

from agentls.claude_permissions import Entry, Translated, translate
from agentls.permission.rules import (
    PermissionRules,
    Rule,
    rule_matches_path,
    rules_tool,
    tool_matches,
)
from agentls.session.skills import MAX_FILES_LISTED, Skill, SkillError, available_skills, skill_body
from agentls.session.state import SessionState
from agentls.tools.base import ToolError


def turn_grants(state: SessionState) -> list[Rule]:
    """The rules the skills loaded in the running turn allow (none once it ended)."""
    task, rules = state.skill_grants
    return rules if task is not None and task is state.task else []


def _add_grants(state: SessionState, rules: list[Rule]) -> None:
    task, kept = state.skill_grants
    current = kept if task is not None and task is state.task else []
    state.skill_grants = (state.task, [*current, *(r for r in rules if r not in current)])


def allowed_rules(skill: Skill) -> tuple[list[Rule], list[str], list[str]]:
    """(rules, what each allows in words, what was not translated and why) of allowed-tools."""
    rules: list[Rule] = []
    said: list[str] = []
    skipped: list[str] = []
    for text in skill.allowed_tools:
        result = translate(Entry(skill.file, skill.source, "allow", text))
        if isinstance(result, Translated):
            rules += result.rules
            said.append(text + (f" ({result.note})" if result.note else ""))
        else:
            skipped.append(f"{text}: {result.reason}")
    return rules, said, skipped


def skill_file_rules(skill: Skill) -> list[Rule]:
    """Exact read rules for the skill's own files (not hidden ones), so that the model reads
    them without asking though they lie outside the workspace."""
    paths = [skill.file]
    for path in sorted(skill.folder.rglob("*"))[: MAX_FILES_LISTED * 4]:
        relative = path.relative_to(skill.folder)
        if path.is_file() and not any(p.startswith(".") for p in relative.parts):
            paths.append(path)
    return [
        Rule(tool="read", pattern=os.path.realpath(p), action="allow", exact=True)
        for p in paths[: MAX_FILES_LISTED + 1]
    ]


def reads_skill_file(rules: PermissionRules, state: SessionState, tool: str, subject: str) -> bool:
    """Whether this call reads a file of a skill loaded in the running turn (outside the
    workspace, which alone denies it) and no configured rule naming the file denies or asks."""
    if rules_tool(tool) != "read" or not any(
        r.exact and r.tool == "read" and r.pattern == subject for r in turn_grants(state)
    ):
        return False
    named = [
        r
        for r in rules.rules
        if tool_matches(r.tool, "read") and r.pattern is not None and rule_matches_path(r, subject)
    ]
    return not named or named[-1].action == "allow"


def load_skill(state: SessionState, root: Path, trusted: bool, name: str) -> str:
    """The skill tool's output for `name`; ToolError when there is no such skill."""
    skills, _ = available_skills(root, trusted)
    skill = skills.get(name)
    if skill is None:
        known = ", ".join(skills) or "none"
        raise ToolError(f"There is no skill named {name!r}. The skills are: {known}.")
    try:
        body = skill_body(skill)
    except SkillError as exc:
        raise ToolError(str(exc)) from None
    rules, said, skipped = allowed_rules(skill)
    _add_grants(state, [*skill_file_rules(skill), *rules])
    notes = []
    if said:
        notes.append(
            "While this turn lasts, these calls run without asking (the skill's allowed-tools; "
            "the user's deny and ask rules still apply): " + ", ".join(said) + "."
        )
    if skipped:
        notes.append("Not allowed by it (not translated): " + "; ".join(skipped) + ".")
    return "\n\n".join([body, *notes])
