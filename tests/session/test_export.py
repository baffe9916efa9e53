"""A session as Markdown: headings per message, fences that survive backticks in the content,
attachments and tool calls shown, thinking left out, reverted messages marked."""

from __future__ import annotations

from agentls.history import (
    ContextPart,
    Message,
    Position,
    Range,
    TextPart,
    ThinkingPart,
    ToolPart,
)
from agentls.session.export import session_markdown
from agentls.store import SessionRecord


def test_markdown_of_a_session() -> None:
    record = SessionRecord(id="ses_1", title="Fix", cwd="/w", model="m", created_at=0, updated_at=0)
    messages = [
        Message(
            id="msg_1",
            session_id="ses_1",
            role="user",
            created_at=0,
            parts=[
                TextPart(text="Fix a.py"),
                ContextPart(
                    uri="file:///w/a.py",
                    range=Range(
                        start=Position(line=0, character=0), end=Position(line=1, character=0)
                    ),
                    text="x = 1",
                ),
            ],
        ),
        Message(
            id="msg_2",
            session_id="ses_1",
            role="assistant",
            created_at=0,
            parts=[
                ThinkingPart(text="secret musing"),
                ToolPart(
                    call_id="t",
                    tool="bash",
                    input={"command": "cat README.md"},
                    status="completed",
                    output="```python\nprint(1)\n```",
                ),
                TextPart(text="Done."),
            ],
        ),
        Message(
            id="msg_3",
            session_id="ses_1",
            role="user",
            created_at=0,
            parts=[TextPart(text="undo")],
            reverted=True,
        ),
    ]
    md = session_markdown(record, messages)
    assert md.startswith("# Fix\n\nSession `ses_1` · model `m` · started 1970-01-01 00:00 UTC\n")
    assert "## User\n\nFix a.py\n\nAttached: file:///w/a.py (lines 1-2)\n\n```\nx = 1\n```" in md
    # The output holds a ``` fence: it is fenced with four backticks, so it stays one block.
    assert "**Tool `bash`** (completed)" in md
    assert "````\n```python\nprint(1)\n```\n````" in md
    assert "secret musing" not in md
    assert md.index("cat README.md") < md.index("Done.")
    assert "## User (reverted)\n\nundo\n" in md
