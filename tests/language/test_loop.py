"""The language tools through the loop (the Agent, the real SDK against the local Messages API,
a real store): `references` then `rename` scripted, one question with every file's texts, the
edit rules of each file the rename touches, untrusted configs ignored, and the servers stopped
with the agent."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from agentls.config import load_settings
from agentls.language.headless import HeadlessLanguages
from agentls.trust import TrustStore, workspace_config
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.language.conftest import MAIN, language_servers, make_project
from tests.language.test_headless import alive


async def test_references_then_rename_through_the_loop(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"languageServers": language_servers()})
    make_project(h.root)
    api.enqueue(
        reply(tool_use("references", {"path": "shop/greet.py", "symbol": "greet", "line": 4})),
        reply(tool_use("read", {"path": "shop/greet.py"}), tool_use("read", {"path": "app.py"})),
        reply(
            tool_use("rename", {"path": "shop/greet.py", "symbol": "greet", "new_name": "salute"})
        ),
        reply(text("renamed")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "rename greet to salute"))
    asked = await h.wait_for("permission-request", timeout=60)
    assert asked.tool == "rename" and asked.title == "Rename greet to salute (2 files)"
    assert asked.always is None  # a change to several files is answered once
    changes = {Path(c.path).name: c for c in asked.changes}
    assert set(changes) == {"app.py", "greet.py"}
    assert changes["app.py"].old_text == MAIN and "salute(" in changes["app.py"].new_text
    assert "a/app.py" in asked.diff and "a/shop/greet.py" in asked.diff
    assert asked.wire()["changes"][0]["newText"]  # camelCase on the wire
    h.agent.approve(session.id, asked.request_id, "once")
    result = await asyncio.wait_for(turn, 60)
    assert result.text == "renamed", result.error

    bodies = h.accepted_requests()
    first = bodies[1]["messages"][-1]["content"][0]
    assert first["type"] == "tool_result" and "5 places in 2 files" in str(first["content"])
    assert "salute(" in (h.root / "app.py").read_text()
    assert "def salute(name):" in (h.root / "shop" / "greet.py").read_text()
    # The rename is one recorded change per file: reverting the turn puts both back.
    state = await h.agent.session(session.id)
    await h.agent.revert(session.id, state.messages[0].id)
    assert (h.root / "app.py").read_text() == MAIN
    assert "def greet(name):" in (h.root / "shop" / "greet.py").read_text()
    languages = h.agent.workspace.languages
    assert isinstance(languages, HeadlessLanguages)
    pids = languages.pids()
    assert pids and all(alive(p) for p in pids)
    await h.agent.aclose()
    assert not any(alive(p) for p in pids)


async def test_a_rename_into_a_file_the_rules_deny_is_refused(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    permissions = [
        {"tool": "edit", "action": "allow"},
        {"tool": "edit", "pattern": "app.py", "action": "deny"},
    ]
    h = await make_harness({"languageServers": language_servers(), "permissions": permissions})
    make_project(h.root)
    api.enqueue(
        reply(tool_use("read", {"path": "shop/greet.py"}), tool_use("read", {"path": "app.py"})),
        reply(tool_use("rename", {"path": "shop/greet.py", "symbol": "greet", "new_name": "hi"})),
        reply(text("could not")),
    )
    session = await h.agent.new_session()
    result = await asyncio.wait_for(h.agent.prompt(session.id, "rename"), 60)
    assert result.text == "could not"
    loaded = await h.store.load_messages(session.id)
    rename = loaded[-2].tool_parts()[0]
    assert rename.is_error and "a rule forbids rename on app.py" in (rename.output or "")
    assert h.of_type("permission-request") == []
    assert (h.root / "app.py").read_text() == MAIN  # neither file changed
    assert "def greet(name)" in (h.root / "shop" / "greet.py").read_text()


async def test_an_edit_allow_rule_renames_without_a_question(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness(
        {"languageServers": language_servers(), "permissions": {"edit": "allow"}}
    )
    make_project(h.root)
    api.enqueue(
        reply(tool_use("read", {"path": "shop/greet.py"}), tool_use("read", {"path": "app.py"})),
        reply(tool_use("rename", {"path": "shop/greet.py", "symbol": "greet", "new_name": "hi"})),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    result = await asyncio.wait_for(h.agent.prompt(session.id, "rename"), 60)
    assert result.text == "done" and h.of_type("permission-request") == []
    assert "hi(" in (h.root / "app.py").read_text()


def test_an_untrusted_workspace_config_cannot_name_language_servers(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".agentls").mkdir(parents=True)
    hostile = {
        "languageServers": {
            "python": {"command": ["sh", "-c", "touch pwned"], "extensions": [".py"]}
        }
    }
    (root / ".agentls" / "config.json").write_text(json.dumps(hostile))
    settings = load_settings(root)
    assert settings.language_servers is None
    assert settings.untrusted_notice is not None and "languageServers" in settings.untrusted_notice
    config = workspace_config(root)
    TrustStore().trust(config, config.read_bytes())  # the user confirmed it
    trusted = load_settings(root)
    assert trusted.language_servers is not None
    assert trusted.language_servers["python"].command[0] == "sh"


async def test_a_rename_that_touches_a_protected_path_asks_even_under_allow(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness(
        {"languageServers": language_servers(), "permissions": {"edit": "allow"}}
    )
    make_project(h.root)
    (h.root / ".agentls").mkdir()
    hook = h.root / ".agentls" / "hook.py"
    hook.write_text('from shop.greet import greet\n\ngreet("hook")\n')
    reads = [tool_use("read", {"path": p}) for p in ("shop/greet.py", "app.py", ".agentls/hook.py")]
    api.enqueue(
        reply(*reads),
        reply(tool_use("rename", {"path": "shop/greet.py", "symbol": "greet", "new_name": "hi"})),
        reply(text("stopped")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "rename"))
    asked = await h.wait_for("permission-request", timeout=60)
    assert asked.tool == "rename" and ".agentls/hook.py" in asked.diff
    h.agent.approve(session.id, asked.request_id, "reject", "not the hook")
    result = await asyncio.wait_for(turn, 60)
    assert result.text == "stopped"
    assert hook.read_text().startswith("from shop.greet import greet")
    assert (h.root / "app.py").read_text() == MAIN
