"""Background sessions: a session that runs on its own, in a new git worktree of the user's
repository on its own branch `agentls/<slug>` (workspace/worktree.py), while the user keeps
working in their tree. Its workspace root is the worktree, so its tools, its bash sandbox and its
edits stay there; the user brings its work in with a merge of the branch, on their command only.

The front end runs the turn (the CLI in a detached `agentls run --cwd WORKTREE --session ID`
process, the LSP server in its own process); this module makes the worktree and the session, carries the repository's trust over,
keeps the cap on how many run at once, and records each one so that it can be listed, diffed,
merged and removed later. A record is a small JSON file per session under the data directory
(beside agentls.db), written before the run starts: a crash or a kill -9 of the run leaves the
record, the worktree, the branch and the stored session, and the session resumes with `agentls
run --cwd WORKTREE --session ID`.

A record's state is read, never kept: "running" while its process lives, then "done" or "failed"
from the run's last JSON line (its log), "failed" with "interrupted" when the run left none (a
kill). "waiting" is a run stopped on a question (mark_waiting): the CLI's detached run writes
its questions beside its log and waits for `agentls background answer` (session/
background_questions.py); the LSP server runs its background sessions in its own process
(lsp/background_run.py, `in_process`) and relays their questions to the editor; their result line
goes to the log as the detached run's does.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentls.config import Settings, load_settings
from agentls.environ_scrub import CREDENTIAL_VARS, child_environment, credential
from agentls.store.paths import default_data_dir
from agentls.trust import TrustStore, TrustStoreError, mcp_json, workspace_config
from agentls.workspace import worktree as wt

BackgroundState = Literal["running", "waiting", "done", "failed"]
RECORDS_DIR = "background"
DONE_REASONS = frozenset({"end_turn", "max_tokens", "refusal"})
TITLE_CHARS = 80
SETUP_TAIL = 20  # lines of a failed backgroundSetup's output shown


class BackgroundError(Exception):
    """A background session cannot be started or changed; the message says why."""


@dataclass
class BackgroundRecord:
    session_id: str
    repo_root: str
    worktree: str
    branch: str
    base: str
    prompt: str
    pid: int = 0
    started_at: int = 0  # ms
    log: str = ""
    # Run inside the process pid (the LSP server, lsp/background_run.py), not a process of its
    # own: running while that process lives and the log has no result line yet.
    in_process: bool = False


@dataclass
class BackgroundStatus:
    record: BackgroundRecord
    state: BackgroundState
    reason: str | None = None  # why it failed, or its finish reason
    # What differs from the base; None when the worktree is gone.
    changed: list[wt.ChangedFile] | None = field(default=None)

    def wire(self) -> dict[str, Any]:
        r = self.record
        return {
            "sessionId": r.session_id,
            "state": self.state,
            "reason": self.reason,
            "branch": r.branch,
            "worktree": r.worktree,
            "repository": r.repo_root,
            "base": r.base,
            "prompt": r.prompt,
            "startedAt": r.started_at,
            "changedFiles": None
            if self.changed is None
            else [{"path": c.path, "added": c.added, "removed": c.removed} for c in self.changed],
        }


@dataclass
class Started:
    record: BackgroundRecord
    notices: list[str]


def records_dir() -> Path:
    return default_data_dir() / RECORDS_DIR


def _record_path(session_id: str) -> Path:
    return records_dir() / f"{session_id}.json"


def save(record: BackgroundRecord) -> None:
    path = _record_path(record.session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(record), indent=1), encoding="utf-8")
    os.replace(tmp, path)


def load_all() -> list[BackgroundRecord]:
    """Every background record, newest first (a file no agentls wrote is skipped)."""
    found = []
    folder = records_dir()
    if not folder.is_dir():
        return []
    for path in folder.glob("*.json"):
        try:
            record = _checked(json.loads(path.read_text(encoding="utf-8")), folder)
        except (OSError, ValueError):
            continue
        if record is not None:
            found.append(record)
    return sorted(found, key=lambda r: r.started_at, reverse=True)


def _checked(data: object, folder: Path) -> BackgroundRecord | None:
    """The record data holds if agentls could have written it, else None: typed fields, a
    session id that is a plain name, its log in the records folder under that name, a commit id
    for base, a background session's branch, absolute paths. A tampered record thereby names no
    file for agentls to write or delete and nothing git would take as an option; what it names
    is checked again before a worktree is written or removed (workspace/worktree.py)."""
    from pydantic import TypeAdapter, ValidationError

    try:
        record = TypeAdapter(BackgroundRecord).validate_python(data)
        wt.commit_id(record.base)
        wt.session_branch(record.branch)
    except (ValidationError, wt.WorktreeError):
        return None
    log = Path(record.log)
    plain = record.session_id.replace("_", "").replace("-", "").isalnum()
    beside = log.name == f"{record.session_id}.log" and log.parent.resolve() == folder.resolve()
    absolute = Path(record.worktree).is_absolute() and Path(record.repo_root).is_absolute()
    return record if plain and record.session_id.isascii() and beside and absolute else None


def find(session_id: str) -> BackgroundRecord:
    """The record of this session id (or a unique prefix of it); KeyError saying which."""
    records = load_all()
    exact = [r for r in records if r.session_id == session_id]
    matches = exact or [r for r in records if r.session_id.startswith(session_id)]
    if len(matches) != 1:
        said = "is not unique" if matches else "is not a background session"
        raise KeyError(f"{session_id} {said} (`agentls background list` lists them)")
    return matches[0]


def forget(record: BackgroundRecord) -> None:
    paths = (_record_path(record.session_id), Path(record.log), Path(record.log + ".err"))
    for path in (*paths, _waiting_mark(record)):
        with contextlib.suppress(OSError):
            if str(path) not in ("", ".", ".err", ".waiting"):
                path.unlink()
    clear_questions(record)


def clear_questions(record: BackgroundRecord) -> None:
    """Remove the questions a detached run wrote and their answers (session/background_questions
    .py), left by a run killed while it waited, and its waiting mark."""
    for pattern in (f"{record.session_id}.q-*.json", f"{record.session_id}.a-*.json"):
        for path in records_dir().glob(pattern):
            with contextlib.suppress(OSError):
                path.unlink()
    mark_waiting(record, False)


def _alive(pid: int, session_id: str) -> bool:
    """Whether the run's process lives (and is that run: a pid may be reused)."""
    if pid <= 0:
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    # Empty: a process changing its program (exec) or exiting; it is not another one yet.
    if cmdline and session_id.encode() not in cmdline:
        return False
    with contextlib.suppress(OSError):  # a zombie (its parent has not reaped it yet) is over
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat[stat.rindex(")") + 2 :].startswith("Z"):
            return False
    return True


