"""Custom commands (/NAME args): templates from the user's and a trusted workspace's
.agentls/commands, $ARGUMENTS, front matter, @path attachments through the read rules, and the
built-ins, through the loop against the local Messages API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentls.config import load_settings
from agentls.session import CommandError
from agentls.session.commands import parse_command, parse_invocation
from agentls.trust import TrustStore, workspace_config
from messages_api import MessagesAPIServer, reply, text
from tests.conftest import Harness, HarnessFactory

BASE = {"model": "claude-sonnet-5-5", "apiRetryBaseDelayS": 0.01, "sandbox": "off"}


def user_text(body: dict[str, Any]) -> str:
    """Every text block of the request's last (user) message."""
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in content if b.get("type") == "text")


def write_command(directory: Path, name: str, body: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.md").write_text(body)


def trust(h: Harness, trusted: bool = True) -> None:
    h.agent.update_settings(load_settings(h.root, BASE, workspace_trusted=trusted))


@pytest.fixture
def user_commands(_isolated_config_home: Path) -> Path:
    return _isolated_config_home / "commands"


def test_invocations_and_front_matter() -> None:
    assert parse_invocation("/review  the parser\nplease") == ("review", "the parser\nplease")
    assert parse_invocation("/compact") == ("compact", "")
    assert parse_invocation("/usr/bin/env is odd") is None
    assert parse_invocation("fix /this") is None
    command = parse_command(
        "t",
        "user",
        "---\ndescription: 'Write tests'\nmodel: claude-haiku-4-5\nother: x\n---\nDo $ARGUMENTS\n",
    )
    assert (command.description, command.model, command.template) == (
        "Write tests",
        "claude-haiku-4-5",
        "Do $ARGUMENTS",
    )
    # Without a front matter the description is the first line.
    assert parse_command("t", "user", "\nExplain it.\nMore.").description == "Explain it."


async def test_a_user_command_expands_with_arguments_and_reaches_the_model(
    make_harness: HarnessFactory, api: MessagesAPIServer, user_commands: Path
) -> None:
    write_command(
        user_commands,
        "review",
        "---\ndescription: Review a file\n---\nReview $ARGUMENTS for bugs. Then $ARGUMENTS again.",
    )
    write_command(user_commands, "plain", "Summarize the repository.")
    write_command(user_commands, "Bad Name", "never listed")
    dotfiles = user_commands.parent.parent / "dotfiles"
    write_command(dotfiles, "linked", "Kept with the dotfiles")
    (user_commands / "linked.md").symlink_to(dotfiles / "linked.md")  # the user's own: followed
    h = await make_harness()
    commands = h.agent.list_commands()
    assert list(commands) == ["clear", "compact", "linked", "model", "plain", "review"]
    assert commands["review"].description == "Review a file"
    assert commands["review"].source == "user"
    api.enqueue(reply(text("looks fine")), reply(text("summary")))
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "/review parser.py")
    assert result.text == "looks fine"
    assert user_text(h.accepted_requests()[0]) == "Review parser.py for bugs. Then parser.py again."
    # Arguments to a template that does not name them are appended.
    await h.agent.prompt(session.id, "/plain briefly")
    assert user_text(h.accepted_requests()[1]) == "Summarize the repository.\n\nbriefly"
    # What was sent is what is stored.
    messages = await h.agent.messages(session.id)
    assert messages[0].text() == "Review parser.py for bugs. Then parser.py again."


