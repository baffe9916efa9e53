"""Revert, unrevert and `agentls rewind` against a hostile model that turns a file it wrote into a
link out of the workspace before the user reverts, other sessions' and assistants' messages, an
unsaved buffer and a running turn. Real `agentls serve` processes over stdio, `agentls rewind` as
a process; each attack is counted in the security table."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.cli.test_cli import agentls
from tests.lsp.editor import Editor
from tests.security.conftest import SecurityFigures
from tests.security.edits.support import (
    PAYLOAD,
    REVERT,
    refused,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")


# ---- revert, unrevert, rewind -----------------------------------------------------------------


async def user_ids(editor: Editor, session: str) -> list[str]:
    result = await editor.request("agent/getMessages", {"sessionId": session})
    return [m["id"] for m in result["messages"] if m["role"] == "user"]


async def assistant_ids(editor: Editor, session: str) -> list[str]:
    result = await editor.request("agent/getMessages", {"sessionId": session})
    return [m["id"] for m in result["messages"] if m["role"] == "assistant"]


async def test_a_revert_never_writes_through_a_link_the_agent_left(
    plain: Editor, api: MessagesAPIServer, root: Path, security_figures: SecurityFigures
) -> None:
    """The repository's a.txt holds a payload; the model writes a.txt with the text of the
    user's ~/.bashrc (which it could read), then a bash line turns a.txt into a link to
    ~/.bashrc. The user reverts that turn: a.txt "is still the agent's text" when read through
    the link, and its text from before is the payload. Nothing may be written through it."""
    editor, ws = plain, plain.root
    home = root / "home"
    home.mkdir()
    bashrc = home / ".bashrc"
    bashrc.write_text("alias ll='ls -l'\n")
    (ws / "a.txt").write_text(PAYLOAD)
    (ws / "d.txt").write_text("d\n")
    api.enqueue(
        reply(tool_use("read", {"path": "a.txt"}), tool_use("read", {"path": "d.txt"})),
        reply(tool_use("write", {"path": "a.txt", "content": bashrc.read_text()})),
        reply(tool_use("write", {"path": "d.txt", "content": "agent\n"})),
        reply(tool_use("bash", {"command": f"ln -sf {bashrc} a.txt && rm d.txt && mkdir d.txt"})),
        reply(text("done")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "tidy up")
    assert (ws / "a.txt").is_symlink() and (ws / "d.txt").is_dir()
    [first] = await user_ids(editor, session)
    for scope in ("code", "both"):
        with security_figures.attempt(REVERT):
            preview = await editor.request(
                "agent/revert",
                {"sessionId": session, "messageId": first, "scope": scope, "dryRun": True},
            )
            assert preview["files"] == [], preview
            done = await editor.request(
                "agent/revert", {"sessionId": session, "messageId": first, "scope": scope}
            )
            assert bashrc.read_text() == "alias ll='ls -l'\n"
            assert (ws / "a.txt").is_symlink() and (ws / "d.txt").is_dir()
            assert sorted(c["path"] for c in done["conflicts"]) == sorted(
                [editor.uri("a.txt"), editor.uri("d.txt")]
            ), done
            if scope == "code":
                await editor.request("agent/unrevert", {"sessionId": session})


async def test_an_unrevert_never_writes_through_a_link_either(
    plain: Editor, api: MessagesAPIServer, root: Path, security_figures: SecurityFigures
) -> None:
    """After a revert put b.txt back, it becomes a link to a file outside that holds b.txt's
    text from before the revert: a redo must not write the agent's text into it."""
    editor, ws = plain, plain.root
    target = root / "home" / "profile"
    (ws / "b.txt").write_text("before\n")
    api.enqueue(
        reply(tool_use("read", {"path": "b.txt"})),
        reply(tool_use("write", {"path": "b.txt", "content": PAYLOAD})),
        reply(text("done")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "write b")
    [first] = await user_ids(editor, session)
    reverted = await editor.request(
        "agent/revert", {"sessionId": session, "messageId": first, "scope": "code"}
    )
    assert reverted["files"] == [editor.uri("b.txt")] and (ws / "b.txt").read_text() == "before\n"
    target.write_text("before\n")
    (ws / "b.txt").unlink()
    (ws / "b.txt").symlink_to(target)
    with security_figures.attempt(REVERT):
        redone = await editor.request("agent/unrevert", {"sessionId": session})
        assert target.read_text() == "before\n" and (ws / "b.txt").is_symlink()
        assert [c["path"] for c in redone["conflicts"]] == [editor.uri("b.txt")], redone


async def test_a_revert_takes_only_the_sessions_own_user_messages(
    plain: Editor, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    editor, ws = plain, plain.root
    api.enqueue(reply(tool_use("write", {"path": "c.txt", "content": "c\n"})), reply(text("one")))
    session = await editor.new_session()
    await editor.prompt(session, "write c")
    api.enqueue(reply(text("two")))
    other = await editor.new_session()
    await editor.prompt(other, "hello")
    [mine], [theirs] = await user_ids(editor, session), await user_ids(editor, other)
    answer = (await assistant_ids(editor, session))[0]
    attempts = [
        ({"sessionId": other, "messageId": mine}, "messageId"),  # another session's message
        ({"sessionId": session, "messageId": theirs}, "messageId"),
        ({"sessionId": session, "messageId": answer}, "messageId"),  # not the user's
        ({"sessionId": session, "messageId": "msg_nope"}, "messageId"),
        ({"sessionId": "ses_nope", "messageId": mine}, "sessionId"),
        ({"sessionId": session, "messageId": mine, "scope": "everything"}, "scope"),
    ]
    for params, field_ in attempts:
        with security_figures.attempt(REVERT):
            await refused(editor, "agent/revert", params, field_)
            assert (ws / "c.txt").read_text() == "c\n"
    # Unrevert after a new prompt: nothing to redo (the files stay as the new turn left them).
    await editor.request("agent/revert", {"sessionId": session, "messageId": mine})
    assert not (ws / "c.txt").exists()
    api.enqueue(reply(tool_use("write", {"path": "c.txt", "content": "new\n"})), reply(text("ok")))
    await editor.prompt(session, "again")
    with security_figures.attempt(REVERT):
        await refused(editor, "agent/unrevert", {"sessionId": session}, "nothing to redo")
        assert (ws / "c.txt").read_text() == "new\n"
    with security_figures.attempt(REVERT):
        await refused(editor, "agent/unrevert", {"sessionId": other}, "nothing to redo")


async def test_reverting_to_a_reverted_message_writes_nothing_and_keeps_the_redo(
    plain: Editor, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    editor, ws = plain, plain.root
    api.enqueue(reply(tool_use("write", {"path": "r.txt", "content": "one\n"})), reply(text("1")))
    session = await editor.new_session()
    await editor.prompt(session, "write r")
    [first] = await user_ids(editor, session)
    await editor.request("agent/revert", {"sessionId": session, "messageId": first})
    assert not (ws / "r.txt").exists()
    (ws / "r.txt").write_text("the user's own\n")
    with security_figures.attempt(REVERT):
        try:
            again = await editor.request("agent/revert", {"sessionId": session, "messageId": first})
        except JsonRpcException as exc:
            assert "messageId" in exc.message, exc.message
            again = None
        assert (ws / "r.txt").read_text() == "the user's own\n", again
        (ws / "r.txt").unlink()
        redone = await editor.request("agent/unrevert", {"sessionId": session})
        assert redone["messageIds"] and (ws / "r.txt").read_text() == "one\n", redone


async def test_a_revert_leaves_an_unsaved_buffer_and_a_running_turn_alone(
    panel: Editor, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    editor, ws = panel, panel.root
    (ws / "u.txt").write_text("u = 1\n")
    api.enqueue(
        reply(tool_use("read", {"path": "u.txt"})),
        reply(tool_use("write", {"path": "u.txt", "content": "u = 2\n"})),
        reply(text("done")),
    )
    session = await editor.new_session()
    turn = asyncio.ensure_future(editor.prompt(session, "write u"))
    request = await editor.wait_event(session, "permission-request")
    await editor.request(
        "agent/approve",
        {"sessionId": session, "requestId": request["requestId"], "decision": "once"},
    )
    await asyncio.wait_for(turn, 20)
    [first] = await user_ids(editor, session)
    # The user types into the file and does not save: the revert must not overwrite that.
    editor.open("u.txt")
    editor.type_text("u.txt", "u = 2\nmine = True\n")
    with security_figures.attempt(REVERT):
        done = await editor.request(
            "agent/revert", {"sessionId": session, "messageId": first, "scope": "code"}
        )
        assert [c["current"] for c in done["conflicts"]] == ["u = 2\nmine = True\n"], done
        assert editor.buffers[editor.uri("u.txt")].text == "u = 2\nmine = True\n"
        assert (ws / "u.txt").read_text() == "u = 2\n"
    # A turn waiting on a question: the revert is refused while it runs.
    api.enqueue(reply(tool_use("write", {"path": "w.txt", "content": "w\n"})), reply(text("ok")))
    turn = asyncio.ensure_future(editor.prompt(session, "write w"))
    request = await editor.wait_event(session, "permission-request", count=2)
    with security_figures.attempt(REVERT):
        with pytest.raises(JsonRpcException, match="busy"):
            await editor.request("agent/revert", {"sessionId": session, "messageId": first})
        with pytest.raises(JsonRpcException, match="busy|nothing to redo"):
            await editor.request("agent/unrevert", {"sessionId": session})
        assert editor.buffers[editor.uri("u.txt")].text == "u = 2\nmine = True\n"
    await editor.request(
        "agent/approve",
        {"sessionId": session, "requestId": request["requestId"], "decision": "reject"},
    )
    await asyncio.wait_for(turn, 20)


async def test_agentls_rewind_never_writes_through_a_link(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path, security_figures: SecurityFigures
) -> None:
    """The same attack through `agentls run --yes` and `agentls rewind` (the disk workspace)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    bashrc = tmp_path / "home" / ".bashrc"
    bashrc.parent.mkdir()
    bashrc.write_text("alias ll='ls -l'\n")
    # A folder of the user's outside, with a file the agent's new one will match.
    keys = tmp_path / "home" / "keys"
    keys.mkdir()
    (keys / "x.txt").write_text("made\n")
    (ws / "a.txt").write_text(PAYLOAD)
    api.enqueue(
        reply(tool_use("read", {"path": "a.txt"})),
        reply(tool_use("write", {"path": "a.txt", "content": bashrc.read_text()})),
        reply(tool_use("write", {"path": "sub/x.txt", "content": "made\n"})),
        reply(
            tool_use("bash", {"command": f"ln -sf {bashrc} a.txt && rm -r sub && ln -s {keys} sub"})
        ),
        reply(text("done")),
    )
    run = agentls("run", "--cwd", str(ws), "--yes", "--json", "tidy", env=env)
    assert run.returncode == 0, run.stderr
    session = json.loads(run.stdout.splitlines()[-1])["sessionId"]
    assert (ws / "a.txt").is_symlink() and (ws / "sub").is_symlink()
    for args in (("--to", "1", "--scope", "code"), ("--to", "1")):
        with security_figures.attempt(REVERT):
            done = agentls("rewind", "--session", session, *args, env=env, cwd=ws)
            # Neither written through a.txt nor deleted through the linked folder sub.
            assert bashrc.read_text() == "alias ll='ls -l'\n", done.stdout
            assert (keys / "x.txt").exists(), done.stdout
            assert (ws / "a.txt").is_symlink()
            assert "conflict" in done.stdout + done.stderr, done.stdout
            if args[-1] == "code":
                agentls("rewind", "--session", session, "--redo", env=env, cwd=ws)


async def test_agentls_rewind_writes_the_versions_of_a_conflict_with_a_long_name(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path, security_figures: SecurityFigures
) -> None:
    """A path of three 200-character folders: the conflict's three versions are still written
    (a temporary file's name has at most 255 bytes), no traceback."""
    ws = tmp_path / "ws"
    ws.mkdir()
    deep = "/".join(c * 200 for c in "abc") + "/f.txt"
    api.enqueue(reply(tool_use("write", {"path": deep, "content": "agent\n"})), reply(text("done")))
    run = agentls("run", "--cwd", str(ws), "--yes", "--json", "write", env=env)
    assert run.returncode == 0, run.stderr
    session = json.loads(run.stdout.splitlines()[-1])["sessionId"]
    (ws / deep).write_text("mine\n")
    with security_figures.attempt(REVERT):
        done = agentls("rewind", "--session", session, "--to", "1", env=env, cwd=ws)
        assert "Traceback" not in done.stderr, done.stderr[-2000:]
        assert done.returncode == 1 and "conflict" in done.stdout, done.stdout + done.stderr
        assert (ws / deep).read_text() == "mine\n"
        copies = [
            line.split(": ", 1)[1]
            for line in done.stdout.splitlines()
            if line.startswith("  agent: ")
        ]
        assert [Path(c).read_text() for c in copies] == ["agent\n"], done.stdout
