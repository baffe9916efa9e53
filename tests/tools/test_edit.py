# ruff: noqa: ASYNC230, ASYNC240  (blocking file I/O is fine in these tests)
from __future__ import annotations

from pathlib import Path

import pytest

from agentls.tools.base import PermissionDenied, ToolError
from agentls.tools.edit import EditTool
from agentls.tools.read import ReadTool
from tests.tools.conftest import RunTool, ToolTestContext

edit = EditTool()
read = ReadTool()

SOURCE = """\
def greet(name):
    message = "hello " + name
    print(message)
    return message


def main():
    greet("world")
"""


@pytest.fixture
async def app(root: Path, run: RunTool) -> Path:
    path = root / "app.py"
    path.write_text(SOURCE)
    await run(read, path="app.py")
    return path


async def test_replaces_once_and_shows_snippet(
    app: Path, run: RunTool, ctx: ToolTestContext
) -> None:
    result = await run(
        edit,
        path="app.py",
        old_string="    print(message)\n",
        new_string="    print(message.upper())\n    log(message)\n",
    )
    assert not result.is_error
    assert result.output.startswith("Edited app.py: replaced 1 occurrence.")
    assert "     3\t    print(message.upper())" in result.output
    assert "     4\t    log(message)" in result.output
    assert "     1\tdef greet(name):" in result.output  # context before
    assert app.read_text() == SOURCE.replace(
        "    print(message)\n", "    print(message.upper())\n    log(message)\n"
    )
    q = ctx.queries[-1]
    assert q.tool == "edit" and q.subject == "app.py" and q.diff is not None
    assert q.diff.startswith("--- a/app.py\n+++ b/app.py\n")
    assert "-    print(message)\n+    print(message.upper())\n+    log(message)\n" in q.diff
    # The ledger holds the new text: a second edit needs no re-read.
    second = await run(edit, path="app.py", old_string="log(message)", new_string="log(name)")
    assert not second.is_error and "changed since" not in second.output


async def test_unread_file_refused_without_asking(
    root: Path, run: RunTool, ctx: ToolTestContext
) -> None:
    (root / "a.py").write_text("x = 1\n")
    with pytest.raises(ToolError, match="not read"):
        await run(edit, path="a.py", old_string="x = 1", new_string="x = 2")
    assert ctx.queries == []
    assert (root / "a.py").read_text() == "x = 1\n"


async def test_not_found(app: Path, run: RunTool) -> None:
    with pytest.raises(ToolError) as info:
        await run(edit, path="app.py", old_string="completely unrelated text zzz", new_string="y")
    assert "not found" in str(info.value)
    assert app.read_text() == SOURCE


async def test_not_found_but_matches_ignoring_whitespace(app: Path, run: RunTool) -> None:
    with pytest.raises(ToolError) as info:
        await run(
            edit,
            path="app.py",
            old_string='  message = "hello " + name\n  print(message)',
            new_string="x",
        )
    message = str(info.value)
    assert "not found" in message
    assert "whitespace" in message and "lines 2-3" in message
    assert '     2\t    message = "hello " + name' in message


async def test_not_found_shows_closest_lines(app: Path, run: RunTool) -> None:
    with pytest.raises(ToolError) as info:
        await run(edit, path="app.py", old_string='    mesage = "helo " + name', new_string="x")
    assert "most similar" in str(info.value)
    assert '     2\t    message = "hello " + name' in str(info.value)


async def test_line_number_prefix_hint(app: Path, run: RunTool) -> None:
    with pytest.raises(ToolError, match="line-number prefixes"):
        await run(edit, path="app.py", old_string="     3\t    print(message)", new_string="x")


