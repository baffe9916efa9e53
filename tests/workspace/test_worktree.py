"""Git worktrees of background sessions (agentls.workspace.worktree) on real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.workspace import worktree as wt
from tests.git_support import committed_repo, git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return committed_repo(tmp_path / "repo", {"a.txt": "one\n"})


@pytest.mark.parametrize(
    ("prompt", "slug"),
    [
        ("Fix the login bug, please!", "fix-the-login-bug-please"),
        ("Ünïcode → only ascii words 42 stay here and beyond", "n-code-only-ascii-words-42"),
        ("!!!", "task"),
    ],
)
def test_a_slug_is_the_prompts_first_words_safe_for_a_branch(prompt: str, slug: str) -> None:
    assert wt.slug_of(prompt) == slug


def test_a_worktree_is_made_from_head_under_the_common_dir_on_its_own_branch(repo: Path) -> None:
    (repo / "a.txt").write_text("not committed\n")
    tree = wt.create(repo, "add a feature")
    assert tree.path == (repo / ".git" / "agentls-worktrees" / "add-a-feature").resolve()
    assert tree.branch == "agentls/add-a-feature"
    assert tree.base == git(repo, "rev-parse", "HEAD").strip()
    assert (tree.path / "a.txt").read_text() == "one\n"
    assert git(tree.path, "rev-parse", "--abbrev-ref", "HEAD").strip() == tree.branch
    assert wt.uncommitted(repo) == [" M a.txt"]


def test_a_clash_with_a_branch_or_a_folder_gets_the_next_number(repo: Path) -> None:
    git(repo, "branch", "agentls/fix-it")
    first = wt.create(repo, "fix it")
    (repo / ".git" / "agentls-worktrees" / "fix-it-3").mkdir()
    second = wt.create(repo, "fix it")
    assert (first.slug, first.requested_slug) == ("fix-it-2", "fix-it")
    assert second.branch == "agentls/fix-it-4"


def test_a_configured_folder_holds_the_worktree(repo: Path, tmp_path: Path) -> None:
    tree = wt.create(repo, "elsewhere", tmp_path / "trees")
    assert tree.path == (tmp_path / "trees" / "elsewhere").resolve()


def test_changed_files_and_diff_include_new_files_and_leave_the_index_alone(repo: Path) -> None:
    tree = wt.create(repo, "change")
    (tree.path / "a.txt").write_text("one\ntwo\n")
    (tree.path / "new.txt").write_text("fresh\n")
    changed = wt.changed_files(tree.path, tree.base)
    assert changed == [wt.ChangedFile("a.txt", 1, 0), wt.ChangedFile("new.txt", 1, 0)]
    assert "+fresh" in wt.diff(tree.path, tree.base)
    assert "?? new.txt" in wt.uncommitted(tree.path)  # still untracked: its index is untouched


def test_merge_is_refused_on_uncommitted_changes_and_a_conflict_is_named(repo: Path) -> None:
    tree = wt.create(repo, "conflict")
    (tree.path / "a.txt").write_text("theirs\n")
    assert wt.commit_all(tree.path, "theirs")
    (repo / "a.txt").write_text("mine\n")
    with pytest.raises(wt.WorktreeError, match="uncommitted changes"):
        wt.merge(repo, tree.branch)
    git(repo, "commit", "--quiet", "-am", "mine")
    with pytest.raises(wt.WorktreeError, match=r"conflicts in a\.txt"):
        wt.merge(repo, tree.branch)


def test_remove_deletes_the_worktree_and_the_branch(repo: Path) -> None:
    tree = wt.create(repo, "gone")
    (tree.path / "scratch.txt").write_text("x")
    wt.remove(repo, tree.path, tree.branch)
    assert not tree.path.exists()
    assert not git(repo, "branch", "--list", tree.branch).strip()


def test_outside_a_repository_it_says_so(tmp_path: Path) -> None:
    with pytest.raises(wt.WorktreeError, match="not in a git repository"):
        wt.repository_root(tmp_path)


def test_apply_files_keeps_only_the_files_named_staged_and_refuses_mixing(repo: Path) -> None:
    (repo / "b.txt").write_text("bee\n")
    git(repo, "add", "b.txt")
    git(repo, "commit", "--quiet", "-m", "b")
    tree = wt.create(repo, "two files")
    (tree.path / "a.txt").write_text("one\nkept\n")
    (tree.path / "b.txt").write_text("bee\nnot kept\n")
    (tree.path / "c.txt").write_text("new and kept\n")
    (repo / "b.txt").write_text("bee\nmine\n")  # the user's own, not committed

    with pytest.raises(wt.WorktreeError, match=r"uncommitted changes in b\.txt"):
        wt.apply_files(tree.path, tree.base, repo, ["a.txt", "b.txt"])
    with pytest.raises(wt.WorktreeError, match=r"not changed by the session: d\.txt"):
        wt.apply_files(tree.path, tree.base, repo, ["d.txt"])
    assert (repo / "a.txt").read_text() == "one\n"  # nothing applied by a refusal

    assert wt.apply_files(tree.path, tree.base, repo, ["a.txt", "c.txt"]) == ["a.txt", "c.txt"]
    assert (repo / "a.txt").read_text() == "one\nkept\n"
    assert (repo / "c.txt").read_text() == "new and kept\n"
    assert (repo / "b.txt").read_text() == "bee\nmine\n"
    assert sorted(wt.uncommitted(repo)) == [" M b.txt", "A  c.txt", "M  a.txt"]


def test_apply_one_hunk_of_a_file_keeps_only_that_change(repo: Path) -> None:
    lines = [f"line {n}\n" for n in range(40)]
    (repo / "long.txt").write_text("".join(lines))
    git(repo, "add", "long.txt")
    git(repo, "commit", "--quiet", "-m", "long")
    tree = wt.create(repo, "two hunks")
    changed = list(lines)
    changed[2] = "first change\n"
    changed[35] = "second change\n"
    (tree.path / "long.txt").write_text("".join(changed))

    with pytest.raises(wt.WorktreeError, match=r"no hunk 2: its diff has 2"):
        wt.apply_files(tree.path, tree.base, repo, ["long.txt"], {2})
    wt.apply_files(tree.path, tree.base, repo, ["long.txt"], {1})
    kept = (repo / "long.txt").read_text()
    assert "second change\n" in kept and "first change" not in kept
    assert kept.count("\n") == 40
