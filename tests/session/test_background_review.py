"""The review of a finished background session (agentls.session.background_review) on the disk's
files: a protected path or a binary file is reported and never written, a file the session deleted
is deleted when kept whole, and a running session is refused."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agentls.config import Settings
from agentls.session import background as bg
from agentls.session import background_review as review
from agentls.verify.workspace import VerifiedWorkspace
from agentls.workspace import worktree as wt

GIT = ("git", "-c", "user.name=Test", "-c", "user.email=test@example.com")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


@pytest.fixture(autouse=True)
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(tmp_path / "data"))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "old.txt").write_text("going\n")
    (root / "keep.txt").write_text("a\n")
    git(root, "init", "--quiet", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "--quiet", "-m", "first")
    return root.resolve()


def finished(repo: Path, tmp_path: Path, finish: str = "end_turn") -> bg.BackgroundRecord:
    tree = wt.create(repo, "tidy up")
    (tree.path / "old.txt").unlink()
    (tree.path / ".agentls").mkdir()
    (tree.path / ".agentls" / "config.json").write_text('{"permissions": {"bash": "allow"}}\n')
    (tree.path / "logo.bin").write_bytes(b"\x00\xff\x00binary")
    log = bg.records_dir() / "ses_tidy.log"  # where a run's log is (a record says)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(json.dumps({"type": "result", "finishReason": finish}) + "\n")
    record = bg.BackgroundRecord(
        session_id="ses_tidy", repo_root=str(repo), worktree=str(tree.path),
        branch=tree.branch, base=tree.base, prompt="tidy up", log=str(log),
    )  # fmt: skip
    bg.save(record)
    return record


def workspace(root: Path) -> VerifiedWorkspace:
    return VerifiedWorkspace.on(None, root, lambda: Settings())


async def test_protected_and_binary_files_are_reported_and_a_deleted_file_is_deleted(
    repo: Path, tmp_path: Path
) -> None:
    record = finished(repo, tmp_path)
    files = {f.path: f for f in review.branch_files(record)}
    assert files["logo.bin"].binary and files["logo.bin"].hunks() == []
    assert files["old.txt"].branch is None
    keep: dict[str, list[int] | None] = {".agentls/config.json": None, "logo.bin": None}
    keep["old.txt"] = None
    brought = await review.bring_in(record, keep, workspace(repo))
    assert brought.applied == {"old.txt": [0]}
    reasons = {path: why for path, _, why in brought.conflicts}
    assert "protected" in reasons[".agentls/config.json"]
    assert "binary" in reasons["logo.bin"]
    assert not (repo / "old.txt").exists()
    assert not (repo / ".agentls").exists() and not (repo / "logo.bin").exists()


async def test_a_file_the_user_changed_after_the_session_deleted_it_is_left(
    repo: Path, tmp_path: Path
) -> None:
    record = finished(repo, tmp_path)
    (repo / "old.txt").write_text("going, but mine now\n")
    brought = await review.bring_in(record, {"old.txt": None}, workspace(repo))
    assert brought.applied == {}
    assert brought.conflicts == [("old.txt", [0], "you changed the file it deleted")]
    assert (repo / "old.txt").read_text() == "going, but mine now\n"


async def test_a_failed_session_can_be_brought_in_but_a_missing_worktree_cannot(
    repo: Path, tmp_path: Path
) -> None:
    record = finished(repo, tmp_path, finish="error")
    assert bg.state_of(record)[0] == "failed"
    assert (await review.bring_in(record, {"old.txt": None}, workspace(repo))).applied
    review.remove(record, force=True)
    with pytest.raises(bg.BackgroundError, match="worktree .* is gone"):
        review.branch_files(record)


async def test_a_clashing_hunk_comes_back_with_its_three_texts_and_the_marked_merge(
    repo: Path, tmp_path: Path
) -> None:
    base = "".join(f"line {n}\n" for n in range(1, 9))
    (repo / "keep.txt").write_text(base)
    git(repo, "commit", "--quiet", "-am", "eight lines")
    record = finished(repo, tmp_path)
    branch = base.replace("line 2\n", "line two\n").replace("line 7\n", "line seven\n")
    (Path(record.worktree) / "keep.txt").write_text(branch)
    mine = base.replace("line 2\n", "my line 2\n")
    (repo / "keep.txt").write_text(mine)
    brought = await review.bring_in(record, {"keep.txt": None}, workspace(repo))
    # The hunk on line 7 fits and is written; the one on line 2 clashes with the user's line.
    assert brought.applied == {"keep.txt": [1]}
    assert brought.conflicts == [("keep.txt", [0], "your text there differs from its base")]
    texts = brought.merges["keep.txt"]
    assert texts.target == repo / "keep.txt"
    assert texts.base == base
    assert (
        texts.yours == mine.replace("line 7\n", "line seven\n") == (repo / "keep.txt").read_text()
    )
    assert texts.theirs == base.replace("line 2\n", "line two\n")  # only the clashing hunk
    assert texts.marked == texts.yours.replace(
        "my line 2\n", f"<<<<<<< yours\nmy line 2\n=======\nline two\n>>>>>>> {record.branch}\n"
    )
    # Nothing of the conflict was written: the user's line stands.
    assert "<<<<<<<" not in (repo / "keep.txt").read_text()
    # A file without a clash of lines (a protected path, a binary one) has no merge texts.
    other = await review.bring_in(record, {"logo.bin": None}, workspace(repo))
    assert other.merges == {}
