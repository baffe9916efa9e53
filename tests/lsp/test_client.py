"""agentls.lsp.client: the protocol client the demo, the benchmarks and these tests share, against a
real `agentls serve` and the local Messages API; its on-disk workspace edits on real files."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from agentls.lsp.client import (
    AgentClient,
    StampingProtocol,
    agent_capabilities,
    apply_workspace_edit,
)
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.lsp.conftest import server_env


def _edit(uri: str, line: int, start: int, end: int, new_text: str) -> types.TextDocumentEdit:
    span = types.Range(types.Position(line, start), types.Position(line, end))
    return types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
        edits=[types.TextEdit(range=span, new_text=new_text)],
    )


def test_a_workspace_edit_creates_and_edits_files_on_disk(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = '😀'; y = 1\n", encoding="utf-8")
    new = tmp_path / "pkg" / "new.py"
    edit = types.WorkspaceEdit(
        document_changes=[
            # After the emoji (two UTF-16 units): the client counts in the server's units.
            _edit((tmp_path / "a.py").as_uri(), 0, 10, 15, "z = 2"),
            types.CreateFile(uri=new.as_uri()),
            _edit(new.as_uri(), 0, 0, 0, "made\n"),
        ]
    )
    changed = apply_workspace_edit(edit, "utf-16")
    assert (tmp_path / "a.py").read_text(encoding="utf-8") == "x = '😀'; z = 2\n"
    assert new.read_text() == "made\n"
    assert changed == [tmp_path / "a.py", new, new]


def test_an_edit_the_client_does_not_do_is_refused_before_touching_disk(tmp_path: Path) -> None:
    doomed = tmp_path / "keep.txt"
    doomed.write_text("kept\n")
    with pytest.raises(ValueError, match="DeleteFile"):
        apply_workspace_edit(
            types.WorkspaceEdit(document_changes=[types.DeleteFile(uri=doomed.as_uri())])
        )
    assert doomed.read_text() == "kept\n"
    with pytest.raises(ValueError, match="already exists"):
        apply_workspace_edit(
            types.WorkspaceEdit(document_changes=[types.CreateFile(uri=doomed.as_uri())])
        )
    assert doomed.read_text() == "kept\n"


def test_capabilities_declare_the_agent_flags() -> None:
    caps = agent_capabilities(approvals=False, diagnostics_push=True, saves_edits=True)
    assert caps.experimental == {
        "agent": {"approvals": False, "diagnosticsPush": True, "savesEdits": True}
    }
    assert caps.workspace is not None and caps.workspace.apply_edit


async def test_a_turn_through_serve_with_its_ask_approved_and_each_event_stamped(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with MessagesAPIServer() as api:
        api.enqueue(
            reply(tool_use("bash", {"command": "echo from-bash > out.txt"})),
            reply(text("done")),
        )
        client = AgentClient()
        await client.start(workspace, server_env(api, tmp_path / "data"))
        try:
            caps = agent_capabilities(approvals=True)
            options = {"model": "claude-sonnet-5-5", "permissions": {"bash": "ask"}}
            init = await client.initialize(client.initialize_params(workspace, caps, options))
            assert init.server_info is not None and init.server_info.name == "agentls"
            session = await client.new_session("client test")
            answer = await client.prompt(session, "run it")
            assert answer["finishReason"] == "end_turn"
            asked = await client.wait_event(session, "permission-request")
            resolved = await client.wait_event(session, "permission-resolved")
            assert resolved["requestId"] == asked["requestId"]
            assert resolved["decision"] == "once"
            assert (workspace / "out.txt").read_text() == "from-bash\n"
            kinds = [e["type"] for e in client.session_events(session)]
            assert kinds[0] == "turn-start" and kinds[-1] == "turn-end"
            protocol = client.client.protocol
            assert isinstance(protocol, StampingProtocol) and protocol.arrived_at > 0
        finally:
            await client.stop()
        assert client.pid is not None
