"""An edit's reach through the loop (the Agent, the real SDK against the local Messages API, the
real jedi-language-server from `languageServers`): the edit tool's result names the other file
whose calls the edit broke."""

from __future__ import annotations

import asyncio

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.language.conftest import language_servers, make_project


async def test_the_edit_tool_reports_the_callers_it_broke(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"languageServers": language_servers(), "permissions": {"*": "allow"}})
    make_project(h.root)
    # jedi started first: a start slower than the reach's time limit under load is another matter.
    app = h.root / "app.py"
    await h.agent.workspace.languages.request(
        "textDocument/documentSymbol", {"textDocument": {"uri": app.as_uri()}}, app
    )
    edit = {
        "path": "shop/greet.py",
        "old_string": "def greet(name):",
        "new_string": "def greet(name, punctuation):",
    }
    api.enqueue(
        reply(tool_use("read", {"path": "shop/greet.py"})),
        reply(tool_use("edit", edit)),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    result = await asyncio.wait_for(h.agent.prompt(session.id, "add a parameter"), 60)
    assert result.text == "done", result.error
    edited = str(h.accepted_requests()[2]["messages"][-1]["content"][0]["content"])
    assert (
        "Other files using what this edit changed (greet): 2 new error(s) in 1 file(s):" in edited
    )
    assert (
        "  app.py:\n    line 5: error [agentls] call of greet() (shop/greet.py): missing a "
        "required argument: 'punctuation'"
    ) in edited
