"""Running one hook: the event on stdin, the exit code and JSON answer read as Claude Code's
hooks reference says, the timeout killing it, the environment without the provider's
credentials."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agentls.hooks.config import Hook
from agentls.hooks.runner import run_hook, run_hooks
from tests.waiting import until

SOURCE = Path("/home/u/.claude/settings.json")


def python(tmp_path: Path, body: str, timeout: float = 30) -> Hook:
    script = tmp_path / f"hook{len(list(tmp_path.glob('hook*')))}.py"
    script.write_text(body)
    return Hook("PreToolUse", "", f"{sys.executable} {script}", timeout, SOURCE)


async def test_exit_0_with_json_is_read_and_exit_2_blocks_with_stderr(tmp_path: Path) -> None:
    answer = {"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "?"}}
    asks = python(tmp_path, f"print({json.dumps(json.dumps(answer))})")
    blocks = python(tmp_path, "import sys; print('no rm', file=sys.stderr); sys.exit(2)")
    verdict = await run_hooks([asks, blocks], {"hook_event_name": "PreToolUse"}, tmp_path)
    assert verdict.blocked and verdict.reasons == ["no rm"]
    assert verdict.permission == "ask"
    assert [r.outcome for r in verdict.runs] == ["ok", "blocked"]


async def test_deny_wins_over_ask_and_allow_and_its_reason_is_kept(tmp_path: Path) -> None:
    def deciding(decision: str) -> Hook:
        out = {
            "hookSpecificOutput": {
                "permissionDecision": decision,
                "permissionDecisionReason": f"said {decision}",
            }
        }
        return python(tmp_path, f"print({json.dumps(json.dumps(out))})")

    hooks = [deciding("allow"), deciding("deny"), deciding("ask")]
    verdict = await run_hooks(hooks, {}, tmp_path)
    assert verdict.permission == "deny"
    assert "said deny" in verdict.reason and "said allow" not in verdict.reason


async def test_another_exit_code_is_an_error_that_blocks_nothing(tmp_path: Path) -> None:
    failing = python(tmp_path, "import sys; print('oops', file=sys.stderr); sys.exit(1)")
    verdict = await run_hooks([failing], {}, tmp_path)
    assert not verdict.blocked and verdict.permission is None
    [run] = verdict.runs
    assert run.outcome == "error" and run.exit_code == 1 and run.message == "oops"


async def test_decision_block_and_continue_false_and_context(tmp_path: Path) -> None:
    out = {
        "decision": "block",
        "reason": "tests first",
        "continue": False,
        "stopReason": "halt",
        "hookSpecificOutput": {"additionalContext": "branch main"},
    }
    verdict = await run_hooks(
        [python(tmp_path, f"print({json.dumps(json.dumps(out))})")], {}, tmp_path
    )
    assert verdict.blocked and verdict.reasons == ["tests first"]
    assert verdict.stop and verdict.stop_reason == "halt"
    assert verdict.context == ["branch main"]


async def test_plain_stdout_is_context_only_where_the_event_says_so(tmp_path: Path) -> None:
    hook = python(tmp_path, "print('Sprint 12')")
    assert (await run_hooks([hook], {}, tmp_path, plain_stdout_is_context=True)).context == [
        "Sprint 12"
    ]
    assert (await run_hooks([hook], {}, tmp_path)).context == []


async def test_a_hook_past_its_timeout_is_killed_with_what_it_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    body = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(300)\n"
    )
    run = await run_hook(python(tmp_path, body, timeout=2), {}, tmp_path)
    assert run.outcome == "timeout" and run.message == "timed out after 2 s"
    # Its child (in its process group) was killed too.
    pid = int(pid_file.read_text())
    await until(lambda: not alive(pid), "the hook's child was killed")


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie waiting for its parent does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


async def test_the_hook_gets_the_event_on_stdin_in_the_root_without_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("AGENTLS_TEST_VISIBLE", "yes")
    out = tmp_path / "seen.json"
    body = (
        "import json, os, sys\n"
        f"json.dump({{'stdin': json.load(sys.stdin), 'cwd': os.getcwd(), 'env': dict(os.environ)}}, open({str(out)!r}, 'w'))\n"
    )
    root = tmp_path / "ws"
    root.mkdir()
    run = await run_hook(python(tmp_path, body), {"hook_event_name": "Stop"}, root)
    assert run.outcome == "ok", run.stderr
    seen = json.loads(out.read_text())
    assert seen["stdin"] == {"hook_event_name": "Stop"}
    assert seen["cwd"] == str(root)
    assert seen["env"]["CLAUDE_PROJECT_DIR"] == str(root)
    assert seen["env"]["AGENTLS_TEST_VISIBLE"] == "yes"
    assert "ANTHROPIC_API_KEY" not in seen["env"]
