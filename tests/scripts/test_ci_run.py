"""scripts/ci_run.py (the action.yml's work) end to end: a real git repository with a bare remote,
an event payload, the real `agentls run --json` against the local Messages API; and action.yml
against the published schema of action metadata."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from messages_api import MessagesAPIServer, reply, text, tool_use

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "ci_run.py"
PERMISSIONS = {"permissions": {"edit": "allow"}}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A clone of a bare remote whose main has m.py and the owner's permissions file."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Owner")
    git(repo, "config", "user.email", "owner@example.com")
    (repo / "m.py").write_text("X = 1\n")
    (repo / ".agentls").mkdir()
    (repo / ".agentls" / "ci-permissions.json").write_text(json.dumps(PERMISSIONS))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "-u", "origin", "main")
    return repo


def event(tmp_path: Path, body: str = "/agentls set X to 2", association: str = "OWNER") -> Path:
    payload = {
        "action": "created",
        "issue": {"number": 7, "title": "Set X to 2!", "body": "X should be 2."},
        "comment": {"body": body, "author_association": association},
        "repository": {"default_branch": "main"},
    }
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload))
    return path


def ci_run(
    env: dict[str, str], repo: Path, payload: Path, out: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in env.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN")}
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--repo", str(repo), "--event", str(payload)]
        + ["--out", str(out), *args],
        env=environment,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


def user_text(request: Any) -> str:
    content = request.body["messages"][0]["content"]
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if b["type"] == "text")


def test_pr_mode_pushes_a_branch_with_the_edit_and_writes_the_pull_request_body(
    api: MessagesAPIServer, env: dict[str, str], checkout: Path, tmp_path: Path
) -> None:
    api.enqueue(
        reply(tool_use("read", {"path": "m.py"})),
        reply(tool_use("edit", {"path": "m.py", "old_string": "X = 1", "new_string": "X = 2"})),
        reply(text("Set X to 2 in m.py.")),
    )
    out = tmp_path / "out"
    proc = ci_run(env, checkout, event(tmp_path), out, "--mode", "pr", "--yes")
    assert proc.returncode == 0, proc.stderr
    # The prompt is the comment's text after /agentls.
    assert user_text(api.requests[0]).strip().endswith("set X to 2")
    remote = tmp_path / "remote.git"
    branch = "agentls/issue-7-set-x-to-2"
    assert git(remote, "show", f"{branch}:m.py") == "X = 2\n"
    assert git(remote, "show", "main:m.py") == "X = 1\n"
    assert "agentls: Set X to 2! (#7)" in git(remote, "log", "-1", "--format=%s", branch)
    pr_body = (out / "pr-body.md").read_text()
    assert "For #7." in pr_body and "Set X to 2 in m.py." in pr_body
    assert "Cost: $" in pr_body and "end_turn" in pr_body
    export = (out / "session.md").read_text()
    assert "set X to 2" in export and export in pr_body
    assert "skipped `gh pr create`" in proc.stderr


def test_gh_opens_the_pull_request_and_the_agent_never_sees_the_github_token(
    api: MessagesAPIServer, env: dict[str, str], checkout: Path, tmp_path: Path
) -> None:
    """GitHub cannot be reached here: `gh` is a stand-in on PATH that records its arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "gh.log"
    gh = bin_dir / "gh"
    gh.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {log}\n')
    gh.chmod(0o755)
    api.enqueue(
        reply(tool_use("bash", {"command": "printenv GH_TOKEN GITHUB_TOKEN; echo checked"})),
        reply(tool_use("read", {"path": "m.py"})),
        reply(tool_use("edit", {"path": "m.py", "old_string": "X = 1", "new_string": "X = 2"})),
        reply(text("Done.")),
    )
    out = tmp_path / "out"
    environment = dict(env, PATH=f"{bin_dir}:{env['PATH']}", GH_TOKEN="gh-secret-value")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--repo", str(checkout), "--event", str(event(tmp_path))]
        + ["--out", str(out), "--yes"],
        env=environment,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    bash_result = [
        b for b in api.requests[1].body["messages"][-1]["content"] if b["type"] == "tool_result"
    ][0]
    assert "checked" in str(bash_result["content"])
    assert "gh-secret-value" not in json.dumps(api.requests[-1].body)
    assert log.read_text().splitlines() == [
        "pr",
        "create",
        "--base",
        "main",
        "--head",
        "agentls/issue-7-set-x-to-2",
        "--title",
        "agentls: Set X to 2!",
        "--body-file",
        str(out / "pr-body.md"),
    ]


def test_a_second_run_for_the_same_issue_gets_its_own_branch(
    api: MessagesAPIServer, env: dict[str, str], checkout: Path, tmp_path: Path
) -> None:
    git(checkout, "push", "-q", "origin", "main:refs/heads/agentls/issue-7-set-x-to-2")
    api.enqueue(
        reply(tool_use("read", {"path": "m.py"})),
        reply(tool_use("edit", {"path": "m.py", "old_string": "X = 1", "new_string": "X = 2"})),
        reply(text("Done.")),
    )
    proc = ci_run(env, checkout, event(tmp_path), tmp_path / "out", "--yes")
    assert proc.returncode == 0, proc.stderr
    remote = tmp_path / "remote.git"
    assert git(remote, "show", "agentls/issue-7-set-x-to-2-2:m.py") == "X = 2\n"
    assert git(remote, "show", "agentls/issue-7-set-x-to-2:m.py") == "X = 1\n"


