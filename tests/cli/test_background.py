"""`agentls run --background` and `agentls background list|diff|merge|remove`: real processes, a
real git repository and the local Messages API; each session edits only its own worktree."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentls.session import background as bg
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.cli.test_cli import agentls
from tests.git_support import committed_repo, git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return committed_repo(tmp_path / "repo", {"app.py": "X = 1\n"})


@pytest.fixture
def records(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process reads the same background records as the agentls processes it starts; a
    run still going when the test ends (it failed) is killed."""
    monkeypatch.setenv("AGENTLS_DATA_DIR", env["AGENTLS_DATA_DIR"])
    yield
    for record in bg.load_all():
        if bg.state_of(record)[0] == "running":
            os.killpg(record.pid, signal.SIGKILL)


def first_prompt(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") for b in content if b.get("type") == "text")


def answered_tool(body: dict[str, Any]) -> bool:
    last = body["messages"][-1]["content"]
    return isinstance(last, list) and any(b.get("type") == "tool_result" for b in last)


def each_task_writes(gate: threading.Event | None = None) -> Callable[[dict[str, Any]], Any]:
    """The model: a prompt "task NAME" writes NAME.txt (its first reply held until gate is set),
    then says it is done."""

    def answer(body: dict[str, Any]) -> Any:
        name = first_prompt(body).split("task ", 1)[1].split()[0]
        if answered_tool(body):
            return reply(text(f"wrote {name}"))
        return reply(tool_use("write", {"path": f"{name}.txt", "content": name}), hold=gate)

    return answer


def wait_for(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 120  # a detached run starting on a loaded machine
    while not check():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)


def states() -> dict[str, str]:
    return {r.branch: bg.state_of(r)[0] for r in bg.load_all()}


def start(repo: Path, env: dict[str, str], prompt: str, *more: str) -> dict[str, str]:
    proc = agentls("run", "--background", "--yes", *more, prompt, env=env, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    fields = dict(line.split(None, 1) for line in proc.stdout.splitlines())
    fields["stderr"] = proc.stderr
    return fields


@pytest.mark.usefixtures("records")
def test_three_background_sessions_edit_only_their_worktrees_and_a_fourth_is_refused(
    api: MessagesAPIServer, env: dict[str, str], repo: Path
) -> None:
    gate = threading.Event()
    api.default = each_task_writes(gate)
    (repo / "app.py").write_text("X = 'mine, not committed'\n")
    try:
        started = [start(repo, env, f"task {name} please") for name in ("alpha", "beta", "gamma")]
        assert [s["branch"] for s in started] == [
            "agentls/task-alpha-please",
            "agentls/task-beta-please",
            "agentls/task-gamma-please",
        ]
        assert "uncommitted changes" in started[0]["stderr"]
        wait_for(lambda: len(api.all_requests) == 3, "the three runs asked the model")
        assert set(states().values()) == {"running"}

        fourth = agentls("run", "--background", "--yes", "task delta", env=env, cwd=repo)
        assert fourth.returncode == 1
        assert "3 background sessions are running already (backgroundLimit is 3)" in (fourth.stderr)
        assert len(bg.load_all()) == 3
    finally:
        gate.set()
        api.release_holds()
    wait_for(lambda: set(states().values()) == {"done"}, "all three done")

    for s, name in zip(started, ("alpha", "beta", "gamma"), strict=True):
        tree = Path(s["worktree"])
        assert (tree / f"{name}.txt").read_text() == name
        assert sorted(p.name for p in tree.glob("*.txt")) == [f"{name}.txt"]
        assert (tree / "app.py").read_text() == "X = 1\n"  # from HEAD, not the dirty tree
    assert not list(repo.glob("*.txt"))  # the user's tree is untouched
    assert (repo / "app.py").read_text() == "X = 'mine, not committed'\n"

    listed = agentls("background", "list", "--json", env=env, cwd=repo)
    assert listed.returncode == 0, listed.stderr
    items = {i["branch"]: i for i in json.loads(listed.stdout)}
    alpha = items["agentls/task-alpha-please"]
    assert alpha["state"] == "done"
    assert alpha["changedFiles"] == [{"path": "alpha.txt", "added": 1, "removed": 0}]
    assert alpha["cost"].startswith("$")

    sessions = agentls("sessions", env=env, cwd=repo)
    assert "Background sessions" in sessions.stdout
    assert "agentls/task-beta-please" in sessions.stdout and "1 file: beta.txt" in sessions.stdout
    as_json = json.loads(agentls("sessions", "--json", env=env, cwd=repo).stdout)
    assert {i["background"]["state"] for i in as_json} == {"done"}


@pytest.mark.usefixtures("records")
def test_a_killed_background_run_leaves_its_worktree_branch_and_session_and_resumes(
    api: MessagesAPIServer, env: dict[str, str], repo: Path
) -> None:
    gate = threading.Event()
    api.default = each_task_writes(gate)
    try:
        s = start(repo, env, "task kappa")
        wait_for(lambda: len(api.all_requests) == 1, "the run asked the model")
        record = bg.find(s["session"])
        os.killpg(record.pid, signal.SIGKILL)
        wait_for(lambda: bg.state_of(record)[0] != "running", "the run is gone")
    finally:
        gate.set()
        api.release_holds()
    state, reason = bg.state_of(record)
    assert state == "failed" and reason is not None and "interrupted" in reason
    assert Path(s["worktree"]).is_dir()
    assert git(repo, "branch", "--list", "agentls/task-kappa").strip()

    api.default = reply(text("unused"))
    here = agentls("run", "--session", s["session"], "--yes", "go on", env=env, cwd=repo)
    assert here.returncode == 2 and "is a background session working in" in here.stderr
    api.enqueue(reply(text("Going on where I stopped.")))
    resumed = agentls(
        "run", "--session", s["session"], "--yes", "go on", env=env, cwd=Path(s["worktree"])
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "Going on where I stopped." in resumed.stdout
    assert first_prompt(api.requests[-1].body).startswith("task kappa")  # its history

    # Or detached again: its run's result line makes it done.
    api.enqueue(reply(text("Finished now.")))
    again = agentls("background", "resume", "--yes", s["session"], env=env, cwd=repo)
    assert again.returncode == 0, again.stderr
    wait_for(lambda: bg.state_of(bg.find(s["session"]))[0] == "done", "the resumed run done")
    last = api.requests[-1].body["messages"][-1]["content"]
    assert "Go on with the task from where you stopped." in json.dumps(last)


@pytest.mark.usefixtures("records")
def test_merge_is_refused_on_a_dirty_tree_and_done_on_a_clean_one_then_remove(
    api: MessagesAPIServer, env: dict[str, str], repo: Path
) -> None:
    api.default = each_task_writes()
    s = start(repo, env, "task omega")
    wait_for(lambda: states() == {"agentls/task-omega": "done"}, "the run done")
    diff = agentls("background", "diff", s["session"], env=env, cwd=repo)
    assert "+omega" in diff.stdout and "omega.txt" in diff.stdout

    head = git(repo, "rev-parse", "HEAD")
    (repo / "app.py").write_text("X = 'typing'\n")
    refused = agentls("background", "merge", s["session"], env=env, cwd=repo)
    assert refused.returncode == 1
    assert "uncommitted changes" in refused.stderr and "nothing was merged" in refused.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    assert (repo / "app.py").read_text() == "X = 'typing'\n"
    assert not (repo / "omega.txt").exists()

    git(repo, "commit", "--quiet", "-am", "my own change")
    merged = agentls("background", "merge", s["session"], env=env, cwd=repo)
    assert merged.returncode == 0, merged.stderr
    assert "merged agentls/task-omega into main" in merged.stdout
    assert (repo / "omega.txt").read_text() == "omega"
    assert (repo / "app.py").read_text() == "X = 'typing'\n"
    assert len(git(repo, "log", "-1", "--format=%P").split()) == 2  # --no-ff: a merge commit

    removed = agentls("background", "remove", s["session"], env=env, cwd=repo)
    assert removed.returncode == 0, removed.stderr
    assert not Path(s["worktree"]).exists()
    assert not git(repo, "branch", "--list", "agentls/task-omega").strip()
    assert bg.load_all() == []


@pytest.mark.usefixtures("records")
def test_remove_refuses_unmerged_work_without_force_and_a_clash_gets_a_new_branch(
    api: MessagesAPIServer, env: dict[str, str], repo: Path
) -> None:
    api.default = each_task_writes()
    first = start(repo, env, "task sigma")
    second = start(repo, env, "task sigma")
    assert second["branch"] == "agentls/task-sigma-2"
    assert (
        "branch agentls/task-sigma exists already: this one is agentls/task-sigma-2"
        in (second["stderr"])
    )
    wait_for(lambda: set(states().values()) == {"done"}, "both done")

    refused = agentls("background", "remove", first["session"], env=env, cwd=repo)
    assert refused.returncode == 1 and "not merged" in refused.stderr
    assert Path(first["worktree"]).is_dir()
    forced = agentls("background", "remove", "--force", first["session"], env=env, cwd=repo)
    assert forced.returncode == 0, forced.stderr
    assert not Path(first["worktree"]).exists()
    assert Path(second["worktree"]).is_dir()


@pytest.mark.usefixtures("records")
def test_apply_keeps_only_the_files_named_from_a_finished_one(
    api: MessagesAPIServer, env: dict[str, str], repo: Path
) -> None:
    def two_files(body: dict[str, Any]) -> Any:
        if answered_tool(body):
            return reply(text("wrote both"))
        return reply(
            tool_use("write", {"path": "keep.txt", "content": "keep"}),
            tool_use("write", {"path": "drop.txt", "content": "drop"}),
        )

    api.default = two_files
    s = start(repo, env, "task pair")
    wait_for(lambda: states() == {"agentls/task-pair": "done"}, "the run done")
    kept = agentls("background", "apply", s["session"], "keep.txt", env=env, cwd=repo)
    assert kept.returncode == 0, kept.stderr
    assert "applied keep.txt (staged" in kept.stdout
    assert (repo / "keep.txt").read_text() == "keep"
    assert not (repo / "drop.txt").exists()
    assert git(repo, "status", "--porcelain").splitlines() == ["A  keep.txt"]
    unknown = agentls("background", "apply", s["session"], "app.py", env=env, cwd=repo)
    assert unknown.returncode == 1 and "not changed by the session: app.py" in unknown.stderr
    hunk = agentls(
        "background", "apply", s["session"], "drop.txt", "--hunk", "1", env=env, cwd=repo
    )
    assert hunk.returncode == 1 and "no hunk 1: its diff has 1" in hunk.stderr


@pytest.mark.usefixtures("records")
def test_bash_in_a_background_session_writes_in_its_worktree_only(
    api: MessagesAPIServer, env: dict[str, str], repo: Path
) -> None:
    outside = repo / "escaped.txt"  # the user's tree, outside the session's root

    def run_bash(body: dict[str, Any]) -> Any:
        if answered_tool(body):
            return reply(text("ran it"))
        escape = f"python3 -c \"open('{outside}', 'w').write('escaped')\""
        return reply(
            tool_use("bash", {"command": "echo made > made.txt"}),
            tool_use("bash", {"command": escape}),
        )

    api.default = run_bash
    s = start(repo, env, "task shell")
    wait_for(lambda: states() == {"agentls/task-shell": "done"}, "the run done")
    assert (Path(s["worktree"]) / "made.txt").read_text() == "made\n"
    assert not outside.exists()  # the sandbox: only its worktree (its root) is written through
