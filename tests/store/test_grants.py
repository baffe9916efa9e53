"""Grants in the store: the `exact` flag, project grants by workspace root, and databases from
before either existed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agentls.store import SCHEMA_VERSION, Store, schema


async def test_session_grants_keep_their_exact_flag(tmp_path: Path) -> None:
    path = tmp_path / "agentls.db"
    async with await Store.open(path) as store:
        session = await store.create_session("t", "/w", "m")
        await store.add_grant(session.id, "write", "**", "allow", exact=True)
        await store.add_grant(session.id, "write", "**", "allow", exact=True)  # kept once
        await store.add_grant(session.id, "bash", "git status", "allow")
    async with await Store.open(path) as store:
        grants = await store.list_grants(session.id)
    assert grants == [("write", "**", "allow", True), ("bash", "git status", "allow", False)]
    assert grants[0].exact and not grants[1].exact


async def test_project_grants_are_per_root_numbered_and_revocable(tmp_path: Path) -> None:
    path = tmp_path / "agentls.db"
    async with await Store.open(path) as store:
        label = "Always allow `git status` commands"
        await store.add_project_grant("/a", "bash", "git status", "allow", exact=False, label=label)
        await store.add_project_grant("/a", "bash", "git status", "allow", exact=False, label=label)
        await store.add_project_grant(
            "/a", "edit", "src/x.py", "allow", exact=True, label="Always allow edits of src/x.py"
        )
        await store.add_project_grant("/b", "bash", "ls", "allow", exact=False, label="ls")
    async with await Store.open(path) as store:
        listed = await store.list_project_grants("/a")
        assert [(g.tool, g.pattern, g.exact, g.label) for g in listed] == [
            ("bash", "git status", False, label),
            ("edit", "src/x.py", True, "Always allow edits of src/x.py"),
        ]
        assert await store.revoke_project_grant("/a", 3) is None
        assert await store.revoke_project_grant("/a", 0) is None
        revoked = await store.revoke_project_grant("/a", 1)
        assert revoked is not None and revoked.pattern == "git status"
        assert [g.pattern for g in await store.list_project_grants("/a")] == ["src/x.py"]
        assert [g.pattern for g in await store.list_project_grants("/b")] == ["ls"]


async def test_a_database_from_before_the_exact_flag_keeps_its_grants(tmp_path: Path) -> None:
    """A version-3 database (no `exact`, no project grants) is migrated in place: its grants
    read as globs, as they were given."""
    path = tmp_path / "agentls.db"
    conn = sqlite3.connect(path)
    for migration in schema.MIGRATIONS[:3]:
        for statement in migration:
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 3")
    conn.execute(
        "INSERT INTO sessions (id, title, cwd, model, created_at, updated_at)"
        " VALUES ('ses_old', 't', '/w', 'm', 0, 0)"
    )
    conn.execute(
        "INSERT INTO permission_grants (session_id, tool, pattern, action, created_at)"
        " VALUES ('ses_old', 'bash', 'git status', 'allow', 0)"
    )
    conn.commit()
    conn.close()
    async with await Store.open(path) as store:
        assert await store.list_grants("ses_old") == [("bash", "git status", "allow", False)]
        assert await store.list_project_grants("/w") == []
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    check.close()
