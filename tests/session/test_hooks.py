"""Hooks in Claude Code's settings format through the loop: the Agent, the real SDK against the
local Messages API (the model's replies scripted), real hook programs (small Python scripts, as
users write them) fed the event on stdin: a PreToolUse hook that blocks `rm`, a PostToolUse hook
that formats after an edit, a Stop hook that demands tests, a UserPromptSubmit hook, and a
workspace's hooks that never run until the workspace is trusted."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agentls.config import load_settings
from agentls.trust import TrustStore
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import Harness, HarnessFactory

ALLOW_ALL = {"permissions": {"*": "allow"}}
BASE = {"model": "claude-sonnet-5-5", "apiRetryBaseDelayS": 0.01, "sandbox": "off"}

# A PreToolUse hook as the hooks guide shows it: refuses `rm` with exit 2 and the reason on
# stderr; logs every stdin it gets.
BLOCK_RM = """
import json, sys
event = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(event) + "\\n")
command = event.get("tool_input", {}).get("command", "")
if command.split()[:1] == ["rm"]:
    print("rm is not allowed here: move files to trash/ instead", file=sys.stderr)
    sys.exit(2)
"""

# A PostToolUse hook that formats the file an edit changed (trailing spaces out).
FORMAT = """
import json, sys
event = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(event) + "\\n")
path = event["tool_input"]["file_path"]
with open(path) as f:
    lines = [line.rstrip() for line in f]
with open(path, "w") as f:
    f.write("\\n".join(lines) + "\\n")
"""

# A Stop hook that demands the tests were run, once (stop_hook_active then says it did).
DEMAND_TESTS = """
import json, sys
event = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(event) + "\\n")
if not event["stop_hook_active"]:
    print("Run the tests before you stop.", file=sys.stderr)
    sys.exit(2)
