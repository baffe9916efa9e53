"""Hooks fired in a session (agentls/hooks: Claude Code's format): SessionStart and
UserPromptSubmit before a prompt is stored, PreToolUse before a tool call runs, PostToolUse after
it succeeded, Stop (SubagentStop in a sub-agent) when the model would end the turn, PreCompact
before a compaction, Notification when a call waits for the user's answer, SessionEnd as the Agent
closes. Each run is a `hook` event in the transcript.

What an answer does, as Claude Code's hooks reference says: a PreToolUse hook that blocks (exit 2,
or permissionDecision "deny") refuses the call and the model reads why; "ask" asks the user even
where a rule allows; "allow" answers a rule's question, never a deny rule (deny rules win). A
UserPromptSubmit hook that blocks drops the prompt (the user reads why, the model never sees it);
its additionalContext, and a SessionStart hook's, join the prompt. A PostToolUse hook that blocks
tells the model its reason after the tool's output. A Stop hook that blocks sends its reason to
the model as one more step (at most STOP_LIMIT times a turn; the hook sees stop_hook_active).
`continue: false` ends the turn after the current step."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentls.events import ErrorEvent, HookEvent
from agentls.history import Message, Part, TextPart, ToolPart, new_id, now_ms
from agentls.hooks.config import HookSet, load_hooks
from agentls.hooks.names import agentls_input, claude_input, claude_name, claude_response
from agentls.hooks.runner import Verdict, run_hooks
from agentls.session.policy import Policy
from agentls.session.state import SessionState
from agentls.store import Store
from agentls.tools.base import ToolError, ToolResult

if TYPE_CHECKING:
    from agentls.session.compaction import Compactor

# Times a turn's Stop hooks may send the model back to work.
STOP_LIMIT = 3
# The sessions whose SessionStart hooks ran in this process (later turns are not a start; their
# SessionEnd hooks run when the Agent closes).
_started: set[str] = set()
# Notification hooks running (each a task of its own: a question never waits for them).
_notifying: set[asyncio.Task[Verdict]] = set()


class SessionHooks:
    """The hooks of one turn of a session (read again at each turn)."""

    def __init__(
        self,
        policy: Policy,
        root: Path,
        state: SessionState,
        store: Store,
        emit: Callable[[Any], None],
        subagent: bool = False,
    ) -> None:
        self.root = root
        self.state = state
        self.store = store
        self.emit = emit
        self.subagent = subagent
        self.set: HookSet = load_hooks(policy.settings, root)
        self.stop_sent = 0
        # A hook answered `continue: false`: the turn ends after this step.
        self.stopped = False

    @property
    def session_id(self) -> str:
        return self.state.record.id

    def payload(self, event: str, **more: Any) -> dict[str, Any]:
        """The fields every event's stdin has (Claude Code's names)."""
        return {
            "session_id": self.session_id,
            "transcript_path": "",
            "cwd": str(self.root),
            "hook_event_name": event,
            "permission_mode": "plan" if self.state.record.mode == "plan" else "default",
            **more,
        }

    async def fire(
        self,
        event: str,
        payload: dict[str, Any],
        value: str | None = None,
        tool: str | None = None,
        plain_context: bool = False,
    ) -> Verdict:
        """Run the event's hooks (those whose matcher matches `value`), each shown as an event."""
        hooks = self.set.for_event(event, value)
        if not hooks:
            return Verdict()
        verdict = await run_hooks(hooks, payload, self.root, plain_context)
        for run in verdict.runs:
            self.emit(
                HookEvent(
                    session_id=self.session_id,
                    event=event,
                    command=run.hook.command,
                    source=str(run.hook.source),
                    duration_ms=run.duration_ms,
                    outcome=run.outcome,
                    exit_code=run.exit_code,
                    message=run.message or None,
                    tool=tool,
                )
            )
        if verdict.stop:
            self.stopped = True
        return verdict

    async def on_prompt(self, text: str) -> list[Part] | None:
        """SessionStart (the session's first prompt in this process) and UserPromptSubmit: the
        parts their context adds to the prompt; None when a hook blocked the prompt. Not for a
        sub-agent's prompt (the task tool's: Claude Code runs neither for it)."""
        if self.subagent:
            return []
        added: list[str] = []
        if self.session_id not in _started:
            _started.add(self.session_id)
            for notice in self.set.notices:
                self.emit(ErrorEvent(session_id=self.session_id, message=notice))
            source = "resume" if self.state.messages else "startup"
            start = await self.fire(
                "SessionStart", self.payload("SessionStart", source=source), source, None, True
            )
            added += start.context
        submit = await self.fire(
            "UserPromptSubmit", self.payload("UserPromptSubmit", prompt=text), None, None, True
        )
        if submit.blocked:
            why = f": {submit.reason}" if submit.reason else ""
            message = f"A UserPromptSubmit hook blocked the prompt{why}"
            self.emit(ErrorEvent(session_id=self.session_id, message=message))
            return None
        added += submit.context
        return [TextPart(text=f"[hook context]\n{c}") for c in added]

    async def before_tool(self, part: ToolPart) -> tuple[str | None, dict[str, Any] | None]:
        """PreToolUse: raises ToolError (the model reads it) when a hook blocks the call;
        returns the hooks' permissionDecision "allow" or "ask" (or None), and the call's input
        as a hook's updatedInput changed it (or None): the tool checks it as any input, and the
        permission rules judge the changed call."""
        name = claude_name(part.tool)
        payload = self.payload(
            "PreToolUse",
            tool_name=name,
            tool_input=claude_input(part.tool, part.input, self.root),
            tool_use_id=part.call_id,
        )
        verdict = await self.fire("PreToolUse", payload, name, name)
        if verdict.blocked or verdict.permission == "deny":
            why = verdict.reason or "no reason given"
            raise ToolError(f"A PreToolUse hook blocked this {name} call: {why}")
        updated = verdict.updated_input
        return verdict.permission, None if updated is None else agentls_input(part.tool, updated)

    async def after_tool(self, part: ToolPart, result: ToolResult) -> None:
        """PostToolUse, after a call that succeeded: a hook's block reason or additional context
        goes to the model after the tool's output."""
        name = claude_name(part.tool)
        payload = self.payload(
            "PostToolUse",
            tool_name=name,
            tool_input=claude_input(part.tool, part.input, self.root),
            tool_response=claude_response(
                part.tool, part.input, result.output, self.root, result.is_error
            ),
            tool_use_id=part.call_id,
        )
        verdict = await self.fire("PostToolUse", payload, name, name)
        notes = []
        if verdict.blocked and verdict.reason:
            notes.append(f"[PostToolUse hook] {verdict.reason}")
        notes += [f"[PostToolUse hook context] {c}" for c in verdict.context]
        if notes:
            result.output = "\n\n".join([result.output, *notes])

    async def stop_holds(self) -> bool:
        """Stop (SubagentStop): whether the turn goes on, a hook's reason sent to the model as
        one more step."""
        event = "SubagentStop" if self.subagent else "Stop"
        payload = self.payload(event, stop_hook_active=self.stop_sent > 0)
        verdict = await self.fire(event, payload)
        if not verdict.blocked or self.stop_sent >= STOP_LIMIT or self.stopped:
            return False
        self.stop_sent += 1
        why = verdict.reason or "a Stop hook asked you to go on"
        message = Message(
            id=new_id("msg"),
            session_id=self.session_id,
            role="user",
            created_at=now_ms(),
            parts=[TextPart(text=f"[{event} hook] {why}")],
        )
        self.state.messages.append(message)
        await self.store.add_message(message)
        return True

    async def before_compact(self, compactor: Compactor) -> None:
        """PreCompact ("auto"), when the compaction is about to run: shown, never blocking."""
        if compactor.needed() is not None:
            await self.pre_compact("auto")

    async def pre_compact(self, trigger: str) -> None:
        payload = self.payload("PreCompact", trigger=trigger, custom_instructions="")
        await self.fire("PreCompact", payload, trigger)

    def notify(self, message: str, kind: str) -> None:
        """Notification (`kind`: "permission_prompt" when a call waits for the user's answer),
        run beside the question, which never waits for it."""
        payload = self.payload("Notification", message=message, notification_type=kind)
        task = asyncio.ensure_future(self.fire("Notification", payload, kind))
        _notifying.add(task)
        task.add_done_callback(_notifying.discard)


async def end_sessions(
    policy: Policy,
    root: Path,
    states: list[SessionState],
    store: Store,
    emit: Callable[[Any], None],
) -> None:
    """SessionEnd (reason "other"), as the Agent closes, for each session whose SessionStart
    hooks ran in this process."""
    for state in states:
        if state.record.id not in _started:
            continue
        _started.discard(state.record.id)
        hooks = SessionHooks(policy, root, state, store, emit)
        await hooks.fire("SessionEnd", hooks.payload("SessionEnd", reason="other"), "other")


def summary(event: HookEvent) -> str:
    """A hook's run in one line, as the terminal and an ACP client show it: "[hook] PreToolUse
    Bash: ./check.sh blocked (exit 2, 12 ms): rm is not allowed" (a long command cut)."""
    command = event.command if len(event.command) <= 60 else event.command[:59] + "…"
    tool = f" {event.tool}" if event.tool else ""
    code = f"exit {event.exit_code}, " if event.exit_code not in (None, 0) else ""
    head = f"[hook] {event.event}{tool}: {command} {event.outcome} ({code}{event.duration_ms} ms)"
    message = (event.message or "").strip().splitlines()
    return f"{head}: {message[0]}" if message else head
