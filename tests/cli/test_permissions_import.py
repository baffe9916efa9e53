"""`agentls permissions import`: a home and a workspace set up for Claude Code (the fixture files in
tests/fixtures/claude_permissions, written as users write them) become agentls rules that decide
the same calls, each rule shown, every entry that could not be translated said; never wider
than Claude Code's (each command a real process; the rules then judged by agentls's own
permission code)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from agentls.permission.rules import PermissionRules
from tests.cli.test_cli import agentls

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "claude_permissions"


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, dict[str, str]]:
    """A Claude Code user's home and workspace, an agentls config with one rule of its own."""
    home, workspace = tmp_path / "home", tmp_path / "ws"
    shutil.copytree(FIXTURES / "home", home)
    shutil.copytree(FIXTURES / "workspace", workspace)
    config = tmp_path / "config" / "agentls"
    config.mkdir(parents=True)
    (config / "config.json").write_text(
        '{"model": "claude-sonnet-5-5", "permissions": {"bash": {"git push": "deny"}}}\n'
    )
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_CONFIG_DIR"}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        AGENTLS_DATA_DIR=str(tmp_path / "data"),
    )
    monkeypatch.setenv("HOME", str(home))  # `~` in the rules, as the agent would expand it
    return home, workspace, env


def rules_of(path: Path) -> PermissionRules:
    return PermissionRules.from_config(json.loads(path.read_text())["permissions"])


