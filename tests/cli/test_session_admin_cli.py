"""`agentls sessions --search`, `agentls export` (Markdown), rename, fork and delete, as separate
processes against a real store."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from agentls.store import Store
from messages_api import MessagesAPIServer, reply, text
from tests.cli.test_cli import agentls


def titles(env: dict[str, str], *args: str) -> list[str]:
    listed = agentls("sessions", "--json", *args, env=env)
    assert listed.returncode == 0, listed.stderr
    return [s["title"] for s in json.loads(listed.stdout)]


def test_search_export_rename_fork_delete(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    api.enqueue(reply(text("Use a ```fenced``` block.")), reply(text("Fine.")))
    first = agentls("run", "--cwd", str(workspace), "--json", "how to quote code?", env=env)
    assert first.returncode == 0, first.stderr
    session = json.loads(first.stdout.splitlines()[-1])["sessionId"]
    assert agentls("run", "--cwd", str(workspace), "unrelated", env=env).returncode == 0

    assert titles(env, "--search", "fenced") == ["how to quote code?"]
    assert titles(env, "--search", "nothing-like-this") == []

    exported = agentls("export", session, env=env)
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.startswith("# how to quote code?\n")
    # A fence inside the text does not end the document's structure: it is the text as written.
    assert "## Assistant\n\nUse a ```fenced``` block." in exported.stdout

    renamed = agentls("rename", session, "Quoting", env=env)
    assert renamed.returncode == 0 and renamed.stdout.strip() == "Quoting"
    assert "Quoting" in titles(env)

    async def first_message() -> str:
        store = await Store.open(Path(env["AGENTLS_DATA_DIR"]) / "agentls.db")
        try:
            return (await store.load_messages(session))[0].id
        finally:
            await store.close()

    forked = agentls("fork", session, asyncio.run(first_message()), "--title", "Again", env=env)
    assert forked.returncode == 0, forked.stderr
    assert forked.stdout.split()[1:] == ["Again"]
    fork_export = agentls("export", forked.stdout.split()[0], env=env).stdout
    assert "how to quote code?" in fork_export and "fenced" not in fork_export

    deleted = agentls("delete", session, env=env)
    assert deleted.returncode == 0 and deleted.stdout.strip() == f"deleted {session}"
    assert "Quoting" not in titles(env)
    missing = agentls("export", session, env=env)
    assert missing.returncode == 2 and "unknown sessionId" in missing.stderr


def test_a_title_with_terminal_escapes_is_listed_visibly(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path
) -> None:
    # A title may come from an editor (agent/renameSession): listing it never writes a raw
    # escape sequence (a window title change, a clipboard write) to the terminal.
    workspace = tmp_path / "ws"
    workspace.mkdir()
    api.enqueue(reply(text("ok")))
    first = agentls("run", "--cwd", str(workspace), "--json", "hello", env=env)
    session = json.loads(first.stdout.splitlines()[-1])["sessionId"]
    assert agentls("rename", session, "a\x1b]52;c;ZXZpbA==\x07b", env=env).returncode == 0
    listed = agentls("sessions", env=env)
    assert listed.returncode == 0, listed.stderr
    assert "\x1b" not in listed.stdout and "\x07" not in listed.stdout
    assert "a\\x1b]52;c;ZXZpbA==\\x07b" in listed.stdout
