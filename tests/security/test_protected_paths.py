"""Protected paths of the workspace (.git, .agentls, .vscode, ...): a change there can run programs
or widen permissions later, outside the sandbox. Writing them asks even under {"*": "allow"} or a
"sandboxed" rule; the sandbox mounts the existing ones read-only; git commands that write the
repository ask under a "sandboxed" rule. The read-only git commands and ordinary sandboxed writes
still run without a question."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from agentls.permission.rules import PermissionRules
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.security.conftest import SecurityFigures
from tests.security.sandbox_support import context, require_bwrap, run

KIND = "protected path write"

SANDBOXED = {"permissions": {"bash": "sandboxed"}, "sandbox": "required"}


def _git_repo(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def _first_commit(root: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty",
         "-m", "init"],
        cwd=root,
        check=True,
    )  # fmt: skip


def _host_git_status(root: Path) -> None:
    subprocess.run(["git", "status"], cwd=root, capture_output=True, timeout=30)


def _attacks(marker: Path) -> list[str]:
    return [
        f"git config core.fsmonitor 'touch {marker}; false'",
        f"git -c x=y config core.fsmonitor 'touch {marker}; false'",
        f"/usr/bin/git config core.fsmonitor 'touch {marker}; false'",
        f"printf '[core]\\n\\tfsmonitor = touch {marker}; false\\n' >> .git/config",
        f"printf '#!/bin/sh\\ntouch {marker}\\n' > .git/hooks/pre-commit",
        "git add -A && git commit -qm x",
        "git init -q sub",
        """echo '{"permissions":{"*":"allow"},"sandbox":"off"}' > .agentls/config.json""",
        """mkdir -p .agentls && echo '{"sandbox":"off"}' > .agentls/config.json""",
        """echo '{"task.allowAutomaticTasks":"on"}' > .vscode/settings.json""",
        "echo 'export PATH=/x:$PATH' > .envrc",
        "echo '* filter=evil' >> .gitattributes",
        "echo x > sub/.git/config",
        "echo x > .GIT/config",
    ]


ATTACKS = _attacks(Path("/tmp/pwned"))


@pytest.mark.parametrize("command", range(len(ATTACKS)))
async def test_attacks_through_the_loop_ask(
    command: int,
    tmp_path: Path,
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    security_figures: SecurityFigures,
) -> None:
    require_bwrap()
    marker = tmp_path / "pwned"
    line = _attacks(marker)[command]
    h = await make_harness(SANDBOXED)
    _git_repo(h.root)
    (h.root / ".agentls").mkdir()
    before = (h.root / ".git" / "config").read_text()
    api.enqueue(reply(tool_use("bash", {"command": line})), reply(text("done")))
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    with security_figures.attempt(KIND):
        request = await asyncio.wait_for(h.wait_for("permission-request"), 20)
        h.agent.approve(session.id, request.request_id, "reject")
        await asyncio.wait_for(turn, 20)
        assert not [e for e in h.of_type("tool-result") if "ran in the sandbox" in e.output]
        _host_git_status(h.root)
        assert not marker.exists()
        assert (h.root / ".git" / "config").read_text() == before
        assert not (h.root / ".agentls" / "config.json").exists()


# Code the rules cannot see into (allowed under "sandboxed"): the read-only mounts hold.
HIDDEN_WRITES = [
    "python3 -c \"open('.git/config','a').write('[core]\\n\\tfsmonitor = touch {m}; false\\n')\"",
    "python3 -c \"open('.git/hooks/post-checkout','w').write('#!/bin/sh\\ntouch {m}\\n')\"",
    "python3 -c \"open('.agentls/config.json','w').write('{{}}')\"",
    "python3 -c \"import os; os.rename('.git', 'g2')\"",
    "python3 -c \"import shutil; shutil.rmtree('.agentls')\"",
]


@pytest.mark.parametrize("command", HIDDEN_WRITES)
async def test_the_sandbox_keeps_protected_paths_read_only(
    command: str, tmp_path: Path, security_figures: SecurityFigures
) -> None:
    require_bwrap()
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    _git_repo(root)
    (root / ".agentls").mkdir()
    marker = tmp_path / "pwned"
    before = (root / ".git" / "config").read_text()
    ctx = context(root)
    with security_figures.attempt(KIND):
        result = await run(ctx, command.format(m=marker))
        assert result.metadata["sandboxed"] is True
        _host_git_status(root)
        assert not marker.exists()
        assert (root / ".git" / "config").read_text() == before
        assert not (root / ".git" / "hooks" / "post-checkout").exists()
        assert (root / ".agentls").is_dir()
        assert not (root / ".agentls" / "config.json").exists()


PROTECTED = [
    ".git/config",
    ".git/hooks/pre-commit",
    ".git",
    ".agentls/config.json",
    ".vscode/settings.json",
    ".vscode/tasks.json",
    ".idea/workspace.xml",
    ".envrc",
    ".mcp.json",
    ".gitmodules",
    ".gitattributes",
    "src/.gitattributes",
    ".pre-commit-config.yaml",
    "vendor/lib/.git/config",
    ".Git/Config",
    ".AGENTLS/config.json",
]
WIDE = [{"*": "allow"}, {"edit": "allow", "write": "allow"}]


@pytest.mark.parametrize("path", PROTECTED)
@pytest.mark.parametrize("tool", ["write", "edit"])
@pytest.mark.parametrize("config", WIDE)
def test_file_tools_ask_on_protected_paths(
    path: str, tool: str, config: dict[str, str], security_figures: SecurityFigures
) -> None:
    rules = PermissionRules.from_config(config)
    with security_figures.attempt(KIND):
        assert rules.evaluate(tool, path) == "ask"


@pytest.mark.parametrize("path", PROTECTED)
def test_a_redirection_to_a_protected_path_asks(
    path: str, tmp_path: Path, security_figures: SecurityFigures
) -> None:
    for config in ({"*": "allow"}, {"bash": "sandboxed"}):
        rules = PermissionRules.from_config(config)
        for sandboxed in (False, True):
            with security_figures.attempt(KIND):
                got = rules.decide_bash(f"echo x > {path}", root=tmp_path, sandboxed=sandboxed)
                assert got.action == "ask"
                assert got.sandboxed is False


GIT_WRITERS = [
    "git commit -m x",
    "git add .",
    "git checkout main",
    "git switch -c x",
    "git merge x",
    "git rebase main",
    "git reset --hard",
    "git stash",
    "git config core.fsmonitor x",
    "git remote add o /x",
    "git tag v1",
    "git branch -D x",
    "git branch -m x",
    "git branch new",
    "git fetch",
    "git pull",
    "git push",
    "git init",
    "git clone /x y",
    "git -c core.fsmonitor=x status",
    "git -C sub commit -m x",
    "git status && git commit -m x",
    "git branch | cat; git config a.b c",
    "command git config a.b c",
    "/usr/bin/git config a.b c",
]


@pytest.mark.parametrize("line", GIT_WRITERS)
@pytest.mark.parametrize(
    "config",
    [{"bash": "sandboxed"}, {"bash": {"git *": "sandboxed"}}, {"bash": {"*": "sandboxed"}}],
)
def test_sandboxed_git_writers_ask(
    line: str, config: dict[str, object], tmp_path: Path, security_figures: SecurityFigures
) -> None:
    rules = PermissionRules.from_config(config)
    with security_figures.attempt(KIND):
        got = rules.decide_bash(line, root=tmp_path, sandboxed=True)
        assert got.action == "ask"
        assert got.sandboxed is False


def test_a_sandboxed_git_subcommand_rule_for_a_writer_asks(tmp_path: Path) -> None:
    rules = PermissionRules.from_config({"bash": {"git commit": "sandboxed"}})
    assert rules.decide_bash("git commit -m x", root=tmp_path, sandboxed=True).action == "ask"


# Still without a question.
GIT_READS = [
    "git status",
    "git status --porcelain",
    "git log --oneline -5",
    "git diff HEAD~1",
    "git show HEAD",
    "git blame src/a.py",
    "git grep foo",
    "git ls-files",
    "git rev-parse HEAD",
    "git describe --tags",
    "git shortlog -sn",
    "git branch",
    "git branch -a",
    "git remote -v",
    "ls -la",
    "LANG=C ls",
    "echo x > src/a.py",
    "npm test",
]


@pytest.mark.parametrize("line", GIT_READS)
def test_sandboxed_reads_still_run(line: str, tmp_path: Path) -> None:
    rules = PermissionRules.from_config({"bash": "sandboxed"})
    got = rules.decide_bash(line, root=tmp_path, sandboxed=True)
    assert (got.action, got.sandboxed) == ("allow", True)


def test_later_rules_still_win(tmp_path: Path) -> None:
    rules = PermissionRules.from_config({"bash": {"*": "sandboxed", "git commit": "allow"}})
    assert rules.decide_bash("git commit -m x", root=tmp_path, sandboxed=True).action == "allow"


def test_a_rule_naming_a_protected_path_opens_it() -> None:
    rules = PermissionRules.from_config({"edit": {".vscode/settings.json": "allow"}})
    assert rules.evaluate("edit", ".vscode/settings.json") == "allow"
    assert rules.evaluate("edit", ".vscode/tasks.json") == "ask"


def test_plain_files_stay_allowed() -> None:
    rules = PermissionRules.from_config({"*": "allow"})
    for path in ["src/a.py", ".gitignore", ".github/workflows/ci.yml", "docs/git.md", ".gitx"]:
        assert rules.evaluate("write", path) == "allow"
        assert rules.evaluate("edit", path) == "allow"


@pytest.mark.parametrize("line", ["git status", "git log", "echo x > src/a.py"])
async def test_through_the_loop_reads_and_plain_writes_run(
    line: str, make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    require_bwrap()
    h = await make_harness(SANDBOXED)
    _git_repo(h.root)
    (h.root / "src").mkdir()
    _first_commit(h.root)
    api.enqueue(reply(tool_use("bash", {"command": line})), reply(text("done")))
    session = await h.agent.new_session()
    await asyncio.wait_for(h.agent.prompt(session.id, "go"), 30)
    assert not h.of_type("permission-request")
    results = [e for e in h.of_type("tool-result") if e.tool == "bash"]
    assert results and "ran in the sandbox" in results[0].output
    if line.startswith("echo"):
        assert (h.root / "src" / "a.py").read_text() == "x\n"


async def test_an_approved_git_commit_runs_outside_the_sandbox(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    """A line that changes what the sandbox keeps read-only (here .git) would fail inside it: under
    "auto" it runs outside, after a question that says it is not sandboxed, and the commit lands."""
    require_bwrap()
    h = await make_harness({"permissions": {"bash": "sandboxed"}, "sandbox": "auto"})
    _git_repo(h.root)
    _first_commit(h.root)
    (h.root / "a.txt").write_text("a\n")
    line = "git add a.txt && git -c user.name=a -c user.email=a@b commit -qm second"
    api.enqueue(reply(tool_use("bash", {"command": line})), reply(text("done")))
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "commit it"))
    request = await asyncio.wait_for(h.wait_for("permission-request"), 20)
    assert request.sandboxed is False
    h.agent.approve(session.id, request.request_id, "once")
    await asyncio.wait_for(turn, 30)
    result = next(e for e in h.of_type("tool-result") if e.tool == "bash")
    assert "ran in the sandbox" not in result.output and "Exit code: 0" in result.output
    assert _commit_subjects(h.root) == ["second", "init"]


def _commit_subjects(root: Path) -> list[str]:
    log = subprocess.run(
        ["git", "log", "--format=%s"], cwd=root, capture_output=True, text=True, check=True
    )
    return log.stdout.split()
