"""Tool calls: running a step's calls (read-only ones together), the doom loop, and the context
each call gets (CallContext: paths, permissions, progress; RecordingWorkspace: its edits kept
for a revert)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.events import ProgressEvent, TodoItem, ToolResultEvent
from agentls.history import Message, ToolImage, ToolPart, clean_text
from agentls.permission.grants import Grant, grant_for
from agentls.permission.rules import PathFilter, PermissionRules
from agentls.permission.types import SEVERITY
from agentls.session.folder_access import in_other_folder, kept_from_review, scope_of
from agentls.session.hooks import SessionHooks
from agentls.session.hunk_choice import kept_hunks_of
from agentls.session.modes import approve_plan, plan_refusal, set_todos
from agentls.session.policy import Policy
from agentls.session.questions import AskContext, Asker, ask_user, unattended_refusal
from agentls.session.review import PendingReview, applies_at_once
from agentls.session.skill_use import load_skill, reads_skill_file, turn_grants
from agentls.session.state import SessionState
from agentls.store import Store, StoreError
from agentls.tools.base import (
    Accepted,
    PathAuthorization,
    PermissionDenied,
    PermissionQuery,
    ToolError,
    ToolResult,
)
from agentls.tools.registry import ToolRegistry
from agentls.tools.support.outputs import is_saved_output
from agentls.tools.support.sandbox import SandboxPolicy
from agentls.workspace.folders import folders_of
from agentls.workspace.protocol import EditOutcome, FileChange, Languages, Workspace

log = logging.getLogger(__name__)

EventSink = Callable[[Any], None]
# The task tool's sub-agent (session/subagents.py): (the calls' env, the call id, description,
# prompt, agent type) -> its result.
TaskRun = Callable[["CallEnv", str, str, str, str | None], Awaitable[ToolResult]]

CANCELLED_OUTPUT = "Cancelled: the user stopped the turn before this tool call finished."


@dataclass
class CallEnv:
    """What the tool calls of one turn share."""

    state: SessionState
    root: Path
    workspace: Workspace
    store: Store
    registry: ToolRegistry
    policy: Policy
    ask: Asker
    emit: EventSink
    # None: no sub-agents here (a sub-agent's own calls: depth 1).
    run_task: TaskRun | None = None
    hooks: SessionHooks | None = None  # the user's hooks (session/hooks.py)

    @property
    def session_id(self) -> str:
        return self.state.record.id


def publish_result(emit: EventSink, session_id: str, part: ToolPart) -> None:
    emit(
        ToolResultEvent(
            session_id=session_id,
            call_id=part.call_id,
            tool=part.tool,
            output=part.output or "",
            is_error=part.is_error,
            status=part.status,
            title=part.title,
        )
    )


class ToolCalls:
    """Runs the tool calls of one turn, step after step; remembers them for the doom loop."""

    def __init__(self, env: CallEnv) -> None:
        self.env = env
        self.recent_calls: list[str] = []

    def read_only(self, part: ToolPart) -> bool:
        tool = self.env.registry.get(part.tool)
        return tool is not None and tool.read_only

    async def save(self, message: Message, part: ToolPart) -> None:
        # By identity: two parts may be equal, and each has its own row.
        index = next(i for i, p in enumerate(message.parts) if p is part)
        await self.env.store.save_part(message.id, index, part)

    def publish(self, part: ToolPart) -> None:
        publish_result(self.env.emit, self.env.session_id, part)

    async def run(self, message: Message, parts: list[ToolPart]) -> bool:
        """Run the message's tool calls; returns True when the doom loop ended the turn."""
        threshold = self.env.policy.settings.doom_loop_threshold
        batches: list[list[ToolPart]] = []
        for part in parts:
            if self.read_only(part) and batches and all(map(self.read_only, batches[-1])):
                batches[-1].append(part)
            else:
                batches.append([part])
        doom = False
        for batch in batches:
            runnable: list[ToolPart] = []
            for part in batch:
                if part.finished:  # invalid input, already answered
                    self.publish(part)
                    continue
                if doom:
                    part.status = "error"
                    part.output = (
                        "Not run: the turn ended because the same call repeated (doom loop)."
                    )
                    await self.save(message, part)
                    self.publish(part)
                    continue
                key = part.tool + "\0" + json.dumps(part.input, sort_keys=True)
                self.recent_calls.append(key)
                if (
                    len(self.recent_calls) >= threshold
                    and len(set(self.recent_calls[-threshold:])) == 1
                ):
                    doom = True
                    part.status = "error"
                    part.output = (
                        f"Not run: this is the {threshold}th identical {part.tool} call in a row. "
                        "The turn was stopped to break the loop; try a different approach."
                    )
                    await self.save(message, part)
                    self.publish(part)
                    continue
                runnable.append(part)
            if len(runnable) == 1:
                await self.run_one(message, runnable[0])
            elif runnable:
                await asyncio.gather(*(self.run_one(message, p) for p in runnable))
        return doom

    async def run_one(self, message: Message, part: ToolPart) -> None:
        registry = self.env.registry
        tool = registry.get(part.tool)
        part.status = "running"
        await self.save(message, part)
        ctx: CallContext | None = None
        try:
            if tool is None:
                known = ", ".join(registry.names())
                raise ToolError(f"Unknown tool {part.tool!r}. The tools are: {known}.")
            params = tool.parse(part.input)
            ctx = CallContext(self.env, message.id, part)
            if self.env.hooks is not None:  # PreToolUse: raises ToolError when a hook blocks
                ctx.hook_permission, changed = await self.env.hooks.before_tool(part)
                params = params if changed is None else tool.parse(changed)  # updatedInput
            if self.env.state.record.mode == "plan":  # refused before any question
                refusal = plan_refusal(tool, params)
                if refusal is not None:
                    raise ToolError(refusal)
            result = await tool.run(params, ctx)
        except asyncio.CancelledError:
            part.status = "cancelled"
            part.output = CANCELLED_OUTPUT
            raise
        except (PermissionDenied, ToolError) as exc:
            result = ToolResult(str(exc), is_error=True)
        except StoreError:  # the store failed (a full disk): it ends the turn (fail_on_store)
            raise
        except Exception as exc:  # a tool bug must not end the session
            log.exception("tool %s failed", part.tool)
            result = ToolResult(
                f"The {part.tool} tool failed unexpectedly: {exc.__class__.__name__}: {exc}",
                is_error=True,
            )
        if ctx is not None and self.env.hooks is not None and not result.is_error:
            await self.env.hooks.after_tool(part, result)  # PostToolUse
        if ctx is not None and ctx.notes:
            result.output = "\n\n".join([result.output, *ctx.notes])
        if ctx is not None and ctx.kept_hunks is not None:
            part.kept_hunks = ctx.kept_hunks  # stored: the panel says "1 of 2 hunks kept"
        part.status = "error" if result.is_error else "completed"
        # Tool output is data from anywhere (file names, command output): storable UTF-8.
        part.output = clean_text(result.output)
        if result.title:
            part.title = clean_text(result.title)
        # Images a tool returned (an MCP server's): (media type, base64 data) each.
        images = result.metadata.get("images")
        if images:
            part.images = [ToolImage(media_type=m, data=d) for m, d in images]
        await self.save(message, part)
        self.publish(part)