async def test_front_matter_model_runs_that_turn_on_it(
    make_harness: HarnessFactory, api: MessagesAPIServer, user_commands: Path
) -> None:
    write_command(user_commands, "quick", "---\nmodel: claude-haiku-4-5\n---\nQuick: $ARGUMENTS")
    h = await make_harness()
    api.enqueue(reply(text("a")), reply(text("b")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "/quick go")
    await h.agent.prompt(session.id, "and now")
    first, second = h.accepted_requests()
    assert first["model"] == "claude-haiku-4-5"
    assert second["model"] == "claude-sonnet-5-5"  # the session's own model is unchanged


async def test_at_path_attaches_the_file(
    make_harness: HarnessFactory, api: MessagesAPIServer, user_commands: Path
) -> None:
    write_command(user_commands, "explain", "Explain @src/app.py and $ARGUMENTS")
    h = await make_harness()
    (h.root / "src").mkdir()
    (h.root / "src" / "app.py").write_text("def main():\n    return 42\n")
    (h.root / "notes.md").write_text("the notes\n")
    api.enqueue(reply(text("ok")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "/explain @notes.md, mail me at a@b.c")
    body = h.accepted_requests()[0]
    sent = str(body["messages"][-1]["content"])
    assert "return 42" in sent and "the notes" in sent
    [message] = [m for m in await h.agent.messages(session.id) if m.role == "user"]
    uris = [p.uri for p in message.parts if p.type == "context"]
    assert uris == [(h.root / "src" / "app.py").as_uri(), (h.root / "notes.md").as_uri()]


@pytest.mark.parametrize(
    ("reference", "why"),
    [("@.env", "not read without asking"), ("@../outside.txt", "outside the workspace")],
)
async def test_at_path_to_a_secret_or_outside_is_refused_and_nothing_is_sent(
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    user_commands: Path,
    reference: str,
    why: str,
) -> None:
    write_command(user_commands, "leak", f"Look at {reference}")
    h = await make_harness()
    (h.root / ".env").write_text("API_KEY=secret\n")
    (h.root.parent / "outside.txt").write_text("private\n")
    session = await h.agent.new_session()
    with pytest.raises(CommandError, match=why):
        await h.agent.prompt(session.id, "/leak")
    assert api.all_requests == []
    assert await h.agent.messages(session.id) == []


async def test_a_denied_file_is_refused(
    make_harness: HarnessFactory, api: MessagesAPIServer, user_commands: Path
) -> None:
    write_command(user_commands, "see", "See @private/a.txt")
    h = await make_harness({"permissions": {"read": {"private/**": "deny"}}})
    (h.root / "private").mkdir()
    (h.root / "private" / "a.txt").write_text("x\n")
    session = await h.agent.new_session()
    with pytest.raises(CommandError, match="denied"):
        await h.agent.prompt(session.id, "/see")
    assert api.all_requests == []


async def test_workspace_commands_count_only_when_trusted(
    make_harness: HarnessFactory, api: MessagesAPIServer, user_commands: Path
) -> None:
    write_command(user_commands, "hello", "Hello from the user")
    h = await make_harness()
    commands_dir = h.root / ".agentls" / "commands"
    write_command(commands_dir, "hello", "Hello from the workspace")
    write_command(commands_dir, "deploy", "Deploy everything")
    write_command(commands_dir, "clear", "a workspace command never shadows a built-in")
    (h.root / "secret.txt").write_text("not a command\n")
    (commands_dir / "steal.md").symlink_to(h.root / "secret.txt")  # a link out: never read
    trust(h, trusted=False)
    assert "deploy" not in h.agent.list_commands()
    assert h.agent.list_commands()["hello"].source == "user"
    session = await h.agent.new_session()
    with pytest.raises(CommandError, match="unknown command /deploy"):
        await h.agent.prompt(session.id, "/deploy")
    assert api.all_requests == []
    trust(h)
    commands = h.agent.list_commands()
    assert commands["deploy"].source == "workspace"
    assert commands["hello"].template == "Hello from the workspace"
    assert commands["clear"].source == "builtin"
    assert "steal" not in commands
    api.enqueue(reply(text("done")))
    await h.agent.prompt(session.id, "/deploy")
    assert user_text(h.accepted_requests()[0]) == "Deploy everything"


async def test_unknown_command_lists_the_known_ones(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    session = await h.agent.new_session()
    with pytest.raises(CommandError) as info:
        await h.agent.prompt(session.id, "/nope x")
    assert "/clear, /compact, /model" in str(info.value)
    assert api.all_requests == []


async def test_builtins_model_and_clear(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    session = await h.agent.new_session()
    shown = await h.agent.prompt(session.id, "/model")
    assert shown.text == "The model is claude-sonnet-5-5."
    changed = await h.agent.prompt(session.id, "/model claude-haiku-4-5")
    assert changed.text == "The model is now claude-haiku-4-5."
    record = await h.store.get_session(session.id)
    assert record is not None and record.model == "claude-haiku-4-5"
    cleared = await h.agent.prompt(session.id, "/clear")
    assert cleared.session_id != session.id
    new = await h.store.get_session(cleared.session_id)
    assert new is not None and new.model == "claude-haiku-4-5"
    assert api.all_requests == []


async def test_compact_now_summarizes_and_the_next_turn_starts_from_it(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    session = await h.agent.new_session()
    nothing = await h.agent.prompt(session.id, "/compact")
    assert nothing.text == "Nothing to compact yet."
    api.enqueue(reply(text("first answer")), reply(text("second answer")))
    await h.agent.prompt(session.id, "first question")
    await h.agent.prompt(session.id, "second question")
    api.enqueue(reply(text("SUMMARY: two questions answered")), reply(text("third answer")))
    result = await h.agent.prompt(session.id, "/compact")
    assert result.text.startswith("Compacted")
    assert [e.status for e in h.of_type("compaction")] == ["started", "done"]
    await h.agent.prompt(session.id, "third question")
    last = h.accepted_requests()[-1]
    sent = str(last["messages"])
    assert "SUMMARY: two questions answered" in sent
    assert "first question" not in sent and "second answer" in sent


async def test_agentls_trust_of_the_workspace_config_trusts_its_commands(
    make_harness: HarnessFactory,
) -> None:
    h = await make_harness()
    write_command(h.root / ".agentls" / "commands", "deploy", "Deploy everything")
    config = workspace_config(h.root)
    config.write_text("{}")
    assert not load_settings(h.root, BASE).workspace_trusted
    TrustStore().trust(config, config.read_bytes())  # what `agentls trust DIR` records
    h.agent.update_settings(load_settings(h.root, BASE))
    assert h.agent.list_commands()["deploy"].source == "workspace"
    config.write_text('{"maxSteps": 3}')  # changed since: untrusted again
    h.agent.update_settings(load_settings(h.root, BASE))
    assert "deploy" not in h.agent.list_commands()
