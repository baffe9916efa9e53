"""`agentls run`'s workspace verifies edits as the language server does: through the whole loop
(real SDK, the local Messages API, real SQLite, real files), an edit's tool result tells the model
the problems it introduced, or that it fixed them; verifyCommands run only when trusted."""

from __future__ import annotations

import json
from typing import Any

from agentls.config import load_settings
from agentls.trust import TrustStore, workspace_config
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import Harness, HarnessFactory

# Each edit's own result is what these tests are about: the finish gate, which would send the
# errors they leave back to the model, is tested in tests/session/test_finish_gate.py.
ALLOW = {"permissions": {"*": "allow"}, "finishGate": "off"}


def last_tool_result(api: MessagesAPIServer) -> str:
    """The text of the tool result in the last request the model got."""
    [block] = [b for b in api.requests[-1].body["messages"][-1]["content"]]
    assert block["type"] == "tool_result" and not block.get("is_error"), block
    content: Any = block["content"]
    if isinstance(content, list):
        content = "".join(part["text"] for part in content if part["type"] == "text")
    return str(content)


async def edit(h: Harness, session_id: str, path: str, old: str, new: str) -> str:
    """One edit through the loop (read first); the tool result the model got for it."""
    h.api.enqueue(
        reply(tool_use("read", {"path": path})),
        reply(tool_use("edit", {"path": path, "old_string": old, "new_string": new})),
        reply(text("done")),
    )
    result = await h.agent.prompt(session_id, f"edit {path}")
    assert result.finish_reason == "end_turn"
    h.accepted_requests()
    return last_tool_result(h.api)


async def test_an_edit_that_breaks_python_then_one_that_fixes_it(
    make_harness: HarnessFactory,
) -> None:
    h = await make_harness(ALLOW)
    (h.root / "app.py").write_text("def main():\n    return 1\n")
    session = await h.agent.new_session()

    broken = await edit(h, session.id, "app.py", "def main():", "def main(:")
    assert broken.startswith("Edited app.py")
    assert (
        "Diagnostics (agentls syntax check only: not names, types or tests): 1 new problem(s) in app.py after this edit:"
        in broken
    )
    assert "  line 1: error [agentls] SyntaxError:" in broken

    fixed = await edit(h, session.id, "app.py", "def main(:", "def main():")
    assert (
        "Diagnostics (agentls syntax check only: not names, types or tests): no syntax errors in app.py. "
        "It fixed 1 problem(s) the file had before."
    ) in fixed
    assert (h.root / "app.py").read_text() == "def main():\n    return 1\n"


async def test_json_likewise(make_harness: HarnessFactory) -> None:
    h = await make_harness(ALLOW)
    (h.root / "conf").mkdir()
    (h.root / "conf" / "app.json").write_text('{\n  "port": 80\n}\n')
    session = await h.agent.new_session()

    broken = await edit(h, session.id, "conf/app.json", '"port": 80', '"port": 80,')
    assert "1 new problem(s) in conf/app.json after this edit:" in broken
    assert "  line 3: error [agentls] JSON:" in broken

    fixed = await edit(h, session.id, "conf/app.json", '"port": 80,', '"port": 81')
    assert "no syntax errors in conf/app.json. It fixed 1 problem(s)" in fixed
    assert json.loads((h.root / "conf" / "app.json").read_text()) == {"port": 81}


async def test_a_new_file_that_does_not_parse(make_harness: HarnessFactory) -> None:
    h = await make_harness(ALLOW)
    h.api.enqueue(
        reply(tool_use("write", {"path": "new.py", "content": "if True\n    pass\n"})),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "write it")
    result = last_tool_result(h.api)
    assert result.startswith("Created new.py")
    assert "1 new problem(s) in new.py after this edit:" in result


async def test_files_nothing_checks_get_no_summary(make_harness: HarnessFactory) -> None:
    h = await make_harness(ALLOW)
    (h.root / "notes.txt").write_text("one\n")
    session = await h.agent.new_session()
    result = await edit(h, session.id, "notes.txt", "one", "two")
    assert "Diagnostics" not in result


async def test_trusted_verify_commands_run_after_the_edit(make_harness: HarnessFactory) -> None:
    check = "grep -c return {path}"
    h = await make_harness({**ALLOW, "verifyCommands": {"*.py": check}})
    (h.root / "app.py").write_text("def main():\n    return 1\n")
    session = await h.agent.new_session()
    result = await edit(h, session.id, "app.py", "return 1", "return 2")
    assert "no syntax errors in app.py." in result
    assert f"Check `grep -c return {h.root / 'app.py'}` passed:\n1" in result


async def test_an_untrusted_workspace_config_runs_no_command(
    make_harness: HarnessFactory,
) -> None:
    h = await make_harness(ALLOW)
    hostile = {"verifyCommands": {"*.py": "touch PWNED"}}
    (h.root / ".agentls").mkdir()
    (h.root / ".agentls" / "config.json").write_text(json.dumps(hostile))
    # The settings as `agentls run` loads them: the workspace's file is not trusted.
    loaded = load_settings(h.root)
    assert loaded.verify_commands is None and loaded.untrusted_notice is not None
    h.agent.update_settings(
        h.agent.settings.model_copy(update={"verify_commands": loaded.verify_commands})
    )
    (h.root / "app.py").write_text("x = 1\n")
    session = await h.agent.new_session()
    result = await edit(h, session.id, "app.py", "x = 1", "x = 2")
    assert "no syntax errors in app.py." in result and "Check" not in result
    assert not (h.root / "PWNED").exists()
    # Confirmed (`agentls trust`, or the editor's question answered "Apply"): its commands run.
    config = workspace_config(h.root)
    TrustStore().trust(config, config.read_bytes())
    trusted = load_settings(h.root)
    h.agent.update_settings(
        h.agent.settings.model_copy(update={"verify_commands": trusted.verify_commands})
    )
    result = await edit(h, session.id, "app.py", "x = 2", "x = 3")
    assert "Check `touch PWNED` passed." in result
    assert (h.root / "PWNED").exists()