def _last_result(log: str) -> dict[str, Any] | None:
    """The run's `result` line (agentls run --json), None if it wrote none."""
    try:
        lines = Path(log).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and item.get("type") == "result":
            return item
    return None


def _waiting_mark(record: BackgroundRecord) -> Path:
    return Path(record.log + ".waiting")


def mark_waiting(record: BackgroundRecord, waiting: bool) -> None:
    """An in-process run (lsp/background_run.py) stopped on a question, or going on: a file
    beside its log, so that every process (`agentls background list`) reads it "waiting"."""
    mark = _waiting_mark(record)
    with contextlib.suppress(OSError):
        if waiting:
            mark.touch()
        else:
            mark.unlink(missing_ok=True)


def state_of(record: BackgroundRecord) -> tuple[BackgroundState, str | None]:
    result = _last_result(record.log) if record.in_process else None
    if result is None and record.in_process and _alive(record.pid, ""):
        return ("waiting" if _waiting_mark(record).exists() else "running"), None
    if not record.in_process and _alive(record.pid, record.session_id):
        return ("waiting" if _waiting_mark(record).exists() else "running"), None
    result = result or _last_result(record.log)
    if result is None:
        return "failed", (
            "interrupted (its run ended without finishing); resume it with "
            f"`agentls run --cwd {record.worktree} --session {record.session_id}`"
        )
    reason = str(result.get("finishReason"))
    if reason in DONE_REASONS:
        return "done", reason
    error = result.get("error")
    said = error.get("message") if isinstance(error, dict) else None
    return "failed", f"{reason}: {said}" if said else reason


def status(record: BackgroundRecord) -> BackgroundStatus:
    state, reason = state_of(record)
    changed = None
    if Path(record.worktree).is_dir():
        try:
            changed = wt.changed_files(Path(record.worktree), record.base)
        except wt.WorktreeError:
            changed = None
    return BackgroundStatus(record, state, reason, changed)


def running() -> list[BackgroundRecord]:
    return [r for r in load_all() if state_of(r)[0] in ("running", "waiting")]


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """One start at a time on this machine, so two cannot both pass the cap."""
    folder = records_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def carry_trust(repo_root: Path, worktree: Path) -> list[str]:
    """Trust the worktree's .agentls/config.json and .mcp.json exactly when the user trusts the
    repository's and the worktree's (checked out from HEAD) is the same content; notices for
    those that stay untrusted (their settings are then ignored, as in any untrusted workspace)."""
    notices = []
    store = TrustStore()
    for of in (workspace_config, mcp_json):
        mine, theirs = of(repo_root), of(worktree)
        if not theirs.is_file():
            continue
        data = theirs.read_bytes()
        try:
            same = mine.is_file() and mine.read_bytes() == data
            if same and store.state(mine, data) == "trusted":
                store.trust(theirs, data)
                continue
        except (OSError, TrustStoreError):
            pass
        notices.append(
            f"the worktree's {theirs.relative_to(worktree)} is not trusted (yours is not, or its "
            "committed content differs from your copy): the session runs as in an untrusted "
            f"workspace; `agentls trust {worktree}` trusts it"
        )
    return notices