"""

# Logs stdin and the environment it runs in, answers with its second argument on stdout.
ANSWER = """
import json, os, sys
event = json.load(sys.stdin)
event["env"] = {k: v for k, v in os.environ.items() if k.startswith(("ANTHROPIC", "CLAUDE"))}
event["pwd"] = os.getcwd()
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(event) + "\\n")
print(sys.argv[2])
"""

COMMON_KEYS = {"session_id", "transcript_path", "cwd", "hook_event_name", "permission_mode"}


def script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / "hooks" / f"{name}.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(body)
    return path


def command(program: Path, *args: str | Path) -> str:
    return " ".join(json.dumps(str(a)) for a in (sys.executable, program, *args))


def hooks_file(path: Path, event: str, cmd: str, matcher: str | None = None) -> None:
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": cmd, "timeout": 30}]}
    if matcher is not None:
        group["matcher"] = matcher
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(path.read_text()) if path.exists() else {}
    data.setdefault("hooks", {}).setdefault(event, []).append(group)
    path.write_text(json.dumps(data))


def claude_settings(tmp_path: Path) -> Path:
    """~/.claude/settings.json of the fixture home (tests/conftest.py sets CLAUDE_CONFIG_DIR)."""
    return tmp_path / "claude-home" / "settings.json"


def logged(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def said_to_model(h: Harness) -> str:
    return json.dumps([body["messages"] for body in h.accepted_requests()])


async def run(h: Harness, prompt: str) -> Any:
    session = await h.agent.new_session()
    return await asyncio.wait_for(h.agent.prompt(session.id, prompt), 60)


async def test_a_pre_tool_use_hook_blocks_rm_and_the_model_reads_its_reason(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path
) -> None:
    log = tmp_path / "pre.log"
    hook = command(script(tmp_path, "block_rm", BLOCK_RM), log)
    hooks_file(claude_settings(tmp_path), "PreToolUse", hook, matcher="Bash")
    h = await make_harness(ALLOW_ALL)
    (h.root / "precious.txt").write_text("keep me\n")
    api.enqueue(
        reply(tool_use("bash", {"command": "rm precious.txt"}, id="toolu_rm")),
        reply(tool_use("bash", {"command": "echo kept"})),
        reply(text("I kept the file.")),
    )
    result = await run(h, "clean up")
    assert result.text == "I kept the file.", result.error
    assert (h.root / "precious.txt").read_text() == "keep me\n"
    [refused, ran] = h.of_type("tool-result")
    assert refused.is_error
    assert "rm is not allowed here: move files to trash/ instead" in refused.output
    assert "rm is not allowed here" in said_to_model(h)
    assert not ran.is_error and "kept" in ran.output
    # The stdin of each run, as Claude Code's hooks reference documents it.
    first, second = logged(log)
    assert COMMON_KEYS <= set(first)
    assert first["hook_event_name"] == "PreToolUse"
    assert first["tool_name"] == "Bash"
    assert first["tool_input"] == {"command": "rm precious.txt"}
    assert first["tool_use_id"] == "toolu_rm"
    assert first["cwd"] == str(h.root)
    assert first["session_id"] == result.session_id
    assert second["tool_input"] == {"command": "echo kept"}
    events = h.of_type("hook")
    assert [(e.event, e.outcome, e.tool) for e in events] == [
        ("PreToolUse", "blocked", "Bash"),
        ("PreToolUse", "ok", "Bash"),
    ]
    assert events[0].source == str(claude_settings(tmp_path))
    assert events[0].exit_code == 2 and "rm is not allowed" in (events[0].message or "")


async def test_a_pre_tool_use_matcher_leaves_other_tools_alone(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path
) -> None:
    log = tmp_path / "pre.log"
    hook = command(script(tmp_path, "block_rm", BLOCK_RM), log)
    hooks_file(claude_settings(tmp_path), "PreToolUse", hook, matcher="Bash|Write")
    h = await make_harness(ALLOW_ALL)
    (h.root / "a.txt").write_text("a\n")
    api.enqueue(reply(tool_use("read", {"path": "a.txt"})), reply(text("Read.")))
    await run(h, "read it")
    assert logged(log) == []
    assert h.of_type("hook") == []


async def test_a_post_tool_use_hook_formats_the_file_an_edit_changed(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path
) -> None:
    log = tmp_path / "post.log"
    hook = command(script(tmp_path, "format", FORMAT), log)
    hooks_file(claude_settings(tmp_path), "PostToolUse", hook, matcher="Edit|Write")
    h = await make_harness(ALLOW_ALL)
    (h.root / "a.py").write_text("x = 1\n")
    edit = {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2   "}
    api.enqueue(
        reply(tool_use("read", {"path": "a.py"})),
        reply(tool_use("edit", edit)),
        reply(text("Edited.")),
    )
    result = await run(h, "set x to 2")
    assert result.text == "Edited.", result.error
    assert (h.root / "a.py").read_text() == "x = 2\n"
    [event] = logged(log)
    assert COMMON_KEYS <= set(event)
    assert event["hook_event_name"] == "PostToolUse"
    assert event["tool_name"] == "Edit"
    assert event["tool_input"]["file_path"] == str(h.root / "a.py")
    assert event["tool_input"]["old_string"] == "x = 1"
    assert event["tool_input"]["new_string"] == "x = 2   "
    assert event["tool_response"]["filePath"] == str(h.root / "a.py")
    assert event["tool_response"]["success"] is True
    assert [(e.event, e.outcome) for e in h.of_type("hook")] == [("PostToolUse", "ok")]


async def test_a_stop_hook_that_demands_tests_gets_the_model_one_more_step(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path
) -> None:
    log = tmp_path / "stop.log"
    hook = command(script(tmp_path, "demand_tests", DEMAND_TESTS), log)
    hooks_file(claude_settings(tmp_path), "Stop", hook)
    h = await make_harness(ALLOW_ALL)
    api.enqueue(
        reply(text("Done.")),
        reply(tool_use("bash", {"command": "echo 3 passed"})),
        reply(text("Tests pass; done.")),
    )
    result = await run(h, "fix it")
    assert result.text == "Tests pass; done.", result.error
    assert "[Stop hook] Run the tests before you stop." in said_to_model(h)
    first, second = logged(log)
    assert first["hook_event_name"] == "Stop" and COMMON_KEYS <= set(first)
    assert first["stop_hook_active"] is False
    assert second["stop_hook_active"] is True
    assert [e.outcome for e in h.of_type("hook")] == ["blocked", "ok"]


async def test_a_user_prompt_submit_hook_adds_context_or_blocks_the_prompt(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path
) -> None:
    log = tmp_path / "prompt.log"
    context = json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": "Ticket 42",
            }
        }
    )
    answer = script(tmp_path, "answer", ANSWER)
    hooks_file(claude_settings(tmp_path), "UserPromptSubmit", command(answer, log, context))
    h = await make_harness(ALLOW_ALL)
    api.enqueue(reply(text("Noted.")))
    result = await run(h, "what ticket?")
    assert result.text == "Noted.", result.error
    assert "Ticket 42" in said_to_model(h)
    [event] = logged(log)
    assert event["hook_event_name"] == "UserPromptSubmit"
    assert event["prompt"] == "what ticket?"
    assert COMMON_KEYS <= set(event)
    # Run with the user's rights in the workspace root, without the provider's credentials.
    assert event["pwd"] == str(h.root)
    assert event["env"].get("CLAUDE_PROJECT_DIR") == str(h.root)
    assert not any(k.startswith("ANTHROPIC") for k in event["env"])

    block = json.dumps({"decision": "block", "reason": "No secrets in prompts."})
    claude_settings(tmp_path).unlink()
    hooks_file(claude_settings(tmp_path), "UserPromptSubmit", command(answer, log, block))
    requests = len(api.requests)
    result = await run(h, "the password is hunter2")
    assert result.finish_reason == "end_turn"
    assert len(api.requests) == requests  # the model never saw it
    assert any("No secrets in prompts." in e.message for e in h.of_type("error"))


async def test_a_hook_allow_answers_a_question_but_never_a_deny_rule(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path
) -> None:
    log = tmp_path / "allow.log"
    allow = json.dumps(
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}
    )
    answer = script(tmp_path, "answer", ANSWER)
    hooks_file(claude_settings(tmp_path), "PreToolUse", command(answer, log, allow), "Bash")
    h = await make_harness({"permissions": {"bash": {"*": "ask", "touch denied*": "deny"}}})
    api.enqueue(
        reply(tool_use("bash", {"command": "touch asked"})),
        reply(tool_use("bash", {"command": "touch denied"})),
        reply(text("Done.")),
    )
    result = await run(h, "touch both")
    assert result.text == "Done.", result.error
    assert (h.root / "asked").exists()  # the hook's allow answered the rule's question
    assert not (h.root / "denied").exists()  # the deny rule won over the hook's allow
    [asked, denied] = h.of_type("tool-result")
    assert not asked.is_error
    assert denied.is_error and "a rule forbids bash" in denied.output
    assert h.of_type("permission-request") == []


@pytest.mark.parametrize("state", ["untrusted", "trusted", "changed"])
async def test_a_workspace_s_hooks_run_only_in_the_content_confirmed_in_a_trusted_workspace(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path, state: str
) -> None:
    h = await make_harness(ALLOW_ALL)
    ran = tmp_path / "ran.log"
    answer = script(tmp_path, "answer", ANSWER)
    file = h.root / ".claude" / "settings.json"
    hooks_file(file, "UserPromptSubmit", command(answer, ran, ""))
    if state != "untrusted":
        TrustStore().trust(file, file.read_bytes())  # `agentls trust` confirmed it
    if state == "changed":  # a pull brought another hook since
        hooks_file(file, "Stop", command(answer, ran, ""))
    trusted = state != "untrusted"
    settings = load_settings(h.root, {**BASE, **ALLOW_ALL}, workspace_trusted=trusted)
    h.agent.update_settings(settings)
    api.enqueue(reply(text("Hello.")))
    result = await run(h, "hi")
    assert result.text == "Hello.", result.error
    notices = [e.message for e in h.of_type("error")]
    if state == "trusted":
        assert [e["hook_event_name"] for e in logged(ran)] == ["UserPromptSubmit"]
        assert notices == []
        return
    assert logged(ran) == []
    assert h.of_type("hook") == []
    [notice] = notices
    assert f"ignored the hooks of {file}" in notice
    if state == "untrusted":
        assert "the workspace is not trusted" in notice
    else:
        assert "the file is changed since you trusted this workspace" in notice


async def test_pre_compact_hooks_run_before_an_automatic_compaction(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path
) -> None:
    log = tmp_path / "compact.log"
    hooks_file(
        claude_settings(tmp_path), "PreCompact", command(script(tmp_path, "a", ANSWER), log, "")
    )
    h = await make_harness({"contextWindow": 100_000, "compactKeepRecentTokens": 600, **ALLOW_ALL})
    (h.root / "a.txt").write_text("a\n")
    api.enqueue(
        reply(tool_use("read", {"path": "a.txt"}), usage={"input_tokens": 50_000}),
        # 85_000 > 80% of 100_000: compaction before the next step.
        reply(tool_use("read", {"path": "a.txt"}), usage={"input_tokens": 85_000}),
        reply(text("The summary."), usage={"input_tokens": 900}),
        reply(text("Done.")),
    )
    result = await run(h, "read a.txt twice")
    assert result.text == "Done.", result.error
    [event] = logged(log)
    assert event["hook_event_name"] == "PreCompact" and COMMON_KEYS <= set(event)
    assert event["trigger"] == "auto"
    assert [c.status for c in h.of_type("compaction")] == ["started", "done"]


async def test_a_notification_hook_runs_when_a_call_waits_for_the_user(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path
) -> None:
    log = tmp_path / "notify.log"
    answer = script(tmp_path, "answer", ANSWER)
    hooks_file(claude_settings(tmp_path), "Notification", command(answer, log, ""))
    h = await make_harness({"permissions": {"bash": "ask"}})
    api.enqueue(reply(tool_use("bash", {"command": "echo hi"})), reply(text("Asked.")))
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "say hi"))
    request = await h.wait_for("permission-request")
    hook = await h.wait_for("hook")
    assert hook.event == "Notification" and hook.outcome == "ok"
    [event] = logged(log)
    assert event["hook_event_name"] == "Notification" and COMMON_KEYS <= set(event)
    assert event["notification_type"] == "permission_prompt"
    assert event["message"] == f"agentls needs your permission for {request.title}"
    h.agent.approve(session.id, request.request_id, "once")
    result = await asyncio.wait_for(turn, 60)
    assert result.text == "Asked.", result.error


async def test_session_end_hooks_run_as_the_agent_closes(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path
) -> None:
    log = tmp_path / "end.log"
    answer = script(tmp_path, "answer", ANSWER)
    for event in ("SessionStart", "SessionEnd"):
        hooks_file(claude_settings(tmp_path), event, command(answer, log, ""))
    h = await make_harness(ALLOW_ALL)
    api.enqueue(reply(text("One.")), reply(text("Two.")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "one")
    await h.agent.prompt(session.id, "two")  # not a start again
    assert [e["hook_event_name"] for e in logged(log)] == ["SessionStart"]
    await h.agent.aclose()
    start, end = logged(log)
    assert start["source"] == "startup"
    assert end["hook_event_name"] == "SessionEnd" and COMMON_KEYS <= set(end)
    assert end["reason"] == "other" and end["session_id"] == session.id


async def test_a_sub_agent_runs_subagent_stop_hooks_and_no_prompt_hooks(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path
) -> None:
    log = tmp_path / "sub.log"
    answer = script(tmp_path, "answer", ANSWER)
    for event in ("UserPromptSubmit", "Stop", "SubagentStop"):
        hooks_file(claude_settings(tmp_path), event, command(answer, log, ""))
    h = await make_harness(ALLOW_ALL)
    task = {"description": "look", "prompt": "Say hello."}
    api.enqueue(
        reply(tool_use("task", task)),
        reply(text("Hello.")),  # the sub-agent
        reply(text("It said hello.")),
    )
    result = await run(h, "ask a helper")
    assert result.text == "It said hello.", result.error
    events = logged(log)
    assert [e["hook_event_name"] for e in events] == ["UserPromptSubmit", "SubagentStop", "Stop"]
    assert events[1]["session_id"] != result.session_id  # the sub-agent's own session
    assert events[1]["stop_hook_active"] is False


async def test_a_pre_tool_use_hook_s_updated_input_is_what_runs(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path
) -> None:
    log = tmp_path / "rewrite.log"
    rewrite = json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "updatedInput": {"command": "echo rewritten > out.txt"},
            }
        }
    )
    answer = script(tmp_path, "answer", ANSWER)
    hooks_file(claude_settings(tmp_path), "PreToolUse", command(answer, log, rewrite), "Bash")
    h = await make_harness(ALLOW_ALL)
    api.enqueue(
        reply(tool_use("bash", {"command": "echo original > out.txt"})), reply(text("Written."))
    )
    result = await run(h, "write it")
    assert result.text == "Written.", result.error
    assert (h.root / "out.txt").read_text() == "rewritten\n"


async def test_an_updated_input_the_tool_does_not_take_is_refused_naming_the_key(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path
) -> None:
    wrong = json.dumps({"hookSpecificOutput": {"updatedInput": {"file_path": "a.txt", "x": 1}}})
    answer = script(tmp_path, "answer", ANSWER)
    hooks_file(claude_settings(tmp_path), "PreToolUse", command(answer, tmp_path / "l", wrong))
    h = await make_harness(ALLOW_ALL)
    (h.root / "a.txt").write_text("a\n")
    api.enqueue(reply(tool_use("read", {"path": "a.txt"})), reply(text("Hm.")))
    await run(h, "read it")
    [refused] = h.of_type("tool-result")
    assert refused.is_error and "x: not a parameter of read" in refused.output, refused.output


async def test_continue_false_ends_the_turn_after_the_step_and_says_why(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path
) -> None:
    halt = json.dumps({"continue": False, "stopReason": "The build is red: stopping here."})
    answer = script(tmp_path, "answer", ANSWER)
    hooks_file(claude_settings(tmp_path), "PostToolUse", command(answer, tmp_path / "l", halt))
    h = await make_harness(ALLOW_ALL)
    api.enqueue(reply(tool_use("bash", {"command": "echo built"})), reply(text("Never sent.")))
    result = await run(h, "build")
    assert result.finish_reason == "end_turn"
    assert len(api.requests) == 1  # no step after the hook said stop
    [event] = h.of_type("hook")
    assert event.outcome == "blocked" and event.message == "The build is red: stopping here."