def test_comment_mode_writes_the_answer_and_pushes_nothing(
    api: MessagesAPIServer, env: dict[str, str], checkout: Path, tmp_path: Path
) -> None:
    api.enqueue(reply(text("X is 1, set in m.py.")))
    out = tmp_path / "out"
    payload = event(tmp_path, body="/agentls what is X?")
    proc = ci_run(env, checkout, payload, out, "--mode", "comment")
    assert proc.returncode == 0, proc.stderr
    comment = (out / "comment.md").read_text()
    assert "X is 1, set in m.py." in comment and "Cost: $" in comment
    assert (out / "session.md").read_text() in comment
    assert not (out / "pr-body.md").exists()
    assert "agentls/" not in git(tmp_path / "remote.git", "branch", "--list")
    assert "skipped `gh issue comment`" in proc.stderr


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ("untracked", "is not tracked by git"),
        ("modified", "differs from the committed one"),
        ("unpushed", "is not the one in origin/main"),
        ("missing", "--yes needs the owner's permissions file"),
    ],
)
def test_yes_is_refused_without_the_owners_committed_permissions_file(
    api: MessagesAPIServer,
    env: dict[str, str],
    checkout: Path,
    tmp_path: Path,
    change: str,
    said: str,
) -> None:
    rules = checkout / ".agentls" / "ci-permissions.json"
    everything = json.dumps({"permissions": {"*": "allow"}})
    if change == "untracked":
        git(checkout, "rm", "-q", "--cached", str(rules))
        git(checkout, "commit", "-q", "-m", "untrack")
        rules.write_text(everything)
    elif change == "modified":
        rules.write_text(everything)
    elif change == "unpushed":
        rules.write_text(everything)
        git(checkout, "commit", "-q", "-am", "widen, not in the default branch")
    else:
        git(checkout, "rm", "-q", str(rules))
        git(checkout, "commit", "-q", "-m", "no rules")
    proc = ci_run(env, checkout, event(tmp_path), tmp_path / "out", "--yes")
    assert proc.returncode == 2
    assert "agentls-ci: refused:" in proc.stderr and said in proc.stderr
    assert not api.requests  # the model was never asked
    if change != "missing":
        assert rules.read_text() == everything


def test_a_comment_from_someone_outside_the_repository_is_refused(
    api: MessagesAPIServer, env: dict[str, str], checkout: Path, tmp_path: Path
) -> None:
    payload = event(tmp_path, association="NONE")
    proc = ci_run(env, checkout, payload, tmp_path / "out", "--yes")
    assert proc.returncode == 2
    assert "comment's author is NONE" in proc.stderr and not api.requests


def test_the_repositorys_own_config_does_not_allow_what_would_ask(
    api: MessagesAPIServer, env: dict[str, str], checkout: Path, tmp_path: Path
) -> None:
    """A committed .agentls/config.json allowing bash is not confirmed on the runner: without
    --yes the call asks, and no one can answer."""
    (checkout / ".agentls" / "config.json").write_text(
        json.dumps({"permissions": {"bash": "allow"}})
    )
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "allow bash")
    git(checkout, "push", "-q", "origin", "main")
    api.enqueue(reply(tool_use("bash", {"command": "touch made.txt"})), reply(text("Could not.")))
    proc = ci_run(env, checkout, event(tmp_path), tmp_path / "out", "--mode", "comment")
    assert proc.returncode == 0, proc.stderr
    assert not (checkout / "made.txt").exists()
    assert "Could not." in (tmp_path / "out" / "comment.md").read_text()


def action_schema() -> dict[str, Any]:
    path = ROOT / "tests" / "fixtures" / "github_actions" / "github-action.json"
    schema: dict[str, Any] = json.loads(path.read_text())
    return schema


def test_action_yml_is_valid_action_metadata() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    validator = jsonschema.Draft7Validator(action_schema())
    assert [e.message for e in validator.iter_errors(action)] == []
    assert action["runs"]["using"] == "composite"
    # The schema is a real check: a composite step with neither `uses` nor `run` fails it.
    broken = dict(action, runs={"using": "composite", "steps": [{"name": "nothing"}]})
    assert list(validator.iter_errors(broken))


def test_action_yml_runs_the_script_with_inputs_from_the_environment_only() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    run = next(s for s in action["runs"]["steps"] if s.get("id") == "run")
    assert "scripts/ci_run.py" in run["run"]
    # No ${{ }} expression inside the shell text: inputs come as environment variables.
    assert "${{" not in run["run"]
    assert set(run["env"]) >= {"AGENTLS_CI_PROMPT", "AGENTLS_CI_MODE", "AGENTLS_CI_YES"}
    assert any("upload-artifact" in s.get("uses", "") for s in action["runs"]["steps"])


def test_a_labelled_issue_asks_its_title_and_body(
    api: MessagesAPIServer, env: dict[str, str], checkout: Path, tmp_path: Path
) -> None:
    payload = tmp_path / "issue.json"
    issue = {"number": 9, "title": "Explain X", "body": "Where is X set?"}
    payload.write_text(
        json.dumps({"action": "labeled", "issue": issue, "repository": {"default_branch": "main"}})
    )
    api.enqueue(reply(text("In m.py.")))
    out = tmp_path / "out"
    proc = ci_run(env, checkout, payload, out, "--mode", "comment")
    assert proc.returncode == 0, proc.stderr
    assert user_text(api.requests[0]).strip().endswith("Explain X\n\nWhere is X set?")
    assert "In m.py." in (out / "comment.md").read_text()


def test_the_workflow_in_the_docs_passes_only_inputs_the_action_has() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    doc = (ROOT / "docs" / "ci.md").read_text()
    workflow = yaml.safe_load(doc.split("```yaml\n", 1)[1].split("```", 1)[0])
    steps = workflow["jobs"]["agentls"]["steps"]
    step = next(s for s in steps if s.get("uses", "").startswith("OWNER/agentls@"))
    assert step["with"] and set(step["with"]) <= set(action["inputs"])
    assert "ANTHROPIC_API_KEY" in step["env"]