class CallContext(PathAuthorization):
    """The ToolContext of one tool call: paths, permissions and progress, bound to its session."""

    def __init__(self, env: CallEnv, message_id: str, part: ToolPart) -> None:
        self._env = env
        self._policy = env.policy
        self.root = env.root
        self.folders = folders_of(env.workspace)  # every workspace folder (workspace/folders.py)
        self._recording = RecordingWorkspace(env.workspace, env.store, env.session_id, message_id)
        self.workspace: Workspace = self._recording
        self.ledger = env.state.ledger
        self.call_id = part.call_id
        self.session_id = env.session_id
        self.kept_hunks: list[bool] | None = None  # a partial accept's hunks (ToolPart.kept_hunks)
        settings = env.policy.settings
        self.sandbox = SandboxPolicy.from_settings(settings)
        # Said to the model after the tool's own output (e.g. that "always" was not offered).
        self.notes: list[str] = []
        # A PreToolUse hook's permissionDecision: "allow" answers a rule's question (never a
        # deny), "ask" asks where a rule allows.
        self.hook_permission: str | None = None

    @property
    def rules(self) -> PermissionRules:
        """The configured rules, then the project's grants, then the session's (and what the
        skills loaded in this turn allow)."""
        state = self._env.state
        return self._policy.rules_with([*state.grants, *turn_grants(state)])

    def is_outside(self, path: Path) -> bool:
        return self.folders.is_outside(path)

    def relative(self, path: Path) -> str:
        return self.folders.relative(path)

    def resolve_path(self, raw: str | None, *, tool: str) -> Path:
        root = self.root
        if raw is None or raw.strip() in ("", "."):
            return root
        if "\0" in raw:
            raise ToolError("The path contains a NUL byte, which no file name can hold.")
        candidate = Path(os.path.expanduser(raw.strip()))
        if not candidate.is_absolute():
            candidate = self.folders.join(str(candidate))
        resolved = Path(os.path.realpath(candidate))
        if self.is_outside(resolved):
            if tool == "read" and is_saved_output(self.session_id, resolved):
                return resolved  # the session's own saved output (tools/support/outputs.py)
            if self.rules.opens_outside(tool, str(resolved)):
                return resolved
            where = ", ".join(str(r) for r in self.folders.roots)
            raise ToolError(
                f"{raw} is outside the workspace ({where}). Paths outside it are refused unless a "
                "permission rule with a pattern naming that directory allows them."
            )
        return resolved

    def may_show(self, path: Path) -> bool:
        return self._file_action(self.rules, "read", path) == "allow"

    def show_filter(self, base: Path) -> PathFilter | None:
        """may_show for every file under directory `base` at once, by paths relative to it: the
        rules are read once, not once a file (glob and grep list thousands)."""
        scope = scope_of(self.folders, self._policy, base)
        if scope.rules is not None and scope.root is not None:  # another folder: its own rules
            return scope.rules.read_filter(scope.root, base)
        return self.rules.read_filter(self.root, base)

    async def authorize(self, query: PermissionQuery) -> Accepted | None:
        if (
            query.tool == "read"
            and query.path is not None
            and is_saved_output(self.session_id, query.path)
        ):
            return None  # a long output this session saved (tools/support/outputs.py): its own file
        action = self._action(query)
        if (
            action in ("allow", "ask")
            and self._env.state.record.parent_id is None
            and applies_at_once(
                self._policy.settings,
                query,
                lambda p: kept_from_review(self.folders, p),
                lambda p: self.folders.inside_name(p) or str(p),
                self.root,
            )
        ):  # review "after": applied without a question, pending review (session/review.py);
            # an edit a rule allows is tracked too, so the review shows every change. Not for a
            # sub-agent: its session's review list is shown nowhere, so its edits still ask.
            env = self._env
            self._recording.review = PendingReview(env.store, env.emit, self.session_id)
            return None
        if action == "allow":
            return None
        if action == "deny":
            raise self._denied(query)
        return await self._ask(query)

    def _action(self, query: PermissionQuery) -> str:
        """What the rules say of the call: allow, ask or deny."""

        def evaluate(rules: PermissionRules) -> str:
            if query.changes:  # a change to several files: the strictest of their answers
                return max(
                    (self._file_action(rules, query.tool, c.path) for c in query.changes),
                    key=SEVERITY.__getitem__,
                )
            if query.path is not None and in_other_folder(self.folders, query.path):
                return self._file_action(rules, query.tool, query.path)
            return rules.evaluate(
                query.tool,
                query.subject,
                outside_workspace=query.outside_workspace,
                root=self.root,
                sandboxed=query.sandboxed,
            )

        # The configuration first: a grant answers a question, it never overrides a deny (one
        # configured after the grant was given included). Grants are allows at the end of the
        # list, so they can only turn this "ask" into "allow".
        policy = self._policy
        action = evaluate(policy.rules)
        state = self._env.state
        if action == "deny" and reads_skill_file(policy.rules, state, query.tool, query.subject):
            action = "allow"  # a file of a skill loaded in this turn (skill_use.py)
        if action == "ask" and (policy.project_grants or state.grants or turn_grants(state)):
            action = evaluate(self.rules)
        if self.hook_permission is not None and action != "deny":
            action = "ask" if self.hook_permission == "ask" else "allow"
        return action

    def _denied(self, query: PermissionQuery) -> PermissionDenied:
        subject = query.subject
        if query.changes:
            subject = ", ".join(
                self.relative(c.path)
                for c in query.changes
                if self._file_action(self.rules, query.tool, c.path) == "deny"
            )
        return PermissionDenied(
            f"Permission denied: a rule forbids {query.tool} on {subject}. Do not retry it; "
            "tell the user or find another way."
        )

    async def _ask(self, query: PermissionQuery) -> Accepted | None:
        """The user's answer to the call; raises PermissionDenied for anything but a yes."""
        # A change to several files is answered once; "always" is not offered for it.
        grant = (
            None
            if query.changes or in_other_folder(self.folders, query.path)
            else grant_for(
                query.tool,
                query.subject,
                outside_workspace=query.outside_workspace,
                root=self.root,
            )
        )
        if self._env.hooks is not None:  # Notification hooks: the call waits for the user
            self._env.hooks.notify(
                f"agentls needs your permission for {query.title}", "permission_prompt"
            )
        answer = await self._env.ask(
            AskContext(
                self.session_id,
                self.call_id,
                query,
                always=grant.label if grant is not None else None,
            )
        )
        if answer.decision == "always" and grant is None:
            self.notes.append(
                '(The user answered "always", but "always" is not offered for this call: it was '
                "allowed this once. A similar call will ask again.)"
            )
            return None
        if answer.decision == "once":
            if answer.accepted is not None:
                self.kept_hunks = kept_hunks_of(query, answer.accepted)
                return Accepted(answer.accepted, (answer.feedback or "").strip() or None)
            return None
        if answer.decision == "always":
            assert grant is not None
            await self._grant_always(grant, answer.scope)
            return None
        raise _refusal(query, answer.decision, answer.feedback)

    def _file_action(self, rules: PermissionRules, tool: str, path: Path) -> str:
        """The rules' answer for a file, judged in its own folder (session/folder_access.py)."""
        scope = scope_of(self.folders, self._policy, path)
        return (scope.rules or rules).evaluate(
            tool, scope.subject, outside_workspace=scope.outside, root=scope.root
        )

    async def _grant_always(self, grant: Grant, scope: str) -> None:
        """Keep exactly the grant's rules (what its label said), for this session or for every
        later session of this workspace root."""
        policy, store = self._policy, self._env.store
        for rule in grant.rules:
            if scope == "project":
                if rule not in policy.project_grants:
                    policy.project_grants.append(rule)
                await store.add_project_grant(
                    str(self.root),
                    rule.tool,
                    rule.pattern,
                    rule.action,
                    exact=rule.exact,
                    label=grant.label,
                )
            else:
                self._env.state.grants.append(rule)
                await store.add_grant(
                    self.session_id, rule.tool, rule.pattern, rule.action, exact=rule.exact
                )

    def progress(self, message: str) -> None:
        self._env.emit(
            ProgressEvent(session_id=self.session_id, call_id=self.call_id, message=message)
        )

    async def load_skill(self, name: str) -> str:
        """skill: a skill's instructions; its allowed-tools allowed for the rest of the turn."""
        env = self._env
        return load_skill(env.state, env.root, env.policy.settings.workspace_trusted, name)

    async def set_todos(self, todos: list[TodoItem]) -> None:
        """todowrite: the session's todo list (see modes.set_todos)."""
        env = self._env
        await set_todos(env.state, env.store, env.emit, todos)

    async def run_task(self, description: str, prompt: str, agent: str | None) -> ToolResult:
        """task: a sub-agent's turn in a child session (see session/subagents.py)."""
        env = self._env
        if env.run_task is None:
            raise ToolError("A sub-agent cannot start another sub-agent: do the work yourself.")
        return await env.run_task(env, self.call_id, description, prompt, agent)

    async def ask_user(self, question: str, choices: list[str]) -> tuple[str, str | None]:
        """ask_user: a question to the user (see questions.ask_user)."""
        env = self._env
        return await ask_user(env.ask, env.session_id, self.call_id, question, choices)

    async def exit_plan(self, plan: str) -> tuple[str, str | None] | None:
        """exit_plan: the plan to the user (see modes.approve_plan)."""
        env = self._env
        return await approve_plan(env.state, env.store, env.emit, env.ask, self.call_id, plan)


