"""Run agentls on a CI runner for an issue or a pull-request comment (the action.yml at the
repository's root runs this; docs/ci.md says what runs where).

It reads the event payload ($GITHUB_EVENT_PATH) for the prompt and the issue or pull request's
number, refuses an untrusted trigger and a permissions file the repository's owner did not
commit, runs `agentls run --json` in the checkout with that file's rules as the user's own
permissions (a fresh config folder, so the repository's .agentls/config.json stays unconfirmed
and may only tighten), writes the session's export, then either pushes a branch with the changes
and writes the pull request's body (`pr` mode) or writes the answer as a comment (`comment`
mode), and hands both to `gh` when it is there with a token.

Standard library only: it runs with the interpreter agentls was installed into.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Who may start a run from a comment: GitHub's author_association of the commenter.
TRUSTED_ASSOCIATIONS = ("OWNER", "MEMBER", "COLLABORATOR")
TRIGGER = "/agentls"
# Never in the agent's environment: the runner's GitHub credentials (agentls itself keeps the
# model providers' keys from its tools).
GITHUB_SECRETS = (
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
)
# GitHub refuses a pull-request or comment body over 65,536 characters.
BODY_LIMIT = 60_000


class Refused(Exception):
    """The run cannot go on; the message says why and what to do."""


@dataclass
class Task:
    number: int
    title: str
    prompt: str
    default_branch: str | None


def task_of(event: dict[str, Any], prompt: str | None) -> Task:
    """The issue or pull request the event is about and what to ask: the `prompt` input, else
    the comment's text after /agentls, else the issue's title and body."""
    issue = event.get("issue") or event.get("pull_request")
    if not isinstance(issue, dict) or not isinstance(issue.get("number"), int):
        raise Refused("the event has no issue or pull_request with a number")
    comment = event.get("comment")
    if isinstance(comment, dict):
        association = comment.get("author_association")
        if association not in TRUSTED_ASSOCIATIONS:
            raise Refused(
                f"the comment's author is {association or 'unknown'} to this repository; only "
                f"{', '.join(TRUSTED_ASSOCIATIONS)} may start agentls"
            )
    elif event.get("action") != "labeled":
        # An issue opened or edited by anyone would otherwise be a prompt: only its author's
        # standing, or a label (which takes triage access to put on), lets it start agentls.
        association = issue.get("author_association")
        if association not in TRUSTED_ASSOCIATIONS:
            raise Refused(
                f"the issue's author is {association or 'unknown'} to this repository and no "
                f"label started the run; only {', '.join(TRUSTED_ASSOCIATIONS)} may start agentls"
            )
    if not prompt:
        if isinstance(comment, dict):
            body = str(comment.get("body") or "")
            prompt = body.split(TRIGGER, 1)[1] if TRIGGER in body else body
        else:
            prompt = f"{issue.get('title') or ''}\n\n{issue.get('body') or ''}"
    if not prompt.strip():
        raise Refused("nothing to ask: the prompt input and the comment after /agentls are empty")
    repository = event.get("repository")
    default = repository.get("default_branch") if isinstance(repository, dict) else None
    return Task(issue["number"], str(issue.get("title") or ""), prompt.strip(), default)


# Every git the script runs, before and after the agent: no hook (the agent's commands may have
# written .git/hooks), no fsmonitor, no git run inside a nested repository. The config the agent
# could change otherwise is compared with the one before the run (config_listing).
SAFE_GIT = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")
SAFE_GIT += ("-c", "submodule.recurse=false", "-c", "protocol.ext.allow=never")


def without_tokens() -> dict[str, str]:
    """The script's environment without the GitHub credentials: what git runs with, but for the
    push (push_environment)."""
    return {k: v for k, v in os.environ.items() if k not in GITHUB_SECRETS}


def git(repo: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    proc = subprocess.run(
        ["git", *SAFE_GIT, *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env if env is not None else without_tokens(),
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if not check:
        return proc.stdout if proc.returncode == 0 else ""
    if proc.returncode != 0:
        raise Refused(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout


def owners_permissions(repo: Path, path: Path, default_branch: str | None) -> Any:
    """The `permissions` of the file, once it is shown to be the one in the default branch:
    tracked at HEAD, unchanged in the index and the working tree, and the same blob as the
    remote's default branch."""
    relative = os.path.relpath(os.path.abspath(path), repo.resolve()).replace(os.sep, "/")
    within = [
        repo.resolve().joinpath(*relative.split("/")[: n + 1])
        for n in range(relative.count("/") + 1)
    ]
    if relative.startswith("../") or any(p.is_symlink() for p in within):
        raise Refused(f"{relative}: not a plain file inside the checkout (a link, or outside)")
    try:
        git(repo, "ls-files", "--error-unmatch", "--", relative)
    except Refused:
        raise Refused(
            f"{relative} is not tracked by git: commit it to the default branch"
        ) from None
    try:
        git(repo, "diff", "--quiet", "--no-ext-diff", "--no-textconv", "HEAD", "--", relative)
    except Refused:
        raise Refused(
            f"{relative} differs from the committed one (modified in the checkout)"
        ) from None
    if not default_branch:
        raise Refused("the event names no default branch to check the permissions file against")
    here = git(repo, "rev-parse", f"HEAD:{relative}").strip()
    try:
        there = git(repo, "rev-parse", f"refs/remotes/origin/{default_branch}:{relative}").strip()
    except Refused as exc:
        raise Refused(
            f"{relative} is not in origin/{default_branch} (fetch the default branch): {exc}"
        ) from None
    if here != there:
        raise Refused(f"{relative} is not the one in origin/{default_branch}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise Refused(f"{relative}: not a JSON file: {exc}") from None
    if not isinstance(data, dict) or "permissions" not in data:
        raise Refused(f'{relative}: expected {{"permissions": ...}}')
    unknown = sorted(set(data) - {"permissions"})
    if unknown:
        raise Refused(f"{relative}: unknown key {unknown[0]!r} (only 'permissions')")
    return data["permissions"]


def agent_environment(home: Path, permissions: Any, model: str | None) -> dict[str, str]:
    """The run's environment: a config folder of its own whose config.json holds the owner's
    permissions (nothing else a user's config could add), no GitHub credentials."""
    config = home / "config" / "agentls"
    config.mkdir(parents=True, exist_ok=True)
    settings: dict[str, Any] = {} if permissions is None else {"permissions": permissions}
    if model:
        settings["model"] = model
    (config / "config.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in GITHUB_SECRETS}
    env["XDG_CONFIG_HOME"] = str(home / "config")
    env["CLAUDE_CONFIG_DIR"] = str(home / "claude")
    env.setdefault("AGENTLS_DATA_DIR", str(home / "data"))
    return env


def agentls(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentls.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def run_agent(repo: Path, prompt: str, yes: bool, env: dict[str, str]) -> dict[str, Any]:
    """`agentls run --json`'s result line (its events go to this job's log)."""
    proc = agentls(
        "run", "--json", "--cwd", str(repo), *(["--yes"] if yes else []), "--", prompt, env=env
    )
    secrets = secret_values()  # GitHub masks only the secrets it knows in the job's log
    sys.stderr.write(redacted(proc.stderr, secrets))
    result: dict[str, Any] | None = None
    for line in proc.stdout.splitlines():
        print(redacted(line, secrets))
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict) and event.get("type") == "result":
            result = event
    if result is None:
        raise Refused(f"agentls run exited {proc.returncode} without a result")
    return result


def slug(title: str) -> str:
    return "-".join(re.findall(r"[a-z0-9]+", title.lower()))[:40].strip("-") or "task"


def free_branch(repo: Path, name: str) -> str:
    """name, else name-2, name-3...: one neither this checkout nor origin has."""
    candidate, n = name, 1
    while True:
        local = bool(
            git(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{candidate}", check=False)
        )
        remote = git(repo, "ls-remote", "--heads", "origin", candidate, env=push_environment())
        if not local and not remote.strip():
            return candidate
        n += 1
        candidate = f"{name}-{n}"


def push_environment() -> dict[str, str] | None:
    """With GH_TOKEN on GitHub: the token as git's HTTP header for the push alone (the checkout
    need not keep it in .git/config, where the agent could read it)."""
    token = os.environ.get("GH_TOKEN") or os.environ.get("GITHUB_TOKEN")
    server = os.environ.get("GITHUB_SERVER_URL")
    if not token or not server:
        return None
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    env = without_tokens()
    env.update(
        GIT_CONFIG_COUNT="1",
        GIT_CONFIG_KEY_0=f"http.{server}/.extraheader",
        GIT_CONFIG_VALUE_0=f"AUTHORIZATION: basic {basic}",
    )
    return env


def push_branch(repo: Path, task: Task) -> str | None:
    """The changes committed on a new branch pushed to origin (None: nothing changed)."""
    if not git(repo, "status", "--porcelain", "--ignore-submodules=all").strip():
        return None
    branch = free_branch(repo, f"agentls/issue-{task.number}-{slug(task.title)}")
    git(repo, "checkout", "-b", branch)
    # A nested repository the agent made is left out: `git add` would run git inside it, with
    # its config (which names programs).
    leave = [f":(exclude,literal){path}" for path in nested_repositories(repo)]
    git(repo, "add", "-A", "--", ".", *leave)
    if not git(repo, "diff", "--cached", "--name-only").strip():
        return None
    staged = git(repo, "diff", "--cached", "--text", "--no-ext-diff", "--no-textconv")
    if any(value in staged for value in secret_values()):
        raise Refused("the changes hold a credential's value from the environment: not pushed")
    identity = []
    if not git(repo, "config", "user.email", check=False).strip():
        identity = ["-c", "user.name=agentls", "-c", "user.email=agentls@users.noreply.github.com"]
    title = task.title or f"issue {task.number}"
    git(repo, *identity, "commit", "-q", "-m", f"agentls: {title} (#{task.number})")
    git(repo, "push", "origin", f"HEAD:refs/heads/{branch}", env=push_environment())
    return branch


def nested_repositories(repo: Path) -> list[str]:
    """The nested repositories in the checkout (untracked folders with a .git, submodules)."""
    status = git(repo, "status", "--porcelain", "-z", "-uall", "--ignore-submodules=all")
    found = [
        e[3:].rstrip("/") for e in status.split("\0") if e.startswith("?? ") and e.endswith("/")
    ]
    for entry in git(repo, "ls-files", "-s", "-z").split("\0"):
        if entry.startswith("160000 "):
            found.append(entry.split("\t", 1)[1])
    return found


def config_listing(repo: Path) -> str:
    """git's whole config as it applies in the checkout, with where each value comes from: the
    agent's commands could change it (.git/config, ~/.gitconfig, a file included) to make the
    script's git run a program, or push the token to another host (a pushurl, a proxy, an
    insteadOf)."""
    return git(repo, "config", "--list", "--show-origin", "--includes", "-z")


def secret_values() -> list[str]:
    """The values of the environment's credentials (a token, key, secret or password by its
    variable's name, 8 characters or more): never in what the script publishes."""
    named = re.compile(r"(?i)(token|secret|passw|credential|auth|key|private)")
    values = {
        v
        for k, v in os.environ.items()
        if named.search(k) and not k.startswith("GIT_CONFIG_") and len(v) >= 8
    }
    return sorted(values, key=len, reverse=True)


def redacted(text: str, secrets: list[str]) -> str:
    for value in secrets:
        text = text.replace(value, "[redacted]")
    return text


def cost_line(result: dict[str, Any]) -> str:
    usage = result.get("usage") or {}
    cost = float(usage.get("costUsd") or 0.0)
    tokens = f"{usage.get('inputTokens', 0):,} in, {usage.get('outputTokens', 0):,} out"
    return f"Cost: {'~' if usage.get('estimated') else ''}${cost:.4f} ({tokens})"


def body(result: dict[str, Any], export: str, heading: str) -> str:
    """A pull request's or comment's text: the answer, the cost, the session's export folded."""
    parts = [
        heading,
        str(result.get("text") or "(no answer)"),
        f"{cost_line(result)} · session {result.get('sessionId')} · {result.get('finishReason')}",
    ]
    room = BODY_LIMIT - sum(len(p) for p in parts) - 200
    shown = (
        export if len(export) <= room else export[: max(room, 0)] + "\n\n(cut: see the artifact)"
    )
    parts.append(f"<details><summary>The session</summary>\n\n{shown}\n\n</details>")
    return "\n\n".join(parts) + "\n"


def gh(repo: Path, *args: str) -> None:
    """Run gh when it and a token are here; otherwise say what was skipped."""
    if not shutil.which("gh") or not (os.environ.get("GH_TOKEN") or os.environ.get("GITHUB_TOKEN")):
        print(
            f"agentls-ci: no gh or GH_TOKEN here: skipped `gh {args[0]} {args[1]}`", file=sys.stderr
        )
        return
    subprocess.run(["gh", *args], cwd=repo, check=True)


def set_outputs(**values: str) -> None:
    path = os.environ.get("GITHUB_OUTPUT")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.writelines(f"{k.replace('_', '-')}={v}\n" for k, v in values.items())


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--event", default=os.environ.get("GITHUB_EVENT_PATH"), help="event payload")
    p.add_argument("--repo", default=os.environ.get("GITHUB_WORKSPACE") or ".", help="checkout")
    p.add_argument("--mode", choices=("pr", "comment"), default="pr")
    p.add_argument("--prompt", default="", help="what to ask (default: from the event)")
    p.add_argument("--model", default="", help="the model (default: agentls's)")
    p.add_argument("--permissions-file", default=".agentls/ci-permissions.json")
    p.add_argument("--yes", action="store_true", help="allow every call that would ask")
    p.add_argument("--out", default="", help="folder for the export and bodies (not the repo)")
    return p.parse_args(argv)


def deliver(
    args: argparse.Namespace,
    repo: Path,
    out: Path,
    task: Task,
    result: dict[str, Any],
    exported: str,
    config_before: str,
) -> int:
    """The export written; then a pushed branch and the pull request's body, or a comment. The
    credentials' values are taken out of all three; nothing is pushed or posted when the
    agent's commands changed git's config."""
    secrets = secret_values()
    exported = redacted(exported, secrets)
    result = dict(result, text=redacted(str(result.get("text") or ""), secrets))
    export_file = out / "session.md"
    export_file.write_text(exported, encoding="utf-8")
    if config_listing(repo) != config_before:
        raise Refused(
            "the agent's commands changed git's config (a hook, filter or fsmonitor program, a "
            "remote or proxy would now run or be used by this script's git): nothing was pushed "
            f"or posted; the session is in {export_file}"
        )
    ok = result.get("finishReason") in ("end_turn", "max_tokens")
    branch = push_branch(repo, task) if ok and args.mode == "pr" else None
    cost = f"{float((result.get('usage') or {}).get('costUsd') or 0.0):.4f}"
    set_outputs(
        session_id=str(result["sessionId"]),
        branch=branch or "",
        cost_usd=cost,
        export_file=str(export_file),
    )
    if branch:
        pr_body = out / "pr-body.md"
        pr_body.write_text(body(result, exported, f"For #{task.number}."), "utf-8")
        print(f"agentls-ci: pushed {branch}; pull request body in {pr_body}")
        title = f"agentls: {task.title or task.number}"
        base = task.default_branch or "main"
        gh(
            repo,
            "pr",
            "create",
            "--base",
            base,
            "--head",
            branch,
            "--title",
            title,
            "--body-file",
            str(pr_body),
        )
    else:
        note = "" if args.mode == "comment" else "No file changed, so no pull request.\n\n"
        if not ok:
            note = f"The run did not finish ({result.get('finishReason')}); nothing was pushed.\n\n"
        comment = out / "comment.md"
        comment.write_text(body(result, exported, note + "agentls answered:"), "utf-8")
        print(f"agentls-ci: comment body in {comment}")
        gh(repo, "issue", "comment", str(task.number), "--body-file", str(comment))
    return 0 if ok else 1


def private() -> bool:
    """Keep the job's tokens in this process's environment from the agent's commands: no other
    process of this user reads /proc/PID/environ or the memory of a non-dumpable one (prctl
    PR_SET_DUMPABLE 0; Linux). Whether it held."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(4, 0, 0, 0, 0)) == 0 and int(libc.prctl(3, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def main(argv: list[str] | None = None) -> int:
    private()
    args = parse_args(argv)
    repo = Path(args.repo).resolve()
    out = Path(args.out or tempfile.mkdtemp(prefix="agentls-ci-")).resolve()
    try:
        if not args.event:
            raise Refused("no event payload: --event or GITHUB_EVENT_PATH")
        try:
            event = json.loads(Path(args.event).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise Refused(f"the event payload {args.event}: {exc}") from None
        task = task_of(event, args.prompt)
        permissions_file = repo / args.permissions_file
        permissions = None
        if permissions_file.exists():
            permissions = owners_permissions(repo, permissions_file, task.default_branch)
        elif args.yes:
            raise Refused(f"--yes needs the owner's permissions file {args.permissions_file}")
        out.mkdir(parents=True, exist_ok=True)
        config_before = config_listing(repo)
        with tempfile.TemporaryDirectory(prefix="agentls-ci-home-") as home:
            env = agent_environment(Path(home), permissions, args.model)
            result = run_agent(repo, task.prompt, args.yes, env)
            exported = agentls("export", str(result["sessionId"]), env=env).stdout
        return deliver(args, repo, out, task, result, exported, config_before)
    except Refused as exc:
        print(f"agentls-ci: refused: {exc}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as exc:
        print(
            f"agentls-ci: {' '.join(map(str, exc.cmd[:3]))} failed ({exc.returncode})",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
