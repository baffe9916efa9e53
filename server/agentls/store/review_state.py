"""Review "after" (the `review` setting): the files the agent changed that the user has not yet
kept or undone, each with the text the user last kept (its base). The pending change of a file is
base -> the agent's latest text. Store inherits these reads and writes (ReviewState)."""

from __future__ import annotations

# Migration 11 (store/schema.py MIGRATIONS): never edit it, append a new migration.
MIGRATION = (
    """
    CREATE TABLE review_pending (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        -- The text the user last kept; NULL: the file did not exist (the agent created it).
        base TEXT,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, path)
    )
    """,
)


class ReviewState:
    """Store's reads and writes of review_pending (filled in with agent/review)."""
