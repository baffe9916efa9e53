"""Skills (session/skills.py, skill_use.py): found where Claude Code, opencode and agentls keep
them, a workspace's only when it is trusted, listed by name and description, loaded whole on
demand with what their allowed-tools allow for the turn."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentls.session.skill_use import allowed_rules, load_skill, turn_grants
from agentls.session.skills import (
    SkillError,
    load_skills,
    parse_skill,
    skills_prompt,
    tool_entries,
)
from agentls.session.state import SessionState
from agentls.store.rows import SessionRecord
from agentls.tools.base import ToolError

FIXTURES = Path(__file__).parent.parent / "fixtures" / "skills"


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    home = tmp_path / "home"
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES / "home", home)
    shutil.copytree(FIXTURES / "workspace", root)
    return home, root, tmp_path / "config"


def test_the_users_skills_are_found_in_claudes_and_agents_folders_and_agentls_config(
    setup: tuple[Path, Path, Path],
) -> None:
    home, root, config = setup
    (config / "skills" / "sql").mkdir(parents=True)
    (config / "skills" / "sql" / "SKILL.md").write_text(
        "---\nname: sql\ndescription: Query style.\n---\nUse CTEs.\n"
    )
    skills, problems = load_skills(root, home, config, trusted=False)
    assert list(skills) == ["commit-style", "release-notes", "sql"]
    assert problems == []
    notes = skills["release-notes"]
    assert notes.source == "user" and notes.allowed_tools == ("Bash(python3:*)", "Read")
    assert notes.description.startswith("Write release notes")


def test_a_workspaces_skills_count_only_when_it_is_trusted(setup: tuple[Path, Path, Path]) -> None:
    home, root, config = setup
    assert "api-style" not in load_skills(root, home, config, trusted=False)[0]
    skills, problems = load_skills(root, home, config, trusted=True)
    assert skills["api-style"].source == "workspace"
    assert skills["api-style"].allowed_tools == ("Edit(src/**)", "WebSearch")
    assert len(problems) == 1 and "broken" in problems[0] and "YAML" in problems[0]


def test_a_workspace_skill_overrides_the_users_of_the_same_name(
    setup: tuple[Path, Path, Path],
) -> None:
    home, root, config = setup
    mine = root / ".agentls" / "skills" / "commit-style"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("---\nname: commit-style\ndescription: Ours.\n---\nOurs.\n")
    assert load_skills(root, home, config, trusted=True)[0]["commit-style"].source == "workspace"


def test_a_workspace_skill_linking_out_of_its_folder_is_not_followed(
    setup: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    home, root, config = setup
    elsewhere = tmp_path / "elsewhere" / "spy"
    elsewhere.mkdir(parents=True)
    (elsewhere / "SKILL.md").write_text("---\nname: spy\ndescription: Out.\n---\nx\n")
    (root / ".claude" / "skills" / "spy").symlink_to(elsewhere)
    assert "spy" not in load_skills(root, home, config, trusted=True)[0]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("---\nname: Bad_Name\ndescription: x\n---\n", "lower-case"),
        ("---\nname: ok\n---\nbody\n", "no description"),
        ("---\n- a list\n---\n", "not a mapping"),
    ],
)
def test_a_skill_that_cannot_be_used_says_why(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(SkillError, match=problem):
        parse_skill(tmp_path / "ok", "user", text)


def test_allowed_tools_are_read_as_claude_code_writes_them() -> None:
    assert tool_entries("Bash(git diff:*), Read Grep") == ("Bash(git diff:*)", "Read", "Grep")
    assert tool_entries(["Bash(npm run test:*)", "Edit(src/**)"]) == (
        "Bash(npm run test:*)",
        "Edit(src/**)",
    )
    assert tool_entries(None) == ()


def test_the_prompt_lists_names_and_descriptions_only(setup: tuple[Path, Path, Path]) -> None:
    home, root, config = setup
    text = skills_prompt(load_skills(root, home, config, trusted=False)[0])
    assert "- release-notes: Write release notes" in text
    assert "Count the changed lines" not in text  # the body waits for the skill tool
    assert skills_prompt({}) == ""


def test_allowed_tools_translate_as_the_permissions_import_does_and_say_what_is_not(
    setup: tuple[Path, Path, Path],
) -> None:
    home, root, config = setup
    skill = load_skills(root, home, config, trusted=True)[0]["api-style"]
    rules, said, skipped = allowed_rules(skill)
    assert {(r.tool, r.pattern, r.action) for r in rules} == {
        ("edit", "src/**", "allow"),
        ("write", "src/**", "allow"),
    }
    assert said == ["Edit(src/**)"]
    assert len(skipped) == 1 and skipped[0].startswith("WebSearch")


async def test_loading_a_skill_allows_its_tools_for_that_turn_only(
    setup: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    home, root, config = setup
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    record = SessionRecord(id="s", title="t", cwd=str(root), model="m", created_at=0, updated_at=0)
    state = SessionState(record=record, messages=[])
    state.task = asyncio.ensure_future(asyncio.sleep(0))
    output = load_skill(state, root, False, "release-notes")
    assert "Count the changed lines" in output
    assert str(home / ".claude/skills/release-notes/template.md") in output
    assert "Bash(python3:*)" in output  # said when it loads
    granted = {(r.tool, r.pattern) for r in turn_grants(state)}
    assert ("bash", "python3 *") in granted
    assert ("read", str(home / ".claude/skills/release-notes/scripts/count_lines.py")) in granted
    await state.task
    state.task = asyncio.ensure_future(asyncio.sleep(0))  # the next turn
    assert turn_grants(state) == []
    await state.task
    with pytest.raises(ToolError, match="no skill named 'nope'.*release-notes"):
        load_skill(state, root, False, "nope")


def test_skills_are_commands_and_a_command_of_the_same_name_wins(
    setup: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentls.session.commands import load_commands

    home, root, config = setup
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    commands = load_commands(root, config, trusted=False)
    assert commands["release-notes"].source == "skill"
    assert "$ARGUMENTS" in commands["release-notes"].template
    (config / "commands").mkdir(parents=True)
    (config / "commands" / "release-notes.md").write_text("My own notes: $ARGUMENTS")
    assert load_commands(root, config, trusted=False)["release-notes"].source == "user"