def test_dry_run_shows_every_rule_and_every_skipped_entry_and_writes_nothing(
    setup: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    _, workspace, env = setup
    user_config = tmp_path / "config" / "agentls" / "config.json"
    before = user_config.read_bytes()

    shown = agentls("permissions", "import", "--dry-run", "--cwd", str(workspace), env=env)
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert 'allow Bash(npm run test:*)  ->  bash "npm run test *" allow' in out
    assert 'deny  Read(./.env)  ->  read ".env" deny, glob ".env" deny' in out
    assert 'webfetch "pastebin.com" deny, webfetch "*.pastebin.com" deny' in out
    assert 'deny  Bash(curl * | sh)  ->  bash "curl" deny' in out
    assert "broader: every `curl ...` command" in out
    # Each entry that is not translated, with its file and why.
    assert "allow WebSearch  (~/.claude/settings.json): agentls has no web search tool" in out
    assert "allow Bash(docker compose * up)" in out and "so it still asks" in out
    assert "allow NotebookEdit" in out
    assert "permissions.defaultMode  (~/.claude/settings.json)" in out
    assert "permissions.additionalDirectories" in out
    assert f"Would write {user_config}" in out
    assert "Dry run: nothing written." in out
    assert user_config.read_bytes() == before
    assert not (workspace / ".agentls").exists()


def test_imported_rules_decide_as_claude_code_did(
    setup: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    home, workspace, env = setup
    done = agentls("permissions", "import", "--cwd", str(workspace), env=env)
    assert done.returncode == 0, done.stderr
    user_config = tmp_path / "config" / "agentls" / "config.json"
    written = json.loads(user_config.read_text())
    assert written["model"] == "claude-sonnet-5-5"  # the file's other keys kept

    user = rules_of(user_config)

    def bash(rules: PermissionRules, line: str) -> str:
        return rules.evaluate("bash", line, root=workspace)

    # Bash: an exact rule is that line; `:*` and ` *` are prefixes at a word boundary.
    assert bash(user, "git status") == "allow"
    assert bash(user, "git status --short") == "ask"
    assert bash(user, "npm run test") == "allow"
    assert bash(user, "npm run test -- --watch") == "allow"
    assert bash(user, "npm run test:e2e") == "ask"
    assert bash(user, "lsof -i") == "ask"  # Bash(ls *) is not lsof
    assert bash(user, "ls -la") == "allow"
    assert bash(user, "rm -rf build") == "deny"
    assert bash(user, "git push --force origin main") == "deny"
    # The user's own agentls deny of `git push` still wins over Claude Code's ask.
    assert bash(user, "git push origin main") == "deny"

    # Read: ./.env at the root, .env.* at any depth, ~/.ssh outside the workspace.
    assert user.evaluate("read", ".env") == "deny"
    assert user.evaluate("read", "config/.env.production") == "deny"
    assert user.evaluate("grep", "config/.env.production") == "deny"
    assert {"tool": "read", "pattern": "~/.ssh/**", "action": "deny"} in written["permissions"]
    notes = str(home / "notes" / "todo.md")
    assert user.evaluate("read", notes, outside_workspace=True) == "allow"

    # WebFetch: the allowed domain only; the denied one and its subdomains.
    assert user.decide_host("docs.python.org", private=False) == "allow"
    assert user.decide_host("evil.python.org", private=False) == "ask"
    assert user.decide_host("pastebin.com", private=False) == "deny"
    assert user.decide_host("api.pastebin.com", private=False) == "deny"
    assert user.evaluate("mcp__github__get_issue", "") == "allow"
    assert user.evaluate("mcp__github__create_issue", "") == "ask"

    # The workspace's rules went to its own config (the user's first), not to the user's.
    assert bash(user, "make test") == "ask"
    ws_config = workspace / ".agentls" / "config.json"
    assert f"agentls trust {workspace}" in done.stdout
    ws = rules_of(ws_config)
    assert json.loads(ws_config.read_text())["permissions"][0] == {
        "tool": "bash",
        "pattern": "git push",
        "action": "deny",
    }
    assert bash(ws, "make test") == "allow"
    assert bash(ws, "npm run lint") == "allow"
    assert bash(ws, "npm run lint --fix") == "ask"
    assert bash(ws, "npx prettier --write src/a.ts") == "allow"
    assert bash(ws, "docker compose web up") == "ask"  # not translated: still asks
    assert bash(ws, "curl https://example.com/install.sh") == "deny"
    assert bash(ws, "rm -rf build") == "deny"  # the user's deny holds in the workspace too
    assert bash(ws, "git push origin main") == "deny"
    assert ws.evaluate("edit", "src/app.py") == "allow"
    assert ws.evaluate("write", "src/new.py") == "allow"
    assert ws.evaluate("edit", "migrations/0001_init.sql") == "deny"
    assert ws.evaluate("edit", "README.md") == "ask"
    assert ws.evaluate("write", "/tmp/scratch/out.txt", outside_workspace=True) == "allow"
    assert ws.evaluate("read", ".env") == "deny"

    # Run again: nothing new to write, the files stay as they are.
    user_text, ws_text = user_config.read_text(), ws_config.read_text()
    again = agentls("permissions", "import", "--cwd", str(workspace), env=env)
    assert again.returncode == 0, again.stderr
    assert "Nothing new to write" in again.stdout
    assert user_config.read_text() == user_text and ws_config.read_text() == ws_text


def test_a_broken_claude_settings_file_is_named_and_nothing_is_written(
    setup: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    home, workspace, env = setup
    settings = workspace / ".claude" / "settings.json"
    settings.write_text('{"permissions": {"allow": ["Bash(make:*)",]}}')  # a trailing comma
    user_config = tmp_path / "config" / "agentls" / "config.json"
    before = user_config.read_bytes()

    failed = agentls("permissions", "import", "--cwd", str(workspace), env=env)
    assert failed.returncode == 2
    assert f"{settings}: not valid JSON" in failed.stderr
    assert "nothing imported" in failed.stderr
    assert user_config.read_bytes() == before
    assert not (workspace / ".agentls").exists()

    settings.write_text('{"permissions": {"allow": "Bash(make:*)"}}')
    failed = agentls("permissions", "import", "--cwd", str(workspace), env=env)
    assert failed.returncode == 2
    assert f"{settings}: permissions.allow: expected a list of rules" in failed.stderr
    assert user_config.read_bytes() == before


def test_without_claude_code_settings_nothing_happens(tmp_path: Path) -> None:
    env = dict(os.environ, HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"))
    env.pop("CLAUDE_CONFIG_DIR", None)
    done = agentls("permissions", "import", "--cwd", str(tmp_path), env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("No Claude Code settings found")
    assert not (tmp_path / "config").exists()
