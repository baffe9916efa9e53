"""What a session cost, whole: its own steps, its sub-agents' (the task tool's child sessions,
counted into the parent's totals as they end, and kept apart as the parent's `subagent_usage`
too, so a front end can show the share), and a step stopped before the API reported its output
(its tokens estimated: `usage_estimated` marks the totals). Migration 12; Store inherits the
writes (SessionUsage), so repository.py stays one concern."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentls.history import Usage, now_ms

_SUMS = ", ".join(
    f"'{name}', SUM(c.{name})"
    for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
)
_TOTALS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd")

# Migration 12's statements (store/schema.py MIGRATIONS): never edit them, append a new migration.
MIGRATION = (
    # The sub-agents' share of the session's totals, as a Usage's JSON; NULL: none ran.
    "ALTER TABLE sessions ADD COLUMN subagent_usage TEXT",
    # 1: some of the totals are estimated (a step stopped before the API reported them).
    "ALTER TABLE sessions ADD COLUMN usage_estimated INTEGER NOT NULL DEFAULT 0",
    # Sessions stored before: their sub-agents' usage was in no total. It is now.
    "UPDATE sessions SET subagent_usage = (SELECT json_object("
    f"{_SUMS}, 'cost_usd', round(SUM(c.cost_usd), 8)) FROM sessions c"
    " WHERE c.parent_id = sessions.id)"
    " WHERE id IN (SELECT parent_id FROM sessions WHERE parent_id IS NOT NULL)",
    "UPDATE sessions SET "
    + ", ".join(f"{n} = {n} + json_extract(subagent_usage, '$.{n}')" for n in _TOTALS)
    + " WHERE subagent_usage IS NOT NULL",
)


def add_session_usage(session_id: str, usage: Usage) -> tuple[str, tuple[Any, ...]]:
    """The statement adding `usage` to the session's totals (and touching updated_at); added in
    SQL rather than read-modify-write here, so no addition can be lost."""
    return (
        "UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,"
        " cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ?,"
        " cost_usd = round(cost_usd + ?, 8), usage_estimated = MAX(usage_estimated, ?),"
        " updated_at = ? WHERE id = ?",
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
            usage.cost_usd,
            1 if usage.estimated else 0,
            now_ms(),
            session_id,
        ),
    )


def subagent_usage_of(raw: str | None) -> Usage | None:
    """The stored sub-agents' share; a value no agentls wrote reads as none."""
    if not raw:
        return None
    try:
        return Usage.model_validate_json(raw)
    except ValueError:
        return None


class SessionUsage:
    """The sub-agent usage write of Store (which defines _execute)."""

    async def _execute(self, sql: str, params: Sequence[Any]) -> None:
        raise NotImplementedError  # Store's

    async def add_subagent_usage(self, session_id: str, usage: Usage) -> None:
        """A sub-agent of the session ended: its usage counts into the session's totals and
        into its sub-agents' share, in one statement (SQLite computes every SET from the row as
        it was)."""
        sql, params = add_session_usage(session_id, usage)
        old = "COALESCE(json_extract(subagent_usage, '$.{0}'), 0)"
        sums = ", ".join(f"'{n}', {old.format(n)} + ?" for n in _TOTALS[:4])
        share = (
            f"subagent_usage = json_object({sums}, 'cost_usd',"
            f" round({old.format('cost_usd')} + ?, 8), 'estimated',"
            " json(CASE WHEN ? OR json_extract(subagent_usage, '$.estimated') THEN 'true'"
            " ELSE 'null' END)), "
        )
        values = (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
            usage.cost_usd,
            1 if usage.estimated else 0,
        )
        await self._execute(sql.replace("SET ", "SET " + share, 1), (*values, *params))