def worktree_folder(settings: Settings) -> Path | None:
    folder = settings.background_worktree_folder
    return Path(folder).expanduser() if folder else None


async def start(
    cwd: Path,
    prompt: str,
    settings: Settings,
    launch: Callable[[BackgroundRecord], int],
    overrides: dict[str, Any] | None = None,
) -> Started:
    """Make the worktree and the session of a background run of prompt from the repository
    holding cwd (settings: the repository's), start it with launch (which returns the run's pid
    and must not wait for it) and record it. BackgroundError when refused: not a repository, no
    commit, or backgroundLimit sessions running already."""
    from agentls.session import Agent

    try:
        repo = wt.repository_root(cwd)
    except wt.WorktreeError as exc:
        raise BackgroundError(str(exc)) from None
    notices: list[str] = []
    with _locked():
        now_running = running()
        if len(now_running) >= settings.background_limit:
            raise BackgroundError(
                f"{len(now_running)} background sessions are running already (backgroundLimit "
                f"is {settings.background_limit}): wait for one to finish (`agentls background "
                "list`) or raise backgroundLimit; nothing was started"
            )
        try:
            dirty = wt.uncommitted(repo)
            tree = wt.create(repo, prompt, worktree_folder(settings))
        except wt.WorktreeError as exc:
            raise BackgroundError(str(exc)) from None
        if dirty:
            notices.append(
                f"your tree has uncommitted changes ({len(dirty)} files): the worktree starts "
                f"from HEAD ({tree.base[:12]}) without them"
            )
        if tree.slug != tree.requested_slug:
            notices.append(
                f"branch {wt.BRANCH_PREFIX}{tree.requested_slug} exists already: this one is "
                f"{tree.branch}"
            )
        notices += carry_trust(repo, tree.path)
        if settings.background_setup:
            notices.append(_setup(repo, tree, settings.background_setup))
        there = load_settings(tree.path, overrides)
        agent = await Agent.open(settings=there, root=tree.path, watch_instructions=False)
        try:
            title = " ".join(prompt.split())[:TITLE_CHARS] or "Background session"
            session = await agent.new_session(title=title, model=there.model)
        finally:
            await agent.aclose()
        record = BackgroundRecord(
            session_id=session.id,
            repo_root=str(repo),
            worktree=str(tree.path),
            branch=tree.branch,
            base=tree.base,
            prompt=prompt,
            started_at=int(time.time() * 1000),
            log=str(records_dir() / f"{session.id}.log"),
        )
        save(record)  # before the run: a crash right after still leaves it listed
        record.pid = launch(record)
        save(record)
    return Started(record, notices)


def _setup(repo: Path, tree: wt.Worktree, command: str) -> str:
    """Run backgroundSetup in the new worktree (without the API credentials); when it fails the
    worktree and its branch are removed (nothing is in them yet) and BackgroundError says why."""
    done = subprocess.run(
        ["sh", "-c", command],
        cwd=tree.path,
        env=child_environment(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode == 0:
        return f"backgroundSetup `{command}` ran in the worktree"
    with contextlib.suppress(wt.WorktreeError):
        wt.remove(repo, tree.path, tree.branch)
    tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-SETUP_TAIL:])
    raise BackgroundError(
        f"backgroundSetup `{command}` failed (exit {done.returncode}); nothing was started and "
        f"the worktree was removed:\n{tail}"
    )


def detached_run(
    record: BackgroundRecord,
    *,
    yes: bool = False,
    plan: bool = False,
    max_steps: int | None = None,
    prompt: str | None = None,
) -> int:
    """Start the session's turn as `agentls run --cwd WORKTREE --session ID --json` in its own
    process group (it outlives the terminal or the editor that started it), its JSON lines to
    the record's log; the pid. It has no terminal: a call that would ask (unless yes or the
    permissions allow it), and ask_user, wait for `agentls background answer` (--wait-answers,
    session/background_questions.py)."""
    command = [sys.executable, "-m", "agentls.cli.main", "run", "--cwd", record.worktree]
    command += ["--session", record.session_id, "--json", "--wait-answers"]
    command += ["--yes"] if yes else []
    command += ["--plan"] if plan else []
    command += ["--max-steps", str(max_steps)] if max_steps else []
    command += ["--", prompt or record.prompt]
    env = dict(os.environ)
    for name in CREDENTIAL_VARS:  # a server holds them outside os.environ; the run needs them
        value = credential(name)
        if value:
            env[name] = value
    with open(record.log, "w") as out, open(record.log + ".err", "w") as err:
        proc = subprocess.Popen(
            command,
            cwd=record.worktree,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            env=env,
        )
    return proc.pid