async def test_ambiguous_match(root: Path, run: RunTool) -> None:
    (root / "d.py").write_text("x = 1\ny = 2\nx = 1\nx = 1\n")
    await run(read, path="d.py")
    with pytest.raises(ToolError) as info:
        await run(edit, path="d.py", old_string="x = 1", new_string="x = 9")
    message = str(info.value)
    assert "3 times" in message and "1, 3, 4" in message and "replace_all" in message
    result = await run(edit, path="d.py", old_string="x = 1", new_string="x = 9", replace_all=True)
    assert "replaced 3 occurrences" in result.output
    assert (root / "d.py").read_text() == "x = 9\ny = 2\nx = 9\nx = 9\n"


async def test_identical_strings_refused(app: Path, run: RunTool) -> None:
    with pytest.raises(ToolError, match="identical"):
        await run(edit, path="app.py", old_string="greet", new_string="greet")


async def test_empty_old_string_on_existing_file(app: Path, run: RunTool) -> None:
    with pytest.raises(ToolError, match="use write"):
        await run(edit, path="app.py", old_string="", new_string="x")


async def test_empty_old_string_creates_missing_file(root: Path, run: RunTool) -> None:
    result = await run(edit, path="new/mod.py", old_string="", new_string="VALUE = 1\n")
    assert result.output.startswith("Created new/mod.py")
    assert (root / "new/mod.py").read_text() == "VALUE = 1\n"


async def test_missing_file(root: Path, run: RunTool) -> None:
    (root / "util.py").write_text("")
    with pytest.raises(ToolError, match=r"not found.*util\.py"):
        await run(edit, path="utils.py", old_string="a", new_string="b")


async def test_changed_since_read_still_applies_with_note(app: Path, run: RunTool) -> None:
    app.write_text(SOURCE + "\n# added by the user\n")
    result = await run(edit, path="app.py", old_string='greet("world")', new_string='greet("you")')
    assert not result.is_error
    assert "changed since you last read it" in result.output
    assert (
        app.read_text()
        == SOURCE.replace('greet("world")', 'greet("you")') + "\n# added by the user\n"
    )


async def test_changed_since_read_and_no_longer_matching(app: Path, run: RunTool) -> None:
    app.write_text(SOURCE.replace('greet("world")', 'greet("moon")'))
    with pytest.raises(ToolError, match="not found"):
        await run(edit, path="app.py", old_string='greet("world")', new_string='greet("you")')


async def test_crlf_preserved(root: Path, run: RunTool) -> None:
    path = root / "win.txt"
    path.write_bytes(b"first\r\nsecond\r\nthird\r\n")
    await run(read, path="win.txt")
    await run(edit, path="win.txt", old_string="first\nsecond\n", new_string="1st\n2nd\nextra\n")
    assert path.read_bytes() == b"1st\r\n2nd\r\nextra\r\nthird\r\n"


async def test_unicode(root: Path, run: RunTool) -> None:
    path = root / "u.txt"
    path.write_text("größe = 1\nname = 'ñandú'\n", encoding="utf-8")
    await run(read, path="u.txt")
    result = await run(edit, path="u.txt", old_string="'ñandú'", new_string="'日本'")
    assert "     2\tname = '日本'" in result.output
    assert path.read_text(encoding="utf-8") == "größe = 1\nname = '日本'\n"


async def test_permission_denied(app: Path, run: RunTool, ctx: ToolTestContext) -> None:
    ctx.deny_feedback = "no"
    with pytest.raises(PermissionDenied):
        await run(edit, path="app.py", old_string="main", new_string="entry")
    assert app.read_text() == SOURCE
    assert ctx.queries[-1].diff is not None and "+def entry():" in ctx.queries[-1].diff


async def test_checks_come_before_permission(app: Path, run: RunTool, ctx: ToolTestContext) -> None:
    ctx.deny_feedback = "should never be asked"
    asked = len(ctx.queries)
    with pytest.raises(ToolError) as info:
        await run(edit, path="app.py", old_string="nope nope", new_string="x")
    assert not isinstance(info.value, PermissionDenied)
    assert len(ctx.queries) == asked
