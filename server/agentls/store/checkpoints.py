"""The session's last revert (agent/revert), kept so agent/unrevert can redo it: which messages it
dropped and which files it restored, with the agent's version of each to put back. One row per
session; a new revert replaces it, a prompt sent after it clears it. Store inherits these reads
and writes (Checkpoints)."""

from __future__ import annotations

# Migration 10 (store/schema.py MIGRATIONS): never edit it, append a new migration.
MIGRATION = (
    """
    CREATE TABLE reverts (
        session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
        message_id TEXT NOT NULL,
        scope TEXT NOT NULL,
        -- JSON: the ids of the messages it marked reverted, oldest first.
        message_ids TEXT NOT NULL,
        -- JSON: [{path, agent}], each file it restored and the agent's text to put back
        -- (agent null: the agent had deleted it).
        files TEXT NOT NULL,
        created_at INTEGER NOT NULL
    )
    """,
)


class Checkpoints:
    """Store's reads and writes of the reverts table (filled in with agent/unrevert)."""
