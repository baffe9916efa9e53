"""Going on with a session without its id: the workspace's last one (`agentls -c`, `agentls run
--continue`), one picked from a list (`agentls --resume`), and the one command printed at the end
of every run and conversation that resumes it."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentls.cli.terminal import visible

if TYPE_CHECKING:
    from agentls.session import Agent

PICK_LIMIT = 20


def resume_hint(session_id: str) -> str:
    return f"To go on with this session: agentls --resume {session_id}"


async def last_session(agent: Agent, root: Path) -> Any:
    """The workspace's most recently updated session of the user's own (a sub-agent's are its
    task's), or None."""
    for record in await agent.list_sessions(limit=100, cwd=root):
        if record.parent_id is None:
            return record
    return None


def session_lines(records: list[Any]) -> list[str]:
    """The list --resume shows: number, when, cost, title."""
    lines = []
    for number, r in enumerate(records, 1):
        when = datetime.fromtimestamp(r.updated_at / 1000).strftime("%Y-%m-%d %H:%M")
        cost = f"{'~' if r.usage.estimated else ''}${r.usage.cost_usd:.4f}"
        lines.append(f"{number:>3}. {when}  {cost:>9}  {visible(r.title)}")
    return lines


async def pick_session(agent: Agent, root: Path) -> str | None:
    """Ask which of the workspace's recent sessions to go on with; None: none, or none chosen
    (said)."""
    from prompt_toolkit import PromptSession

    records = [r for r in await agent.list_sessions(limit=100, cwd=root) if r.parent_id is None]
    records = records[:PICK_LIMIT]
    if not records:
        print(f"agentls: no sessions in {root} yet", file=sys.stderr)
        return None
    print(f"Sessions of {visible(str(root))}, newest first:")
    for line in session_lines(records):
        print(line)
    asking: PromptSession[str] = PromptSession()
    while True:
        try:
            reply = (await asking.prompt_async("Go on with which one? [1] ")).strip() or "1"
        except (EOFError, KeyboardInterrupt):
            return None
        if reply.isdigit() and 1 <= int(reply) <= len(records):
            chosen: str = records[int(reply) - 1].id
            return chosen
        print(f"A number from 1 to {len(records)}, please (Ctrl+D to leave).")
