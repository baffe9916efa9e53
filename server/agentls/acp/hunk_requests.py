"""A proposal of several hunks asked about hunk by hunk over ACP: one `session/request_permission`
per hunk, one after the other, each about the same tool call with only that hunk's diff in its
content. ACP has no way for a client to say it reviews hunks itself, so every client is asked so.

They go one at a time, never together: Zed keeps one question per tool call and, when a second
request names a call that is already waiting, answers the first "cancelled" (its
request_tool_call_authorization replaces the call's waiting state). The first request also offers
the whole proposal (Accept all, the "always" options, Reject all), so a single click still
decides everything. The hunks kept are accepted together as one partial accept: Agent.approve
with the accepted texts (session/hunk_choice.py), the path of the VS Code panel's partial accept.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp.schema import (
    AllowedOutcome,
    FileEditToolCallContent,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from agentls.session import Question
from agentls.session.hunk_choice import ProposedHunk, accepted_texts, proposal_hunks
from agentls.workspace.hunks import apply

KEEP, DROP = "keep_hunk", "drop_hunk"
# The whole proposal's answers, offered with the first hunk: option id -> (decision, scope).
WHOLE: dict[str, tuple[str, str]] = {
    "allow_once": ("once", "session"),
    "allow_always": ("always", "session"),
    "allow_always_project": ("always", "project"),
    "reject_once": ("reject", "session"),
}

Ask = Callable[[ToolCallUpdate, list[PermissionOption]], Awaitable[RequestPermissionResponse]]


@dataclass
class HunkAnswer:
    """How the hunk by hunk questions ended: Agent.approve's arguments."""

    decision: str
    scope: str = "session"
    feedback: str | None = None
    accepted: dict[Path, str] | None = None


def asked_by_hunk(question: Question) -> list[ProposedHunk]:
    """The hunks to ask about one by one: those of a proposed change to one file of two hunks or
    more (none otherwise: the question is asked whole; a change to several files, a rename or a
    code action, is one question showing every file's change)."""
    if question.query.tool in ("ask_user", "exit_plan") or question.query.changes:
        return []
    hunks = proposal_hunks(question.query)
    return hunks if len(hunks) > 1 else []


def hunk_options(question: Question, index: int, count: int) -> list[PermissionOption]:
    options = [
        PermissionOption(
            option_id=KEEP, name=f"Keep hunk {index + 1} of {count}", kind="allow_once"
        )
    ]
    if index == 0:
        options.append(
            PermissionOption(
                option_id="allow_once", name=f"Accept all {count} hunks", kind="allow_once"
            )
        )
        if question.always:
            options += [
                PermissionOption(
                    option_id="allow_always",
                    name=f"{question.always} (this session)",
                    kind="allow_always",
                ),
                PermissionOption(
                    option_id="allow_always_project",
                    name=f"{question.always} (this project)",
                    kind="allow_always",
                ),
            ]
    options.append(
        PermissionOption(option_id=DROP, name=f"Drop hunk {index + 1}", kind="reject_once")
    )
    if index == 0:
        options.append(
            PermissionOption(option_id="reject_once", name="Reject all", kind="reject_once")
        )
    return options


def hunk_call(root: Path, call: ToolCallUpdate, ph: ProposedHunk, index: int, count: int) -> Any:
    """The tool call as the question about one hunk shows it: its title names the hunk, its
    content is that hunk's diff alone."""
    try:
        name = ph.path.relative_to(root).as_posix()
    except ValueError:
        name = str(ph.path)
    old = ph.old_text
    content = FileEditToolCallContent(
        type="diff", path=str(ph.path), old_text=old, new_text=apply(old or "", [ph.hunk])
    )
    title = f"{call.title}: hunk {index + 1} of {count} ({name}, {ph.where})"
    return call.model_copy(update={"title": title, "content": [content]})


def _feedback(response: RequestPermissionResponse) -> str | None:
    meta = response.field_meta or {}
    words = meta.get("feedback")
    return words.strip() if isinstance(words, str) and words.strip() else None


async def ask_by_hunk(
    root: Path, question: Question, call: ToolCallUpdate, hunks: list[ProposedHunk], ask: Ask
) -> HunkAnswer:
    """Ask about each hunk in turn (see the module's docstring). A cancelled or unknown answer
    rejects the whole proposal, as a whole question's would."""
    kept: list[int] = []
    notes: list[str] = []
    for index, ph in enumerate(hunks):
        response = await ask(
            hunk_call(root, call, ph, index, len(hunks)),
            hunk_options(question, index, len(hunks)),
        )
        note = _feedback(response)
        if note:
            notes.append(note)
        outcome = response.outcome
        option = outcome.option_id if isinstance(outcome, AllowedOutcome) else None
        if option == KEEP:
            kept.append(index)
        elif option == DROP:
            continue
        elif index == 0 and option in WHOLE:
            decision, scope = WHOLE[option]
            feedback = ("\n".join(notes) or None) if decision == "reject" else None
            return HunkAnswer(decision, scope, feedback)
        else:
            return HunkAnswer("reject", feedback="\n".join(notes) or None)
    texts = accepted_texts(question.query, kept)
    feedback = "\n".join(notes) or None
    if texts is None:
        return HunkAnswer("once")
    if not texts:
        return HunkAnswer("reject", feedback=feedback)
    return HunkAnswer("once", feedback=feedback, accepted=texts)
