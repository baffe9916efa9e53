"""Skills in the Agent Skills format (agentskills.io; Claude Code, opencode, Codex and others read
the same folders): a folder holding SKILL.md, YAML front matter (`name`, `description`, optional
`allowed-tools`) over a Markdown body, and any other files beside it.

Progressive disclosure: the system prompt lists only each skill's name and description; the
`skill` tool loads a body when the model decides it needs it; the skill's other files are read by
path through the read tool, under the read rules like any file.

Where they are found, later ones overriding earlier ones of the same name: the user's
~/.claude/skills ($CLAUDE_CONFIG_DIR/skills when that is set), ~/.agents/skills and ~/.config/agentls/skills, then, in a trusted workspace only,
its .claude/skills, .agents/skills, .opencode/skills and .agentls/skills. A workspace's skill that
links out of its folder is not followed.

`allowed-tools` (Claude Code's rule syntax: `Bash(git diff:*)`, `Read`, `Edit(src/**)`) allows
those calls without asking for the rest of the turn that loaded the skill, translated exactly as
`agentls permissions import` translates Claude Code's allow rules (never wider); only for a skill
from the user's own folders or a trusted workspace, and the loaded skill says what it allows. The
configured deny and ask rules still come first."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

SkillSource = Literal["user", "workspace"]
SKILL_FILE = "SKILL.md"
MAX_SKILL_BYTES = 256 * 1024
MAX_SKILLS = 200
MAX_FILES_LISTED = 50
NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# One allowed-tools entry: a tool name and its optional (specifier); commas or spaces between.
TOOL_ENTRY = re.compile(r"[A-Za-z][\w.:-]*(?:\([^)]*\))?")


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    folder: Path
    source: SkillSource
    allowed_tools: tuple[str, ...] = ()
    problems: tuple[str, ...] = field(default=(), compare=False)

    @property
    def file(self) -> Path:
        return self.folder / SKILL_FILE

    def wire(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "path": str(self.file),
            "source": self.source,
            "allowedTools": list(self.allowed_tools),
        }


class SkillError(ValueError):
    """A SKILL.md that cannot be used; the message names the file and what is wrong."""


def skill_dirs(
    root: Path | None, home: Path, config: Path, trusted: bool, claude: Path | None = None
) -> list[tuple[SkillSource, Path]]:
    """The folders skills are looked for in, in order (a later one's skill of a name wins);
    `claude`: Claude Code's user folder (default ~/.claude)."""
    dirs: list[tuple[SkillSource, Path]] = [
        ("user", (claude or home / ".claude") / "skills"),
        ("user", home / ".agents" / "skills"),
        ("user", config / "skills"),
    ]
    if trusted and root is not None:
        for name in WORKSPACE_SKILL_PARENTS:
            dirs.append(("workspace", root / name / "skills"))
    return dirs


WORKSPACE_SKILL_PARENTS = (".claude", ".agents", ".opencode", ".agentls")


def has_workspace_skills(root: Path) -> bool:
    """Whether the workspace has a skills folder of its own (they count once it is trusted)."""
    return any((root / name / "skills").is_dir() for name in WORKSPACE_SKILL_PARENTS)


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The YAML front matter (between `---` lines at the very top) and the body after it;
    SkillError (without a file name) when the YAML is broken or not a mapping."""
    import yaml

    if not text.startswith("---"):
        return {}, text
    lines = text.splitlines(keepends=True)
    for end in range(1, len(lines)):
        if lines[end].rstrip() == "---":
            break
    else:
        return {}, text
    try:
        meta = yaml.safe_load("".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or "cannot be parsed"
        raise SkillError(f"its front matter is not valid YAML ({where}{problem})") from None
    if not isinstance(meta, dict):
        raise SkillError("its front matter is not a mapping of keys to values")
    return meta, "".join(lines[end + 1 :])


def tool_entries(value: Any) -> tuple[str, ...]:
    """allowed-tools as a list of Claude Code rules: a YAML list, or one string of entries
    separated by commas or spaces (a specifier's own spaces kept)."""
    if value is None:
        return ()
    items = value if isinstance(value, list) else [value]
    found: list[str] = []
    for item in items:
        found += TOOL_ENTRY.findall(str(item))
    return tuple(found)


def parse_skill(folder: Path, source: SkillSource, text: str) -> Skill:
    """The skill of one SKILL.md; SkillError naming what is wrong."""
    try:
        meta, _ = split_front_matter(text)
    except SkillError as exc:
        raise SkillError(f"{folder / SKILL_FILE}: {exc}") from None
    name = str(meta.get("name") or folder.name).strip()
    description = " ".join(str(meta.get("description") or "").split())
    problems = []
    if not NAME.fullmatch(name) or len(name) > 64:
        raise SkillError(
            f"{folder / SKILL_FILE}: name {name!r} is not lower-case letters, digits and "
            "single hyphens (at most 64)"
        )
    if not description:
        raise SkillError(f"{folder / SKILL_FILE}: it has no description (the model picks by it)")
    if name != folder.name:
        problems.append(f"its name {name!r} differs from its folder's {folder.name!r}")
    return Skill(
        name=name,
        description=description[:1024],
        folder=folder,
        source=source,
        allowed_tools=tool_entries(meta.get("allowed-tools")),
        problems=tuple(problems),
    )


def _read_small(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_SKILL_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def load_skills(
    root: Path | None, home: Path, config: Path, trusted: bool, claude: Path | None = None
) -> tuple[dict[str, Skill], list[str]]:
    """Every usable skill by name, sorted, and a line for each SKILL.md that could not be used."""
    found: dict[str, Skill] = {}
    problems: list[str] = []
    for source, directory in skill_dirs(root, home, config, trusted, claude):
        try:
            entries = sorted(directory.iterdir())
        except OSError:
            continue
        real_dir = os.path.realpath(directory)
        for entry in entries[:MAX_SKILLS]:
            # A workspace's skill folder that links elsewhere is not followed (it could name
            # anything); the user's own may be links (dotfiles kept elsewhere).
            if source == "workspace" and os.path.dirname(os.path.realpath(entry)) != real_dir:
                continue
            text = _read_small(entry / SKILL_FILE)
            if text is None:
                continue
            try:
                skill = parse_skill(entry, source, text)
            except SkillError as exc:
                problems.append(str(exc))
                continue
            found[skill.name] = skill
    return dict(sorted(found.items())), problems


def skills_prompt(skills: dict[str, Skill]) -> str:
    """The system prompt's part: each skill's name and description, and how to load one."""
    if not skills:
        return ""
    lines = [
        "# Skills",
        "Skills are procedures the user installed. When a task matches a skill's description, "
        "load it with the skill tool (by name) before you start, then follow it; its other files "
        "are read with the read tool by the paths it names.",
    ]
    lines += [f"- {s.name}: {s.description}" for s in skills.values()]
    return "\n".join(lines)


def skill_body(skill: Skill) -> str:
    """What the skill tool returns: the body, where its files are, and the files beside it."""
    text = _read_small(skill.file)
    if text is None:
        raise SkillError(f"{skill.file} can no longer be read")
    _, body = split_front_matter(text)
    files = []
    for dirpath, dirnames, filenames in os.walk(skill.folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path != skill.file and not name.startswith("."):
                files.append(str(path.relative_to(skill.folder)))
        if len(files) >= MAX_FILES_LISTED:
            break
    parts = [f'<skill name="{skill.name}" folder="{skill.folder}">', body.strip(), "</skill>"]
    if files:
        listed = "\n".join(f"- {skill.folder / f}" for f in files[:MAX_FILES_LISTED])
        parts.append(f"Files of this skill (read them by these paths when it says to):\n{listed}")
    return "\n\n".join(parts)


_CACHE: dict[tuple[str, bool], tuple[tuple[object, ...], dict[str, Skill], list[str]]] = {}


def _signature(dirs: list[tuple[SkillSource, Path]]) -> tuple[object, ...]:
    """What the skills found depend on: each skill folder's SKILL.md, its size and time."""
    marks: list[object] = []
    for _, directory in dirs:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries[:MAX_SKILLS]:
            try:
                st = os.stat(os.path.join(entry.path, SKILL_FILE))
            except OSError:
                continue
            marks.append((entry.path, os.path.realpath(entry.path), st.st_mtime_ns, st.st_size))
    return tuple(marks)


def available_skills(root: Path | None, trusted: bool) -> tuple[dict[str, Skill], list[str]]:
    """load_skills for the user's home and config folder, read again only when a SKILL.md was
    added, removed or changed (each step asks)."""
    from agentls.config_home import claude_home, config_home

    home, config, claude = Path.home(), config_home(), claude_home()
    dirs = skill_dirs(root, home, config, trusted, claude)
    signature = _signature(dirs)
    key = (str(root), trusted)
    cached = _CACHE.get(key)
    if cached is not None and cached[0] == signature:
        return cached[1], cached[2]
    skills, problems = load_skills(root, home, config, trusted, claude)
    _CACHE[key] = (signature, skills, problems)
    return skills, problems
