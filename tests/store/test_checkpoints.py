"""The reverts row (store/checkpoints.py) on a real SQLite file: kept per session, replaced by the
next revert, cleared, gone with its session; and the summary pointer a revert moves."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentls.store import Store
from agentls.store.checkpoints import RestoredFile


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    s = await Store.open(tmp_path / "agentls.db")
    yield s
    await s.close()


async def test_the_last_revert_is_kept_replaced_and_cleared(store: Store, tmp_path: Path) -> None:
    a = await store.create_session("a", "/w", "m")
    b = await store.create_session("b", "/w", "m")
    assert await store.last_revert(a.id) is None
    files = [
        RestoredFile("/w/x.py", "x = 1\n", "x = 2\n"),
        RestoredFile("/w/new.py", None, "made\n"),  # the agent created it: the revert deleted it
        RestoredFile("/w/ü.txt", "é\n", None),
    ]
    await store.save_revert(a.id, "msg_1", "both", ["msg_1", "msg_2"], files)
    await store.save_revert(b.id, "msg_9", "code", [], files[:1])
    kept = await store.last_revert(a.id)
    assert kept is not None
    assert (kept.message_id, kept.scope, kept.message_ids) == ("msg_1", "both", ["msg_1", "msg_2"])
    assert kept.files == files and kept.created_at > 0

    # A second revert replaces the row; it survives closing the store.
    await store.save_revert(a.id, "msg_2", "conversation", ["msg_2"], [])
    await store.close()
    again = await Store.open(tmp_path / "agentls.db")
    try:
        kept = await again.last_revert(a.id)
        assert kept is not None and (kept.message_id, kept.scope) == ("msg_2", "conversation")
        assert kept.message_ids == ["msg_2"] and kept.files == []
        assert await again.clear_revert(a.id) is True
        assert await again.last_revert(a.id) is None
        assert await again.clear_revert(a.id) is False  # none left: nothing had changed
        other = await again.last_revert(b.id)  # another session's row is untouched
        assert other is not None and other.files == files[:1]
        await again.delete_session(b.id)
        assert await again.last_revert(b.id) is None
    finally:
        await again.close()


async def test_the_summary_pointer_is_set_and_cleared(store: Store) -> None:
    record = await store.create_session("s", "/w", "m")
    await store.update_session(record.id, summary_message_id="msg_summary")
    fetched = await store.get_session(record.id)
    assert fetched is not None and fetched.summary_message_id == "msg_summary"
    await store.set_summary_message(record.id, None)
    fetched = await store.get_session(record.id)
    assert fetched is not None and fetched.summary_message_id is None