def resume(record: BackgroundRecord, settings: Settings, prompt: str, yes: bool = False) -> None:
    """Go on with a background session that ended (killed, failed, or done and given more to do):
    a new detached run of it in its worktree with prompt. Refused while it runs, when its
    worktree is gone, or with backgroundLimit sessions running."""
    if state_of(record)[0] in ("running", "waiting"):
        raise BackgroundError(f"{record.session_id} is still running")
    if not Path(record.worktree).is_dir():
        raise BackgroundError(f"its worktree {record.worktree} is gone: it cannot go on")
    try:  # a record naming another folder would run the agent there
        wt.require_worktree(Path(record.repo_root), Path(record.worktree), record.branch)
    except wt.WorktreeError as exc:
        raise BackgroundError(str(exc)) from None
    with _locked():
        now_running = running()
        if len(now_running) >= settings.background_limit:
            raise BackgroundError(
                f"{len(now_running)} background sessions are running already (backgroundLimit "
                f"is {settings.background_limit}): wait for one to finish"
            )
        clear_questions(record)
        record.pid = detached_run(record, yes=yes, prompt=prompt)
        record.in_process = False
        save(record)


def merge(record: BackgroundRecord, protected: bool = False) -> str:
    """Commit what the session left uncommitted in its worktree on its branch, then merge the
    branch into the repository's current branch (refused on uncommitted changes there, or while
    the session runs, and, unless protected, when it changes a file another program runs later:
    permission/protected.py). What was done, for the user."""
    from agentls.permission.protected import is_protected_path

    if state_of(record)[0] in ("running", "waiting"):
        raise BackgroundError(f"{record.session_id} is still running: merge it once it is done")
    root, tree = Path(record.repo_root), Path(record.worktree)
    try:
        if not protected and tree.is_dir():
            risky = [c.path for c in wt.changed_files(tree, record.base)]
            risky = [p for p in risky if is_protected_path(p, root)]
            if risky:
                raise BackgroundError(
                    f"{record.branch} changes files another program runs later "
                    f"({', '.join(risky[:5])}{', ...' if len(risky) > 5 else ''}): read them "
                    f"(`agentls background diff {record.session_id}`), then merge with "
                    "--include-protected; nothing was merged"
                )
        wt.require_clean(root)
        committed = tree.is_dir() and wt.commit_all(
            tree, f"agentls background session: {' '.join(record.prompt.split())[:200]}"
        )
        into = wt.current_branch(root)
        wt.merge(root, record.branch)
    except wt.WorktreeError as exc:
        raise BackgroundError(str(exc)) from None
    done = f"merged {record.branch} into {into}"
    return done + (" (its uncommitted changes committed on it first)" if committed else "")


def apply(record: BackgroundRecord, paths: list[str], hunks: set[int] | None = None) -> list[str]:
    """Keep only some of a finished session's files: their changes applied to the user's working
    tree, staged and not committed (workspace/worktree.apply_files). Refused while it runs."""
    if state_of(record)[0] in ("running", "waiting"):
        raise BackgroundError(f"{record.session_id} is still running: apply it once it is done")
    if not Path(record.worktree).is_dir():
        raise BackgroundError(f"its worktree {record.worktree} is gone")
    try:
        return wt.apply_files(
            Path(record.worktree), record.base, Path(record.repo_root), paths, hunks
        )
    except wt.WorktreeError as exc:
        raise BackgroundError(str(exc)) from None


def remove(record: BackgroundRecord, force: bool = False) -> None:
    """Delete the worktree, the branch and the record (the stored session stays). Refused while
    it runs, or, unless force, while it has work not merged into the repository's HEAD."""
    if state_of(record)[0] in ("running", "waiting"):
        raise BackgroundError(f"{record.session_id} is still running: remove it once it is done")
    root, tree = Path(record.repo_root), Path(record.worktree)
    try:
        if not force:
            pending = wt.unmerged(root, record.branch) if _has_branch(root, record.branch) else 0
            left = wt.uncommitted(tree) if tree.is_dir() else []
            if pending or left:
                raise BackgroundError(
                    f"{record.branch} has work not merged into your branch ({pending} commits, "
                    f"{len(left)} files changed in its worktree): `agentls background merge "
                    f"{record.session_id}` first, or remove with --force to discard it"
                )
        wt.remove(root, tree, record.branch)
    except wt.WorktreeError as exc:
        raise BackgroundError(str(exc)) from None
    forget(record)


def _has_branch(root: Path, branch: str) -> bool:
    return bool(wt.git(root, "branch", "--list", branch).strip())