def _refusal(query: PermissionQuery, decision: str, feedback: str | None) -> PermissionDenied:
    """Why the call was not allowed: the question timed out, no one could answer, or the user
    rejected it (with their feedback)."""
    if decision == "timeout":
        return PermissionDenied(
            f"Permission for {query.title} was not given: the approval request timed out. "
            "Nothing was done. Do not retry the same call; go on without it, or ask the user "
            "(ask_user) whether they want it."
        )
    if decision == "unattended":
        return PermissionDenied(unattended_refusal(f"for permission to {query.title}"))
    feedback = (feedback or "").strip()
    message = f"The user rejected this {query.tool} call ({query.title}). Nothing was done."
    if feedback:
        message += f"\nTheir feedback: {feedback}"
    message += (
        "\nDo not retry the same call. Adjust it to what they said, take another way, or ask "
        "the user what they want."
    )
    return PermissionDenied(message)


class RecordingWorkspace:
    """Delegates to the real workspace and records each applied change, so it can be reverted."""

    def __init__(self, inner: Workspace, store: Store, session_id: str, message_id: str) -> None:
        self._inner = inner
        self._store = store
        self._session_id = session_id
        self._message_id = message_id
        self.root = inner.root
        self.folders = folders_of(inner)
        self.languages: Languages = inner.languages
        # Set when the call was applied at once under review "after": what it writes is pending.
        self.review: PendingReview | None = None

    async def read_text(self, path: Path) -> str:
        return await self._inner.read_text(path)

    async def write_text(self, path: Path, new_text: str, old_text: str | None) -> EditOutcome:
        outcome = await self._inner.write_text(path, new_text, old_text)
        if outcome.applied:
            await self._store.add_file_change(
                self._session_id, self._message_id, str(path), old_text, new_text
            )
            if self.review is not None:
                await self.review.record([(path, old_text)])
        return outcome

    async def write_all(self, changes: Sequence[FileChange]) -> list[EditOutcome]:
        outcomes = await self._inner.write_all(changes)
        for change, outcome in zip(changes, outcomes, strict=True):
            if outcome.applied:
                await self._store.add_file_change(
                    self._session_id,
                    self._message_id,
                    str(change.path),
                    change.old_text,
                    change.new_text,
                )
        if self.review is not None:
            applied = zip(changes, outcomes, strict=True)
            await self.review.record([(c.path, c.old_text) for c, o in applied if o.applied])
        return outcomes

    async def delete(self, path: Path) -> EditOutcome:
        """No tool deletes files (only a revert does, on the real workspace): unrecorded."""
        return await self._inner.delete(path)
